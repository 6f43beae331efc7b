#include "controllers/volume/volume_protection_controller.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/persistent_volumes.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "controllers/volume/volume_binding.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;

namespace {

// `obj` with the finalizer added or removed.
json withFinalizer(json obj, const std::string& f, bool present) {
  json list = obj["metadata"].value("finalizers", json::array());
  json out = json::array();
  for (const auto& x : list) {
    if (x != f) out.push_back(x);
  }
  if (present) out.push_back(f);
  obj["metadata"]["finalizers"] = out;
  return obj;
}

bool isFinishedPod(const json& pod) {
  const std::string phase = stringAt(pod, "/status/phase");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

VolumeProtectionController::VolumeProtectionController(client::RestClient& rest,
                                                       client::Informer& claims,
                                                       client::Informer& volumes,
                                                       client::Informer& pods,
                                                       VolumeProtectionControllerOptions options)
    : rest_(rest),
      claims_(claims),
      volumes_(volumes),
      pods_(pods),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "pvc-protection") {
  auto claimKey = [this](const json& c) { queue_.add(claimQueueKey(namespaceOf(c), nameOf(c))); };
  claims_.addHandlers({claimKey, [claimKey](const json&, const json& c) { claimKey(c); }, nullptr});
  auto volumeKey = [this](const json& v) { queue_.add(volumeQueueKey(nameOf(v))); };
  volumes_.addHandlers(
      {volumeKey, [volumeKey](const json&, const json& v) { volumeKey(v); }, nullptr});
  auto podClaims = [this](const json& pod) {
    for (const auto& c : api::podClaimNames(pod)) {
      queue_.add(claimQueueKey(namespaceOf(pod), c));
    }
  };
  pods_.addHandlers({nullptr,
                     [podClaims](const json&, const json& pod) {
                       if (isFinishedPod(pod)) podClaims(pod);
                     },
                     podClaims});
}

VolumeProtectionController::~VolumeProtectionController() { stop(); }
void VolumeProtectionController::start() { workers_.start(options_.workers); }
void VolumeProtectionController::stop() { workers_.stop(); }

Status VolumeProtectionController::sync(const std::string& key) {
  auto k = parseVolumeQueueKey(key);
  if (!k) return Status::Ok();
  if (k->claim) return options_.claims ? syncClaim(k->ns, k->name) : Status::Ok();
  return options_.volumes ? syncVolume(k->name) : Status::Ok();
}

bool VolumeProtectionController::claimUsed(const std::string& claim,
                                           const std::vector<json>& pods) {
  for (const auto& pod : pods) {
    if (isFinishedPod(pod)) continue;
    const auto names = api::podClaimNames(pod);
    if (std::find(names.begin(), names.end(), claim) != names.end()) return true;
  }
  return false;
}

Status VolumeProtectionController::syncClaim(const std::string& ns, const std::string& name) {
  auto claim = claims_.get(ns + "/" + name);
  if (!claim) return Status::Ok();
  const bool deleting = isTerminating(*claim);
  const bool has = hasFinalizer(*claim, api::kPvcProtectionFinalizer);
  if (!deleting) {
    if (has) return Status::Ok();
    auto r = rest_.update(kPersistentVolumeClaims,
                          withFinalizer(*claim, api::kPvcProtectionFinalizer, true));
    return r.ok() || r.status().code() == 404 ? Status::Ok() : r.status();
  }
  if (!has) return Status::Ok();
  if (claimUsed(name, pods_.byIndex("namespace", ns))) return Status::Ok();
  // The cache may not have a pod created a moment ago: ask the API server.
  auto live = rest_.list(client::resources::kPods, ns);
  if (!live.ok()) return live.status();
  std::vector<json> pods;
  for (const auto& p : live->value("items", json::array())) pods.push_back(p);
  if (claimUsed(name, pods)) return Status::Ok();
  auto r = rest_.update(kPersistentVolumeClaims,
                        withFinalizer(*claim, api::kPvcProtectionFinalizer, false));
  return r.ok() || r.status().code() == 404 ? Status::Ok() : r.status();
}

Status VolumeProtectionController::syncVolume(const std::string& name) {
  auto volume = volumes_.get(name);
  if (!volume) return Status::Ok();
  const bool deleting = isTerminating(*volume);
  const bool has = hasFinalizer(*volume, api::kPvProtectionFinalizer);
  if (!deleting) {
    if (has) return Status::Ok();
    auto r =
        rest_.update(kPersistentVolumes, withFinalizer(*volume, api::kPvProtectionFinalizer, true));
    return r.ok() || r.status().code() == 404 ? Status::Ok() : r.status();
  }
  if (!has || stringAt(*volume, "/status/phase") == "Bound") return Status::Ok();
  auto r =
      rest_.update(kPersistentVolumes, withFinalizer(*volume, api::kPvProtectionFinalizer, false));
  return r.ok() || r.status().code() == 404 ? Status::Ok() : r.status();
}

}  // namespace minik8s::controllers
