#include "apiserver/auth/service_account_admission.h"

#include <thread>

#include "common/random.h"

namespace minik8s::apiserver::auth {
namespace {

bool mountsServiceAccountPath(const json& container) {
  auto mounts = container.find("volumeMounts");
  if (mounts == container.end() || !mounts->is_array()) return false;
  for (const json& m : *mounts) {
    if (m.is_object() && m.value("mountPath", "") == kServiceAccountMountPath) return true;
  }
  return false;
}

// The name of an api-access volume already in the pod (a re-submitted pod), or "".
std::string existingApiAccessVolume(const json& spec) {
  auto volumes = spec.find("volumes");
  if (volumes == spec.end() || !volumes->is_array()) return "";
  for (const json& v : *volumes) {
    if (!v.is_object()) continue;
    const std::string name = v.value("name", "");
    if (name.rfind(kApiAccessVolumePrefix, 0) == 0 && v.contains("projected")) return name;
  }
  return "";
}

std::optional<bool> boolField(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

}  // namespace

json apiAccessVolume(const std::string& name) {
  return {{"name", name},
          {"projected",
           {{"defaultMode", 420},
            {"sources",
             json::array(
                 {{{"serviceAccountToken",
                    {{"expirationSeconds", kApiAccessTokenExpirationSeconds}, {"path", "token"}}}},
                  {{"configMap",
                    {{"name", kRootCaConfigMap},
                     {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}},
                  {{"downwardAPI",
                    {{"items", json::array({{{"path", "namespace"},
                                             {"fieldRef",
                                              {{"apiVersion", "v1"},
                                               {"fieldPath", "metadata.namespace"}}}}})}}}}})}}}};
}

ServiceAccountAdmission::ServiceAccountAdmission(Registry& registry,
                                                 std::chrono::milliseconds waitForDefault,
                                                 std::function<std::string()> suffix,
                                                 std::shared_ptr<AdmissionLister> lister)
    : ListerBackedPlugin(registry, std::move(lister)),
      registry_(registry),
      waitForDefault_(waitForDefault),
      suffix_(std::move(suffix)) {
  if (!suffix_) suffix_ = [] { return randomSuffix(5); };
}

Status ServiceAccountAdmission::admit(AdmissionRequest& request) {
  const RequestInfo& ri = request.request;
  if (request.operation != "CREATE" || ri.resource != "pods" || !ri.group.empty() ||
      !ri.subresource.empty() || request.newObject == nullptr || !request.newObject->is_object()) {
    return Status::Ok();
  }
  json& pod = *request.newObject;
  if (!pod.contains("spec") || !pod["spec"].is_object()) return Status::Ok();  // validation's job
  json& spec = pod["spec"];
  // Mirror pods of static pods are not given an identity (as in Kubernetes).
  if (pod.contains("/metadata/annotations/kubernetes.io~1config.mirror"_json_pointer)) {
    return Status::Ok();
  }

  std::string saName = spec.value("serviceAccountName", "");
  if (saName.empty()) saName = spec.value("serviceAccount", "");
  if (saName.empty()) saName = "default";
  spec["serviceAccountName"] = saName;
  spec["serviceAccount"] = saName;

  std::string ns = ri.namespaceName;
  if (ns.empty() && pod.contains("metadata") && pod["metadata"].is_object()) {
    ns = pod["metadata"].value("namespace", "");
  }
  const api::ResourceInfo* saInfo = registry_.scheme().byResource("", "v1", "serviceaccounts");
  auto sa = lister_->get(*saInfo, ns, saName);
  const auto deadline = std::chrono::steady_clock::now() + waitForDefault_;
  while (!sa.ok() && sa.status().code() == 404 && saName == "default" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    sa = lister_->get(*saInfo, ns, saName);
  }
  if (!sa.ok()) {
    std::string podName;
    if (pod.contains("metadata") && pod["metadata"].is_object()) {
      podName = pod["metadata"].value("name", "");
    }
    const std::string why = sa.status().code() == 404
                                ? "serviceaccount \"" + saName + "\" not found"
                                : sa.status().message();
    return Status::Forbidden("pods \"" + podName + "\" is forbidden: error looking up service " +
                             "account " + ns + "/" + saName + ": " + why);
  }

  std::optional<bool> automount = boolField(spec, "automountServiceAccountToken");
  if (!automount) automount = boolField(**sa, "automountServiceAccountToken");
  if (automount.has_value() && !*automount) return Status::Ok();

  std::string volumeName = existingApiAccessVolume(spec);
  bool needed = false;
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (json& container : spec[list]) {
      if (!container.is_object() || mountsServiceAccountPath(container)) continue;
      if (volumeName.empty()) volumeName = kApiAccessVolumePrefix + suffix_();
      if (!container.contains("volumeMounts") || !container["volumeMounts"].is_array()) {
        container["volumeMounts"] = json::array();
      }
      container["volumeMounts"].push_back(
          {{"name", volumeName}, {"readOnly", true}, {"mountPath", kServiceAccountMountPath}});
      needed = true;
    }
  }
  if (needed && existingApiAccessVolume(spec).empty()) {
    if (!spec.contains("volumes") || !spec["volumes"].is_array()) spec["volumes"] = json::array();
    spec["volumes"].push_back(apiAccessVolume(volumeName));
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver::auth
