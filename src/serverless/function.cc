#include "serverless/function.h"

#include <fmt/format.h>

#include <regex>

#include "api/object_meta.h"
#include "client/custom_resource_definitions.h"
#include "common/json_pointer.h"
#include "common/time_util.h"
#include "common/yaml_json.h"

namespace minik8s::serverless {

const client::Resource kFunctions{kGroup, "v1", "functions", true};

namespace {

// The kind's schema. Defaults live here (the API server fills them on create), and
// parseFunctionSpec applies the same ones to objects that predate a default.
constexpr const char* kCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: functions.serverless.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: serverless.minik8s.io
  scope: Namespaced
  names:
    plural: functions
    singular: function
    kind: Function
    listKind: FunctionList
    shortNames: [fn]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: URL, type: string, jsonPath: .status.url}
    - {name: Ready, type: integer, jsonPath: .status.readyReplicas}
    - {name: Reason, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1}
    - {name: Handler, type: string, jsonPath: .spec.handler, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A Python handler served over HTTP by pods the gateway scales, down to zero.
        properties:
          spec:
            type: object
            required: [handler, code]
            properties:
              runtime: {type: string, enum: [python3], default: python3, description: The language runtime}
              handler:
                type: string
                pattern: '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$'
                description: 'module.function called with the request''s JSON body, e.g. handler.handle'
              code:
                type: object
                required: [configMap]
                description: Where the code is.
                properties:
                  configMap: {type: string, minLength: 1, description: 'A ConfigMap with one .py file, or bundle.zip (modules and pure-Python packages)'}
              env:
                type: array
                description: Environment variables of the function's process
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string, pattern: '^[-._a-zA-Z][-._a-zA-Z0-9]*$'}
                    value: {type: string}
              resources:
                type: object
                description: The instance container's requests and limits
                properties:
                  requests: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
                  limits: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
              containerConcurrency: {type: integer, minimum: 0, default: 0, description: 'Most requests one instance handles at once (0 = unlimited)'}
              scale:
                type: object
                default: {}
                properties:
                  minScale: {type: integer, minimum: 0, default: 0, description: Fewest instances (0 = scale to zero when idle)}
                  maxScale: {type: integer, minimum: 1, default: 10, description: Most instances}
                  targetConcurrency: {type: integer, minimum: 1, default: 10, description: In-flight requests per instance the autoscaler aims at}
                  scaleToZeroAfter: {type: string, pattern: '^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$', default: 30s, description: 'Idle time before the last instance goes, e.g. 30s, 5m'}
              timeoutSeconds: {type: integer, minimum: 1, maximum: 900, default: 30, description: Longest a request may take (also the wait for a cold start)}
          status:
            type: object
            properties:
              url: {type: string}
              replicas: {type: integer}
              readyReplicas: {type: integer}
              image: {type: string}
              codeRevision: {type: string, description: The code ConfigMap's resourceVersion the instances run}
              observedGeneration: {type: integer}
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
)";

bool isIdentifier(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]*");
  return std::regex_match(s, re);
}

json ownerReference(const json& function) {
  return {{"apiVersion", kApiVersion},   {"kind", "Function"}, {"name", api::nameOf(function)},
          {"uid", api::uidOf(function)}, {"controller", true}, {"blockOwnerDeletion", true}};
}

}  // namespace

json functionCrd() {
  static const json crd = [] {
    auto parsed = parseYaml(kCrdYaml);
    return parsed.ok() ? *parsed : json::object();
  }();
  return crd;
}

Status ensureFunctionCrd(client::RestClient& rest) {
  return client::ensureCustomResourceDefinition(rest, functionCrd());
}

Status validateHandler(const std::string& handler, const std::string& field) {
  const size_t dot = handler.rfind('.');
  bool ok = dot != std::string::npos && dot > 0 && dot + 1 < handler.size();
  for (size_t start = 0; ok && start <= handler.size();) {
    size_t end = handler.find('.', start);
    if (end == std::string::npos) end = handler.size();
    ok = isIdentifier(handler.substr(start, end - start));
    start = end + 1;
  }
  if (ok) return {};
  return Status::BadRequest(field + ": Invalid value: \"" + handler +
                            "\": must be module.function (Python identifiers), e.g. "
                            "handler.handle");
}

