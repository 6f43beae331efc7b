#include "api/pod_references.h"

#include "api/persistent_volumes.h"

namespace minik8s::api {

namespace {

// obj[key][field] when it is a non-empty string.
void addName(std::set<std::string>& out, const json& obj, const char* key, const char* field) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_object()) return;
  const json& ref = obj[key];
  if (ref.contains(field) && ref[field].is_string() &&
      !ref[field].get_ref<const std::string&>().empty())
    out.insert(ref[field].get<std::string>());
}

void addContainers(PodReferences& refs, const json& containers) {
  if (!containers.is_array()) return;
  for (const auto& c : containers) {
    if (!c.is_object()) continue;
    const json env = c.value("env", json::array());
    for (const auto& e : env.is_array() ? env : json::array()) {
      if (!e.is_object() || !e.contains("valueFrom")) continue;
      addName(refs.secrets, e["valueFrom"], "secretKeyRef", "name");
      addName(refs.configMaps, e["valueFrom"], "configMapKeyRef", "name");
    }
    const json envFrom = c.value("envFrom", json::array());
    for (const auto& e : envFrom.is_array() ? envFrom : json::array()) {
      addName(refs.secrets, e, "secretRef", "name");
      addName(refs.configMaps, e, "configMapRef", "name");
    }
  }
}

}  // namespace

PodReferences podReferences(const json& pod) {
  PodReferences refs;
  refs.serviceAccount = "default";
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return refs;
  const json& spec = pod["spec"];
  if (spec.contains("serviceAccountName") && spec["serviceAccountName"].is_string() &&
      !spec["serviceAccountName"].get_ref<const std::string&>().empty())
    refs.serviceAccount = spec["serviceAccountName"].get<std::string>();
  const json volumes = spec.value("volumes", json::array());
  for (const auto& v : volumes.is_array() ? volumes : json::array()) {
    if (!v.is_object()) continue;
    addName(refs.secrets, v, "secret", "secretName");
    addName(refs.configMaps, v, "configMap", "name");
    if (v.contains("csi") && v["csi"].is_object())
      addName(refs.secrets, v["csi"], "nodePublishSecretRef", "name");
    if (v.contains("projected") && v["projected"].is_object()) {
      const json sources = v["projected"].value("sources", json::array());
      for (const auto& s : sources.is_array() ? sources : json::array()) {
        addName(refs.secrets, s, "secret", "name");
        addName(refs.configMaps, s, "configMap", "name");
      }
    }
  }
  for (const auto& name : podClaimNames(pod))
    if (!name.empty()) refs.claims.insert(name);
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"})
    if (spec.contains(list)) addContainers(refs, spec[list]);
  const json pullSecrets = spec.value("imagePullSecrets", json::array());
  for (const auto& s : pullSecrets.is_array() ? pullSecrets : json::array())
    if (s.is_object() && s.contains("name") && s["name"].is_string() &&
        !s["name"].get_ref<const std::string&>().empty())
      refs.secrets.insert(s["name"].get<std::string>());
  return refs;
}

}  // namespace minik8s::api
