#include "api/persistent_volumes.h"

#include "api/object_meta.h"

namespace minik8s::api {

namespace {

bool hasAnnotation(const json& obj, const char* key) {
  const json meta = obj.value("metadata", json::object());
  const json anns = meta.value("annotations", json::object());
  return anns.is_object() && anns.contains(key);
}

}  // namespace

std::string claimClassOf(const json& claim) {
  if (hasAnnotation(claim, kAnnBetaStorageClass))
    return annotationValue(claim, kAnnBetaStorageClass);
  return stringAt(claim, "/spec/storageClassName"_json_pointer);
}

bool claimClassUnset(const json& claim) {
  if (hasAnnotation(claim, kAnnBetaStorageClass)) return false;
  const json spec = claim.value("spec", json::object());
  auto it = spec.find("storageClassName");
  return it == spec.end() || it->is_null();
}

std::string volumeClassOf(const json& volume) {
  if (hasAnnotation(volume, kAnnBetaStorageClass))
    return annotationValue(volume, kAnnBetaStorageClass);
  return stringAt(volume, "/spec/storageClassName"_json_pointer);
}

std::optional<json> defaultStorageClass(const std::vector<json>& classes) {
  std::optional<json> best;
  for (const auto& c : classes) {
    if (annotationValue(c, kAnnDefaultStorageClass) != "true") continue;
    if (!best) {
      best = c;
      continue;
    }
    const std::string created = stringAt(c, "/metadata/creationTimestamp"_json_pointer);
    const std::string bestCreated = stringAt(*best, "/metadata/creationTimestamp"_json_pointer);
    if (created > bestCreated || (created == bestCreated && nameOf(c) < nameOf(*best))) best = c;
  }
  return best;
}

std::vector<std::string> podClaimNames(const json& pod) {
  std::vector<std::string> names;
  const json spec = pod.value("spec", json::object());
  for (const auto& v : spec.value("volumes", json::array())) {
    if (!v.is_object()) continue;
    if (v.contains("persistentVolumeClaim") && v["persistentVolumeClaim"].is_object()) {
      names.push_back(v["persistentVolumeClaim"].value("claimName", std::string()));
    } else if (v.contains("ephemeral") && v["ephemeral"].is_object()) {
      names.push_back(nameOf(pod) + "-" + v.value("name", std::string()));
    }
  }
  return names;
}

}  // namespace minik8s::api
