#include "api/persistent_volumes.h"

#include <algorithm>

#include "api/node_placement.h"
#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "common/json_pointer.h"

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
  return stringAt(claim, "/spec/storageClassName");
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
  return stringAt(volume, "/spec/storageClassName");
}

std::optional<json> defaultStorageClass(const std::vector<json>& classes) {
  std::optional<json> best;
  for (const auto& c : classes) {
    if (annotationValue(c, kAnnDefaultStorageClass) != "true") continue;
    if (!best) {
      best = c;
      continue;
    }
    const std::string created = stringAt(c, "/metadata/creationTimestamp");
    const std::string bestCreated = stringAt(*best, "/metadata/creationTimestamp");
    if (created > bestCreated || (created == bestCreated && nameOf(c) < nameOf(*best))) best = c;
  }
  return best;
}

std::vector<std::string> podClaimNames(const json& pod) {
  std::vector<std::string> names;
  const json& volumes = member(member(pod, "spec"), "volumes");
  if (!volumes.is_array()) return names;
  for (const auto& v : volumes) {
    if (!v.is_object()) continue;
    if (const json& claim = member(v, "persistentVolumeClaim"); claim.is_object()) {
      names.push_back(stringMember(claim, "claimName"));
    } else if (member(v, "ephemeral").is_object()) {
      names.push_back(nameOf(pod) + "-" + stringMember(v, "name"));
    }
  }
  return names;
}

namespace {

std::optional<int64_t> bytesAt(const json& obj, const json::json_pointer& ptr) {
  if (!obj.contains(ptr)) return std::nullopt;
  auto q = Quantity::fromJson(obj.at(ptr));
  if (!q.ok()) return std::nullopt;
  return q->value();
}

std::vector<std::string> stringsAt(const json& obj, const json::json_pointer& ptr) {
  std::vector<std::string> out;
  if (!obj.contains(ptr) || !obj.at(ptr).is_array()) return out;
  for (const auto& v : obj.at(ptr)) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::string volumeModeOf(const json& obj) {
  std::string mode = stringAt(obj, "/spec/volumeMode");
  return mode.empty() ? "Filesystem" : mode;
}

}  // namespace

std::optional<int64_t> requestedBytes(const json& claim) {
  return bytesAt(claim, "/spec/resources/requests/storage"_json_pointer);
}

std::optional<int64_t> capacityBytes(const json& volume) {
  return bytesAt(volume, "/spec/capacity/storage"_json_pointer);
}

bool volumeBoundToClaim(const json& volume, const json& claim) {
  const json spec = volume.value("spec", json::object());
  const json ref = spec.value("claimRef", json());
  if (!ref.is_object()) return false;
  if (ref.value("name", "") != nameOf(claim) || ref.value("namespace", "") != namespaceOf(claim)) {
    return false;
  }
  const std::string uid = ref.value("uid", "");
  return uid.empty() || uid == uidOf(claim);
}

std::string volumeMismatch(const json& volume, const json& claim) {
  if (volumeClassOf(volume) != claimClassOf(claim)) {
    return "storageClassName does not match";
  }
  const auto volumeModes = stringsAt(volume, "/spec/accessModes"_json_pointer);
  for (const auto& mode : stringsAt(claim, "/spec/accessModes"_json_pointer)) {
    if (std::find(volumeModes.begin(), volumeModes.end(), mode) == volumeModes.end()) {
      return "incompatible accessMode";
    }
  }
  auto want = requestedBytes(claim);
  auto have = capacityBytes(volume);
  if (!want || !have || *have < *want) return "requested PV is too small";
  if (volumeModeOf(volume) != volumeModeOf(claim)) return "incompatible volumeMode";
  return "";
}

bool volumeAllowsNode(const json& volume, const json& node) {
  const json required = valueAt(volume, "/spec/nodeAffinity/required", json());
  if (!required.is_object()) return true;
  json asPod = {
      {"spec",
       {{"affinity",
         {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", required}}}}}}}};
  return matchesNodeSelectorAndAffinity(asPod, node);
}

bool volumePinnedToNode(const json& volume, const std::string& nodeName) {
  const json terms = valueAt(volume, "/spec/nodeAffinity/required/nodeSelectorTerms", json());
  if (nodeName.empty() || !terms.is_array() || terms.empty()) return false;
  for (const auto& term : terms) {
    const json expressions = term.is_object() ? term.value("matchExpressions", json()) : json();
    if (!expressions.is_array()) return false;
    bool pinned = false;
    for (const auto& e : expressions) {
      if (e.is_object() && e.value("key", "") == "kubernetes.io/hostname" &&
          e.value("operator", "") == "In" && e.value("values", json()) == json::array({nodeName})) {
        pinned = true;
      }
    }
    if (!pinned) return false;
  }
  return true;
}

std::optional<json> findMatchingVolume(const json& claim, const std::vector<json>& volumes,
                                       const json* node) {
  std::optional<LabelSelector> selector;
  const json spec = claim.value("spec", json::object());
  if (spec.contains("selector") && spec["selector"].is_object()) {
    auto s = LabelSelector::fromJson(spec["selector"]);
    if (!s.ok()) return std::nullopt;  // validation refuses these; match nothing
    selector = *s;
  }
  const json* smallest = nullptr;
  int64_t smallestBytes = 0;
  for (const auto& volume : volumes) {
    if (volume.contains("/metadata/deletionTimestamp"_json_pointer)) continue;
    if (node && !volumeAllowsNode(volume, *node)) continue;
    const bool preBound = volumeBoundToClaim(volume, claim);
    const json ref = volume.value("spec", json::object()).value("claimRef", json());
    if (ref.is_object() && !preBound) continue;  // somebody else's
    if (!volumeMismatch(volume, claim).empty()) continue;
    if (preBound) return volume;
    // Available, or new and not yet marked so (a volume and its claim created together):
    // Released and Failed volumes wait for an administrator.
    const std::string phase = stringAt(volume, "/status/phase");
    if (phase != "Available" && phase != "Pending" && !phase.empty()) continue;
    if (selector && !selector->matches(
                        volume.value("metadata", json::object()).value("labels", json::object()))) {
      continue;
    }
    int64_t bytes = capacityBytes(volume).value_or(0);
    if (!smallest || bytes < smallestBytes ||
        (bytes == smallestBytes && nameOf(volume) < nameOf(*smallest))) {
      smallest = &volume;
      smallestBytes = bytes;
    }
  }
  if (!smallest) return std::nullopt;
  return *smallest;
}

}  // namespace minik8s::api
