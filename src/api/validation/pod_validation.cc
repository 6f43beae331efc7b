// PodSpec validation shared by Pods and every pod template (Deployment, ReplicaSet, Job).
#include <map>
#include <set>
#include <string>

#include "api/quantity.h"
#include "api/volume_sources.h"
#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

const char* const kProbeHandlers[] = {"exec", "httpGet", "tcpSocket", "grpc"};
const std::vector<std::string> kPullPolicies = {"Always", "IfNotPresent", "Never"};
const std::vector<std::string> kRestartPolicies = {"Always", "OnFailure", "Never"};
const std::vector<std::string> kDNSPolicies = {"ClusterFirst", "ClusterFirstWithHostNet", "Default",
                                               "None"};
const std::vector<std::string> kTaintEffects = {"NoExecute", "NoSchedule", "PreferNoSchedule"};

// A string field that must be present (after defaulting) and one of `supported`.
void validateEnum(FieldErrors& errs, const json& obj, const char* name, const std::string& path,
                  const std::vector<std::string>& supported, bool required) {
  auto v = errs.string(obj, name, path);
  if (!v || v->empty()) {
    if (required && (v || absent(obj, name))) errs.required(path);
    return;
  }
  for (const auto& s : supported) {
    if (*v == s) return;
  }
  errs.notSupported(path, *v, supported);
}

void validateVolumeSource(FieldErrors& errs, const std::string& source, const json& src,
                          const std::string& path) {
  if (!src.is_object()) {
    errs.typeInvalid(path, src, "object");
    return;
  }
  auto requiredString = [&](const char* field) {
    auto v = errs.string(src, field, child(path, field));
    if (!v || v->empty()) errs.required(child(path, field));
  };
  if (source == "configMap") requiredString("name");
  if (source == "secret") requiredString("secretName");
  if (source == "hostPath") requiredString("path");
  if (source == "persistentVolumeClaim") requiredString("claimName");
  if (source == "configMap" || source == "secret" || source == "projected" ||
      source == "downwardAPI") {
    auto mode = errs.integer(src, "defaultMode", child(path, "defaultMode"));
    if (mode && (*mode < 0 || *mode > 0777)) {
      errs.invalid(child(path, "defaultMode"), *mode,
                   "must be a number between 0 and 0777 (octal), both inclusive");
    }
  }
}

// Returns the names of valid volumes, for volumeMounts to refer to.
std::set<std::string> validateVolumes(FieldErrors& errs, const json& volumes,
                                      const std::string& path) {
  std::set<std::string> names;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const json& vol = volumes[i];
    std::string p = index(path, i);
    if (!vol.is_object()) {
      errs.typeInvalid(p, vol, "object");
      continue;
    }
    auto name = errs.string(vol, "name", child(p, "name"));
    if (!name || name->empty()) {
      errs.required(child(p, "name"));
    } else {
      auto msgs = isDNS1123Label(*name);
      errs.invalidEach(child(p, "name"), *name, msgs);
      if (names.count(*name)) errs.duplicate(child(p, "name"), *name);
      names.insert(*name);
    }
    int sources = 0;
    for (const char* s : kVolumeSources) {
      const json* src = member(vol, s);
      if (!src || src->is_null()) continue;
      if (++sources > 1) {
        errs.forbidden(child(p, s), "may not specify more than 1 volume type");
      } else {
        validateVolumeSource(errs, s, *src, child(p, s));
      }
    }
    if (sources == 0) errs.required(p, "must specify a volume type");
  }
  return names;
}

