#include "controllers/volume/volume_binding.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/selector.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

namespace {

std::optional<int64_t> bytesAt(const json& obj, const json::json_pointer& ptr) {
  if (!obj.contains(ptr)) return std::nullopt;
  auto q = api::Quantity::fromJson(obj.at(ptr));
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
  std::string mode = stringAt(obj, "/spec/volumeMode"_json_pointer);
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
  if (api::volumeClassOf(volume) != api::claimClassOf(claim)) {
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

std::optional<json> findMatchingVolume(const json& claim, const std::vector<json>& volumes) {
  std::optional<api::LabelSelector> selector;
  const json spec = claim.value("spec", json::object());
  if (spec.contains("selector") && spec["selector"].is_object()) {
    auto s = api::LabelSelector::fromJson(spec["selector"]);
    if (!s.ok()) return std::nullopt;  // validation refuses these; match nothing
    selector = *s;
  }
  const json* smallest = nullptr;
  int64_t smallestBytes = 0;
  for (const auto& volume : volumes) {
    if (volume.contains("/metadata/deletionTimestamp"_json_pointer)) continue;
    const bool preBound = volumeBoundToClaim(volume, claim);
    const json ref = volume.value("spec", json::object()).value("claimRef", json());
    if (ref.is_object() && !preBound) continue;  // somebody else's
    if (!volumeMismatch(volume, claim).empty()) continue;
    if (preBound) return volume;
    // Available, or new and not yet marked so (a volume and its claim created together):
    // Released and Failed volumes wait for an administrator.
    const std::string phase = stringAt(volume, "/status/phase"_json_pointer);
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

std::string claimQueueKey(const std::string& ns, const std::string& name) {
  return "claim/" + ns + "/" + name;
}

std::string volumeQueueKey(const std::string& name) { return "volume/" + name; }

std::optional<VolumeQueueKey> parseVolumeQueueKey(const std::string& key) {
  if (key.rfind("volume/", 0) == 0) return VolumeQueueKey{false, "", key.substr(7)};
  if (key.rfind("claim/", 0) != 0) return std::nullopt;
  const std::string rest = key.substr(6);
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  return VolumeQueueKey{true, rest.substr(0, slash), rest.substr(slash + 1)};
}

}  // namespace minik8s::controllers
