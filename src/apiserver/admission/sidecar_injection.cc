#include "apiserver/admission/sidecar_injection.h"

#include "api/object_meta.h"

namespace minik8s::apiserver::admission {

namespace {

json fieldEnv(const char* name, const char* fieldPath) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", fieldPath}}}}}};
}

}  // namespace

bool wantsSidecar(const json& pod, const std::string& ns, const json* namespaceObject,
                  bool enableNamespacesByDefault) {
  if (ns == "kube-system" || ns == "kube-public" || ns == "kube-node-lease") return false;
  if (pod.contains("/spec/hostNetwork"_json_pointer) &&
      pod.at("/spec/hostNetwork"_json_pointer) == true) {
    return false;
  }
  if (pod.contains("spec") && pod["spec"].contains("containers")) {
    for (const auto& c : pod["spec"]["containers"]) {
      if (c.is_object() && c.value("name", "") == "istio-proxy") return false;
    }
  }
  std::string annotation = api::stringAt(pod, "/metadata/annotations/sidecar.istio.io~1inject");
  if (annotation == "false") return false;
  if (annotation == "true") return true;
  const std::string label =
      namespaceObject != nullptr
          ? api::stringAt(*namespaceObject, "/metadata/labels/istio-injection")
          : "";
  if (label == "enabled") return true;
  return enableNamespacesByDefault && label != "disabled";
}

Result<std::shared_ptr<SidecarInjection>> SidecarInjection::fromConfig(
    Registry& registry, const json& config, std::shared_ptr<AdmissionLister> lister) {
  bool byDefault = false;
  if (config.is_object()) {
    for (const auto& [key, value] : config.items()) {
      if (key == "apiVersion" || key == "kind") continue;
      if (key != "enableNamespacesByDefault" || !value.is_boolean()) {
        return Status::BadRequest("configuration: unknown field or not a boolean: " + key +
                                  " (known: enableNamespacesByDefault)");
      }
      byDefault = value.get<bool>();
    }
  } else if (!config.is_null()) {
    return Status::BadRequest("configuration: expected an object");
  }
  return std::make_shared<SidecarInjection>(registry, byDefault, std::move(lister));
}

void injectSidecar(json& pod) {
  json& spec = pod["spec"];
  json init = {
      {"name", "istio-init"},
      {"image", kMeshProxyImage},
      {"imagePullPolicy", "IfNotPresent"},
      {"args", {"mesh-init", "--outbound-port=15001", "--inbound-port=15006", "--proxy-uid=1337"}},
      {"securityContext", {{"privileged", true}, {"runAsUser", 0}}},
  };
  json proxy = {
      {"name", "istio-proxy"},
      {"image", kMeshProxyImage},
      {"imagePullPolicy", "IfNotPresent"},
      {"args", {"mesh-proxy"}},
      {"securityContext", {{"runAsUser", 1337}, {"runAsGroup", 1337}}},
      {"env",
       {fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
        fieldEnv("POD_IP", "status.podIP")}},
      {"ports", {{{"name", "http-envoy-prom"}, {"containerPort", 15090}, {"protocol", "TCP"}}}},
  };
  json inits = json::array({init});
  if (spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (auto& c : spec["initContainers"]) inits.push_back(c);
  }
  spec["initContainers"] = std::move(inits);
  if (!spec.contains("containers") || !spec["containers"].is_array()) {
    spec["containers"] = json::array();
  }
  spec["containers"].push_back(std::move(proxy));
  json& annotations = pod["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  annotations["sidecar.istio.io/status"] = "injected";
  json& labels = pod["metadata"]["labels"];
  if (!labels.is_object()) labels = json::object();
  labels["security.istio.io/tlsMode"] = "disabled";
}

Status SidecarInjection::admit(auth::AdmissionRequest& request) {
  if (request.operation != "CREATE" || request.newObject == nullptr ||
      !request.request.group.empty() || request.request.resource != "pods" ||
      !request.request.subresource.empty()) {
    return Status::Ok();
  }
  json& pod = *request.newObject;
  std::string ns = request.request.namespaceName;
  if (ns.empty()) ns = api::stringAt(pod, "/metadata/namespace");
  AdmissionLister::Object namespaceObject;
  if (const auto* namespaces = registry_.scheme().byResource("", "v1", "namespaces")) {
    auto got = lister_->get(*namespaces, "", ns);
    if (got.ok()) namespaceObject = std::move(*got);
  }
  if (wantsSidecar(pod, ns, namespaceObject.get(), byDefault_)) {
    injectSidecar(pod);
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver::admission