void validatePorts(FieldErrors& errs, const json& ports, const std::string& path,
                   std::set<std::string>& hostPorts) {
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    const json& port = ports[i];
    std::string p = index(path, i);
    if (!port.is_object()) {
      errs.typeInvalid(p, port, "object");
      continue;
    }
    auto name = errs.string(port, "name", child(p, "name"));
    if (name && !name->empty()) {
      errs.invalidEach(child(p, "name"), *name, isValidPortName(*name));
      if (names.count(*name)) errs.duplicate(child(p, "name"), *name);
      names.insert(*name);
    }
    auto containerPort = errs.integer(port, "containerPort", child(p, "containerPort"));
    if (!containerPort || *containerPort == 0) {
      if (absent(port, "containerPort") || containerPort) errs.required(child(p, "containerPort"));
    } else {
      errs.invalidEach(child(p, "containerPort"), *containerPort, isValidPortNum(*containerPort));
    }
    auto hostPort = errs.integer(port, "hostPort", child(p, "hostPort"));
    if (hostPort && *hostPort != 0) {
      errs.invalidEach(child(p, "hostPort"), *hostPort, isValidPortNum(*hostPort));
    }
    validateProtocol(errs, port, child(p, "protocol"));
    auto hostIP = errs.string(port, "hostIP", child(p, "hostIP"));
    if (hostIP && !hostIP->empty() && !isIP(*hostIP)) {
      errs.invalid(child(p, "hostIP"), *hostIP, kInvalidIPMessage);
    }
    if (hostPort && *hostPort != 0) {
      auto protocol = errs.string(port, "protocol", child(p, "protocol"));
      std::string id =
          protocol.value_or("") + "/" + hostIP.value_or("") + "/" + std::to_string(*hostPort);
      if (hostPorts.count(id)) errs.duplicate(child(p, "hostPort"), id);
      hostPorts.insert(id);
    }
  }
}

void validateEnv(FieldErrors& errs, const json& env, const std::string& path) {
  for (size_t i = 0; i < env.size(); ++i) {
    const json& var = env[i];
    std::string p = index(path, i);
    if (!var.is_object()) {
      errs.typeInvalid(p, var, "object");
      continue;
    }
    auto name = errs.string(var, "name", child(p, "name"));
    if (!name || name->empty()) {
      errs.required(child(p, "name"));
    } else {
      errs.invalidEach(child(p, "name"), *name, isEnvVarName(*name));
    }
    auto value = errs.string(var, "value", child(p, "value"));
    const json* from = errs.object(var, "valueFrom", child(p, "valueFrom"));
    if (!from) continue;
    std::string fp = child(p, "valueFrom");
    int sources = 0;
    for (const char* s : {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"}) {
      const json* src = errs.object(*from, s, child(fp, s));
      if (!src) continue;
      ++sources;
      if (std::string_view(s) == "fieldRef") {
        auto fieldPath = errs.string(*src, "fieldPath", child(child(fp, s), "fieldPath"));
        if (!fieldPath || fieldPath->empty()) errs.required(child(child(fp, s), "fieldPath"));
      } else if (std::string_view(s) == "resourceFieldRef") {
        auto resource = errs.string(*src, "resource", child(child(fp, s), "resource"));
        if (!resource || resource->empty()) errs.required(child(child(fp, s), "resource"));
      } else {
        auto k = errs.string(*src, "key", child(child(fp, s), "key"));
        if (!k || k->empty()) {
          errs.required(child(child(fp, s), "key"));
        } else {
          errs.invalidEach(child(child(fp, s), "key"), *k, isConfigMapKey(*k));
        }
      }
    }
    if (value && !value->empty() && sources != 0) {
      errs.invalid(fp, "", "may not be specified when `value` is not empty");
    } else if (sources == 0) {
      errs.invalid(fp, "",
                   "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                   "`secretKeyRef`");
    } else if (sources > 1) {
      errs.invalid(fp, "", "may not have more than one field specified at a time");
    }
  }
}

void validateVolumeMounts(FieldErrors& errs, const json& mounts, const std::string& path,
                          const std::set<std::string>& volumes) {
  std::set<std::string> mountPaths;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const json& m = mounts[i];
    std::string p = index(path, i);
    if (!m.is_object()) {
      errs.typeInvalid(p, m, "object");
      continue;
    }
    auto name = errs.string(m, "name", child(p, "name"));
    if (!name || name->empty()) {
      errs.required(child(p, "name"));
    } else if (!volumes.count(*name)) {
      errs.notFound(child(p, "name"), *name);
    }
    auto mountPath = errs.string(m, "mountPath", child(p, "mountPath"));
    if (!mountPath || mountPath->empty()) {
      errs.required(child(p, "mountPath"));
    } else {
      if (mountPaths.count(*mountPath))
        errs.invalid(child(p, "mountPath"), *mountPath, "must be unique");
      mountPaths.insert(*mountPath);
    }
    errs.boolean(m, "readOnly", child(p, "readOnly"));
    errs.string(m, "subPath", child(p, "subPath"));
  }
}

bool isStandardContainerResource(const std::string& name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
         name.rfind("hugepages-", 0) == 0;
}

// Parses a map of resource name -> quantity, reporting bad names and values.
std::map<std::string, Quantity> validateResourceList(FieldErrors& errs, const json& list,
                                                     const std::string& path) {
  std::map<std::string, Quantity> out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    std::string p = key(path, it.key());
    if (it.key().find('/') == std::string::npos) {
      if (!isStandardContainerResource(it.key())) {
        errs.invalid(p, it.key(), "must be a standard resource for containers");
        continue;
      }
    } else if (auto msgs = isQualifiedName(it.key()); !msgs.empty()) {
      errs.invalidEach(p, it.key(), msgs);
      continue;
    }
    auto q = Quantity::fromJson(*it);
    if (!q.ok()) {
      errs.invalid(p, *it, q.status().message());
      continue;
    }
    if (q->sign() < 0) {
      errs.invalid(p, q->toString(), "must be greater than or equal to 0");
      continue;
    }
    out.emplace(it.key(), *q);
  }
  return out;
}