Result<FunctionSpec> parseFunctionSpec(const json& obj) {
  const json spec = obj.value("spec", json::object());
  if (!spec.is_object()) return Status::BadRequest("spec: must be an object");
  FunctionSpec out;
  auto str = [](const json& o, const char* key, std::string def) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : def;
  };
  auto num = [](const json& o, const char* key, int def) {
    auto it = o.find(key);
    return it != o.end() && it->is_number_integer() ? it->get<int>() : def;
  };
  out.runtime = str(spec, "runtime", "python3");
  if (out.runtime != "python3") {
    return Status::BadRequest("spec.runtime: Unsupported value: \"" + out.runtime +
                              "\": supported values: \"python3\"");
  }
  out.handler = str(spec, "handler", "");
  if (out.handler.empty()) return Status::BadRequest("spec.handler: Required value");
  if (Status s = validateHandler(out.handler); !s.ok()) return s;
  out.codeConfigMap = str(spec.value("code", json::object()), "configMap", "");
  if (out.codeConfigMap.empty()) return Status::BadRequest("spec.code.configMap: Required value");
  if (spec.contains("env") && spec["env"].is_array()) out.env = spec["env"];
  if (spec.contains("resources") && spec["resources"].is_object()) {
    out.resources = spec["resources"];
  }
  out.containerConcurrency = num(spec, "containerConcurrency", 0);
  out.timeoutSeconds = num(spec, "timeoutSeconds", 30);
  const json scale = spec.value("scale", json::object());
  ScaleSettings& s = out.scale;
  s.minScale = num(scale, "minScale", 0);
  s.maxScale = num(scale, "maxScale", 10);
  s.targetConcurrency = num(scale, "targetConcurrency", 10);
  const std::string idle = str(scale, "scaleToZeroAfter", "30s");
  auto d = parseGoDuration(idle);
  if (!d) {
    return Status::BadRequest("spec.scale.scaleToZeroAfter: Invalid value: \"" + idle +
                              "\": want a duration such as 30s or 5m");
  }
  s.scaleToZeroAfter = *d;
  if (out.containerConcurrency < 0) {
    return Status::BadRequest("spec.containerConcurrency: must be 0 (unlimited) or more");
  }
  if (out.timeoutSeconds < 1) return Status::BadRequest("spec.timeoutSeconds: must be at least 1");
  if (s.minScale < 0 || s.maxScale < 1 || s.targetConcurrency < 1) {
    return Status::BadRequest(
        "spec.scale: minScale must be >= 0, maxScale and targetConcurrency >= 1");
  }
  if (s.minScale > s.maxScale) {
    return Status::BadRequest(fmt::format(
        "spec.scale.minScale: Invalid value: {}: must be less than or equal to maxScale ({})",
        s.minScale, s.maxScale));
  }
  return out;
}

std::string deploymentName(const std::string& function) { return function + "-fn"; }

std::string functionUrl(const std::string& ns, const std::string& name) {
  return fmt::format("http://{}.{}.svc.cluster.local/function/{}/{}", kGatewayService,
                     kGatewayNamespace, ns, name);
}

std::string stableHash(const std::string& text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

json functionDeployment(const json& fn, const FunctionSpec& spec, const std::string& image,
                        const std::string& codeRevision, int replicas) {
  const std::string name = api::nameOf(fn);
  const json labels = {{kFunctionLabel, name}};
  json env = json::array(
      {{{"name", "HANDLER"}, {"value", spec.handler}},
       {{"name", "FUNCTION_NAME"}, {"value", name}},
       {{"name", "FUNCTION_TIMEOUT_SECONDS"}, {"value", std::to_string(spec.timeoutSeconds)}}});
  for (const auto& e : spec.env) {
    if (e.is_object() && e.contains("name")) {
      env.push_back({{"name", e["name"]}, {"value", e.value("value", std::string())}});
    }
  }
  json container = {
      {"name", "function"},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"env", env},
      {"ports", {{{"name", "http"}, {"containerPort", kRuntimePort}, {"protocol", "TCP"}}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", kRuntimePort}}},
        {"periodSeconds", 1},
        {"failureThreshold", 1}}},
      {"volumeMounts", {{{"name", "code"}, {"mountPath", kCodeMountPath}, {"readOnly", true}}}}};
  if (spec.resources.is_object() && !spec.resources.empty()) {
    container["resources"] = spec.resources;
  }
  json podSpec = {// A function never talks to the API server: no token to mount, a faster start.
                  {"automountServiceAccountToken", false},
                  {"enableServiceLinks", false},
                  {"terminationGracePeriodSeconds", spec.timeoutSeconds + 5},
                  {"containers", json::array({container})},
                  {"volumes", {{{"name", "code"}, {"configMap", {{"name", spec.codeConfigMap}}}}}}};
  json templ = {{"metadata",
                 {{"labels", labels}, {"annotations", {{kCodeRevisionAnnotation, codeRevision}}}}},
                {"spec", podSpec}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", deploymentName(name)},
            {"namespace", api::namespaceOf(fn)},
            {"labels", labels},
            {"annotations", {{kTemplateHashAnnotation, stableHash(templ.dump())}}},
            {"ownerReferences", json::array({ownerReference(fn)})}}},
          {"spec",
           {{"replicas", replicas}, {"selector", {{"matchLabels", labels}}}, {"template", templ}}}};
}