void validateResources(FieldErrors& errs, const json& container, const std::string& path) {
  const json* resources = errs.object(container, "resources", path);
  if (!resources) return;
  std::map<std::string, Quantity> limits, requests;
  if (const json* l = errs.object(*resources, "limits", child(path, "limits"))) {
    limits = validateResourceList(errs, *l, child(path, "limits"));
  }
  if (const json* r = errs.object(*resources, "requests", child(path, "requests"))) {
    requests = validateResourceList(errs, *r, child(path, "requests"));
  }
  for (const auto& [name, request] : requests) {
    auto limit = limits.find(name);
    if (limit != limits.end() && request.compare(limit->second) > 0) {
      errs.invalid(
          key(child(path, "requests"), name), request.toString(),
          "must be less than or equal to " + name + " limit of " + limit->second.toString());
    }
  }
}

void validateProbe(FieldErrors& errs, const json& container, const char* name,
                   const std::string& path, bool successMustBeOne) {
  const json* probe = errs.object(container, name, path);
  if (!probe) return;
  int handlers = 0;
  for (const char* h : kProbeHandlers) {
    const json* handler = errs.object(*probe, h, child(path, h));
    if (!handler) continue;
    if (++handlers > 1) {
      errs.forbidden(child(path, h), "may not specify more than 1 handler type");
      continue;
    }
    std::string hp = child(path, h);
    std::string_view kind = h;
    if (kind == "exec") {
      const json* command = errs.array(*handler, "command", child(hp, "command"));
      if (!command || command->empty()) errs.required(child(hp, "command"));
    } else if (kind == "httpGet" || kind == "tcpSocket") {
      const json* port = errs.intOrString(*handler, "port", child(hp, "port"));
      if (!port) {
        if (absent(*handler, "port")) errs.required(child(hp, "port"));
      } else {
        validatePortNumOrName(errs, *port, child(hp, "port"));
      }
      if (kind == "httpGet") {
        validateEnum(errs, *handler, "scheme", child(hp, "scheme"), {"HTTP", "HTTPS"}, false);
      }
    } else {
      auto port = errs.integer(*handler, "port", child(hp, "port"));
      if (port) errs.invalidEach(child(hp, "port"), *port, isValidPortNum(*port));
    }
  }
  if (handlers == 0) errs.required(path, "must specify a handler type");
  for (const char* f : {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                        "successThreshold", "failureThreshold"}) {
    validateNonnegative(errs, errs.integer(*probe, f, child(path, f)), child(path, f));
  }
  auto success = errs.integer(*probe, "successThreshold", child(path, "successThreshold"));
  if (successMustBeOne && success && *success != 1) {
    errs.invalid(child(path, "successThreshold"), *success, "must be 1");
  }
}

void validateContainer(FieldErrors& errs, const json& c, const std::string& path,
                       std::set<std::string>& names, const std::set<std::string>& volumes,
                       std::set<std::string>& hostPorts) {
  auto name = errs.string(c, "name", child(path, "name"));
  if (!name || name->empty()) {
    errs.required(child(path, "name"));
  } else {
    errs.invalidEach(child(path, "name"), *name, isDNS1123Label(*name));
    if (names.count(*name)) errs.duplicate(child(path, "name"), *name);
    names.insert(*name);
  }
  auto image = errs.string(c, "image", child(path, "image"));
  if (!image || image->empty()) {
    errs.required(child(path, "image"));
  } else if (std::isspace(static_cast<unsigned char>(image->front())) ||
             std::isspace(static_cast<unsigned char>(image->back()))) {
    errs.invalid(child(path, "image"), *image, "must not have leading or trailing whitespace");
  }
  validateEnum(errs, c, "imagePullPolicy", child(path, "imagePullPolicy"), kPullPolicies, true);
  if (const json* ports = errs.array(c, "ports", child(path, "ports"))) {
    validatePorts(errs, *ports, child(path, "ports"), hostPorts);
  }
  if (const json* env = errs.array(c, "env", child(path, "env"))) {
    validateEnv(errs, *env, child(path, "env"));
  }
  if (const json* mounts = errs.array(c, "volumeMounts", child(path, "volumeMounts"))) {
    validateVolumeMounts(errs, *mounts, child(path, "volumeMounts"), volumes);
  }
  validateResources(errs, c, child(path, "resources"));
  validateProbe(errs, c, "livenessProbe", child(path, "livenessProbe"), true);
  validateProbe(errs, c, "readinessProbe", child(path, "readinessProbe"), false);
  validateProbe(errs, c, "startupProbe", child(path, "startupProbe"), true);
  for (const char* list : {"command", "args"}) {
    if (const json* items = errs.array(c, list, child(path, list))) {
      for (size_t i = 0; i < items->size(); ++i) {
        if (!(*items)[i].is_string()) {
          errs.typeInvalid(index(child(path, list), i), (*items)[i], "string");
        }
      }
    }
  }
  validateEnum(errs, c, "terminationMessagePolicy", child(path, "terminationMessagePolicy"),
               {"FallbackToLogsOnError", "File"}, false);
}

void validateTolerations(FieldErrors& errs, const json& tolerations, const std::string& path) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const json& t = tolerations[i];
    std::string p = index(path, i);
    if (!t.is_object()) {
      errs.typeInvalid(p, t, "object");
      continue;
    }
    auto k = errs.string(t, "key", child(p, "key"));
    if (k && !k->empty()) errs.invalidEach(child(p, "key"), *k, isQualifiedName(*k));
    auto op = errs.string(t, "operator", child(p, "operator"));
    auto value = errs.string(t, "value", child(p, "value"));
    if ((!k || k->empty()) && op.value_or("") != "Exists") {
      errs.invalid(child(p, "operator"), op.value_or(""),
                   "operator must be Exists when `key` is empty, which means \"match all values "
                   "and all keys\"");
    }
    if (op && *op == "Exists" && value && !value->empty()) {
      errs.invalid(child(p, "operator"), *t.find("value"),
                   "value must be empty when `operator` is 'Exists'");
    } else if (op && !op->empty() && *op != "Equal" && *op != "Exists") {
      errs.notSupported(child(p, "operator"), *op, {"Equal", "Exists"});
    }
    validateEnum(errs, t, "effect", child(p, "effect"), kTaintEffects, false);
    errs.integer(t, "tolerationSeconds", child(p, "tolerationSeconds"));
  }
}

}  // namespace

void validateProtocol(FieldErrors& errs, const json& obj, const std::string& path) {
  validateEnum(errs, obj, "protocol", path, {"SCTP", "TCP", "UDP"}, true);
}