json functionService(const json& fn) {
  const std::string name = api::nameOf(fn);
  const json labels = {{kFunctionLabel, name}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", serviceName(name)},
        {"namespace", api::namespaceOf(fn)},
        {"labels", labels},
        {"ownerReferences", json::array({ownerReference(fn)})}}},
      {"spec",
       {{"type", "ClusterIP"},
        {"selector", labels},
        {"ports",
         {{{"name", "http"}, {"port", 80}, {"targetPort", kRuntimePort}, {"protocol", "TCP"}}}}}}};
}

json functionStatus(const json& fn, const FunctionObservation& o, const std::string& now) {
  const std::string ns = api::namespaceOf(fn), name = api::nameOf(fn);
  json status = {{"url", functionUrl(ns, name)},
                 {"observedGeneration", valueAt(fn, "/metadata/generation", 0)}};
  int replicas = 0, ready = 0;
  if (o.deployment) {
    replicas = valueAt(*o.deployment, "/status/replicas", 0);
    ready = valueAt(*o.deployment, "/status/readyReplicas", 0);
  }
  status["replicas"] = replicas;
  status["readyReplicas"] = ready;
  if (!o.image.empty()) status["image"] = o.image;
  if (!o.codeRevision.empty()) status["codeRevision"] = o.codeRevision;

  std::string cond = "True", reason, message;
  if (o.specError) {
    cond = "False", reason = "InvalidSpec", message = o.specError->message();
  } else if (o.codeMissing) {
    auto spec = parseFunctionSpec(fn);
    cond = "False", reason = "CodeMissing";
    message = "ConfigMap " + (spec.ok() ? spec->codeConfigMap : std::string("?")) +
              " (the function's code) not found in namespace " + ns;
  } else if (o.foreignDeployment) {
    cond = "False", reason = "NameConflict";
    message = "Deployment " + deploymentName(name) + " exists and is not this Function's";
  } else if (!o.importError.empty()) {
    cond = "False", reason = "ImportFailed", message = o.importError;
  } else if (ready > 0) {
    reason = "Ready";
    message = fmt::format("{} of {} instances ready", ready, replicas);
  } else if (!o.deployment || valueAt(*o.deployment, "/spec/replicas", 0) == 0) {
    reason = "ScaledToZero";
    message = "no instance runs; the first request starts one";
  } else {
    cond = "Unknown", reason = "Starting", message = "waiting for the first instance to be ready";
  }
  std::string since = now;
  for (const auto& c : valueAt(fn, "/status/conditions", json::array())) {
    if (c.value("type", "") == "Ready" && c.value("status", "") == cond) {
      since = c.value("lastTransitionTime", now);
    }
  }
  status["conditions"] = json::array({{{"type", "Ready"},
                                       {"status", cond},
                                       {"reason", reason},
                                       {"message", message},
                                       {"lastTransitionTime", since}}});
  return status;
}

Result<std::string> gatewayNodeUrl(client::RestClient& rest) {
  auto svc = rest.get(client::resources::kServices, kGatewayNamespace, kGatewayService);
  if (!svc.ok()) {
    if (svc.status().code() == 404) {
      return Status::NotFoundMessage(
          "the serverless gateway is not installed: run `minik8s addons apply serverless`");
    }
    return svc.status();
  }
  int nodePort = 0;
  for (const auto& p : valueAt(*svc, "/spec/ports", json::array())) {
    if (p.contains("nodePort")) nodePort = p.value("nodePort", 0);
  }
  if (nodePort == 0) return Status::NotFoundMessage("Service serverless/gateway has no nodePort");
  auto nodes = rest.list(client::resources::kNodes, "");
  if (!nodes.ok()) return nodes.status();
  for (const auto& node : nodes->value("items", json::array())) {
    bool ready = false;
    for (const auto& c : valueAt(node, "/status/conditions", json::array())) {
      if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True";
    }
    if (!ready) continue;
    for (const auto& a : valueAt(node, "/status/addresses", json::array())) {
      if (a.value("type", "") == "InternalIP") {
        return fmt::format("http://{}:{}", a.value("address", ""), nodePort);
      }
    }
  }
  return Status::Unavailable("no Ready node with an InternalIP to reach the gateway on");
}

Result<std::string> gatewayClusterUrl(client::RestClient& rest) {
  auto svc = rest.get(client::resources::kServices, kGatewayNamespace, kGatewayService);
  if (!svc.ok()) return svc.status();
  const std::string ip = valueAt(*svc, "/spec/clusterIP", std::string());
  int port = 80;
  for (const auto& p : valueAt(*svc, "/spec/ports", json::array())) {
    port = p.value("port", port);
    break;
  }
  if (ip.empty() || ip == "None") {
    return Status::NotFoundMessage("Service serverless/gateway has no clusterIP");
  }
  return fmt::format("http://{}:{}", ip, port);
}

}  // namespace minik8s::serverless