void validatePortNumOrName(FieldErrors& errs, const json& value, const std::string& path) {
  if (value.is_number_integer()) {
    errs.invalidEach(path, value, isValidPortNum(value.get<int64_t>()));
  } else if (value.is_string()) {
    errs.invalidEach(path, value, isValidPortName(value.get_ref<const std::string&>()));
  } else {
    errs.typeInvalid(path, value, "integer or string");
  }
}

void validatePodSpec(FieldErrors& errs, const json& spec, const std::string& path,
                     const PodSpecOptions& options) {
  std::set<std::string> volumes;
  if (const json* v = errs.array(spec, "volumes", child(path, "volumes"))) {
    volumes = validateVolumes(errs, *v, child(path, "volumes"));
  }
  std::set<std::string> names, hostPorts;
  const json* containers = errs.array(spec, "containers", child(path, "containers"));
  if (!containers || containers->empty()) {
    if (absent(spec, "containers") || containers) errs.required(child(path, "containers"));
  } else {
    for (size_t i = 0; i < containers->size(); ++i) {
      std::string p = index(child(path, "containers"), i);
      if (!(*containers)[i].is_object()) {
        errs.typeInvalid(p, (*containers)[i], "object");
        continue;
      }
      validateContainer(errs, (*containers)[i], p, names, volumes, hostPorts);
    }
  }
  if (const json* init = errs.array(spec, "initContainers", child(path, "initContainers"))) {
    for (size_t i = 0; i < init->size(); ++i) {
      std::string p = index(child(path, "initContainers"), i);
      if (!(*init)[i].is_object()) {
        errs.typeInvalid(p, (*init)[i], "object");
        continue;
      }
      validateContainer(errs, (*init)[i], p, names, volumes, hostPorts);
    }
  }
  if (options.checkRestartPolicy) {
    validateEnum(errs, spec, "restartPolicy", child(path, "restartPolicy"), kRestartPolicies, true);
  }
  validateEnum(errs, spec, "dnsPolicy", child(path, "dnsPolicy"), kDNSPolicies, true);
  if (const json* selector = errs.stringMap(spec, "nodeSelector", child(path, "nodeSelector"))) {
    validateLabels(errs, *selector, child(path, "nodeSelector"));
  }
  for (const char* f : {"serviceAccountName", "nodeName"}) {
    auto v = errs.string(spec, f, child(path, f));
    if (v && !v->empty()) errs.invalidEach(child(path, f), *v, isDNS1123Subdomain(*v));
  }
  auto deadline = errs.integer(spec, "activeDeadlineSeconds", child(path, "activeDeadlineSeconds"));
  if (deadline && (*deadline < 1 || *deadline > 2147483647)) {
    errs.invalid(child(path, "activeDeadlineSeconds"), *deadline,
                 "must be between 1 and 2147483647, inclusive");
  }
  errs.integer(spec, "terminationGracePeriodSeconds", child(path, "terminationGracePeriodSeconds"));
  if (const json* t = errs.array(spec, "tolerations", child(path, "tolerations"))) {
    validateTolerations(errs, *t, child(path, "tolerations"));
  }
  for (const char* b : {"hostNetwork", "hostPID", "hostIPC", "enableServiceLinks"}) {
    errs.boolean(spec, b, child(path, b));
  }
  errs.object(spec, "securityContext", child(path, "securityContext"));
  errs.object(spec, "affinity", child(path, "affinity"));
}

void validatePodTemplate(FieldErrors& errs, const json& tmpl, const std::string& path,
                         const PodSpecOptions& options) {
  const json* meta = errs.object(tmpl, "metadata", child(path, "metadata"));
  if (meta) {
    if (const json* labels = errs.stringMap(*meta, "labels", child(path, "labels"))) {
      validateLabels(errs, *labels, child(path, "labels"));
    }
    errs.stringMap(*meta, "annotations", child(path, "annotations"));
  }
  const json* spec = errs.object(tmpl, "spec", child(path, "spec"));
  validatePodSpec(errs, spec ? *spec : kNoObject, child(path, "spec"), options);
}

}  // namespace minik8s::api::validation
