#include "controllers/volume/persistent_volume_controller.h"

#include "api/object_meta.h"
#include "api/persistent_volumes.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/volume/volume_binding.h"

namespace minik8s::controllers {

using api::capacityBytes;
using api::findMatchingVolume;
using api::nameOf;
using api::namespaceOf;
using api::requestedBytes;
using api::stringAt;
using api::uidOf;
using api::volumeBoundToClaim;
using api::volumeMismatch;

const client::Resource kPersistentVolumes{"", "v1", "persistentvolumes", false};
const client::Resource kPersistentVolumeClaims{"", "v1", "persistentvolumeclaims", true};
const client::Resource kStorageClasses{"storage.k8s.io", "v1", "storageclasses", false};

namespace {

void setAnnotation(json& obj, const char* key, const std::string& value) {
  obj["metadata"]["annotations"][key] = value;
}

json claimRefTo(const json& claim) {
  return {{"kind", "PersistentVolumeClaim"},
          {"apiVersion", "v1"},
          {"namespace", namespaceOf(claim)},
          {"name", nameOf(claim)},
          {"uid", uidOf(claim)},
          {"resourceVersion", stringAt(claim, "/metadata/resourceVersion")}};
}

}  // namespace

PersistentVolumeController::PersistentVolumeController(client::RestClient& rest,
                                                       client::Informer& volumes,
                                                       client::Informer& claims,
                                                       client::Informer& classes,
                                                       PersistentVolumeControllerOptions options)
    : rest_(rest),
      volumes_(volumes),
      claims_(claims),
      classes_(classes),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "persistentvolume-binder") {
  auto claimKey = [this](const json& c) { queue_.add(claimQueueKey(namespaceOf(c), nameOf(c))); };
  claims_.addHandlers({claimKey, [claimKey](const json&, const json& c) { claimKey(c); },
                       [this, claimKey](const json& c) {
                         // Its volume is Released now.
                         const std::string volume = stringAt(c, "/spec/volumeName");
                         if (!volume.empty()) queue_.add(volumeQueueKey(volume));
                         claimKey(c);
                       }});
  auto volumeChanged = [this](const json& v) {
    queue_.add(volumeQueueKey(nameOf(v)));
    const json ref = v.value("spec", json::object()).value("claimRef", json());
    if (ref.is_object())
      queue_.add(claimQueueKey(ref.value("namespace", ""), ref.value("name", "")));
    enqueuePendingClaims();  // a new or freed volume may serve a waiting claim
  };
  volumes_.addHandlers({volumeChanged,
                        [volumeChanged](const json&, const json& v) { volumeChanged(v); },
                        volumeChanged});
  auto classChanged = [this](const json&) { enqueuePendingClaims(); };
  classes_.addHandlers(
      {classChanged, [classChanged](const json&, const json& c) { classChanged(c); }, nullptr});
}

PersistentVolumeController::~PersistentVolumeController() { stop(); }
void PersistentVolumeController::start() { workers_.start(options_.workers); }
void PersistentVolumeController::stop() { workers_.stop(); }

void PersistentVolumeController::enqueuePendingClaims() {
  for (const auto& c : claims_.list()) {
    if (stringAt(c, "/status/phase") != "Bound") {
      queue_.add(claimQueueKey(namespaceOf(c), nameOf(c)));
    }
  }
}

void PersistentVolumeController::event(const json& obj, const std::string& kind,
                                       const std::string& type, const std::string& reason,
                                       const std::string& message) {
  if (!options_.events) return;
  json involved = obj;
  involved["kind"] = kind;
  involved["apiVersion"] = "v1";
  options_.events->record(involved, type, reason, message);
}

std::optional<json> PersistentVolumeController::classOf(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  return classes_.get(name);
}

Status PersistentVolumeController::sync(const std::string& key) {
  auto k = parseVolumeQueueKey(key);
  if (!k) return Status::Ok();
  return k->claim ? syncClaim(k->ns, k->name) : syncVolume(k->name);
}

Status PersistentVolumeController::syncClaim(const std::string& ns, const std::string& name) {
  auto claim = claims_.get(ns + "/" + name);
  if (!claim) return Status::Ok();
  if (isTerminating(*claim)) return Status::Ok();
  if (api::annotationValue(*claim, api::kAnnBindCompleted).empty()) return syncUnboundClaim(*claim);
  return syncBoundClaim(*claim);
}

Status PersistentVolumeController::syncUnboundClaim(const json& claim) {
  const std::string volumeName = stringAt(claim, "/spec/volumeName");
  if (!volumeName.empty()) {
    // Pre-bound by the user to one volume: that one or none.
    auto volume = volumes_.get(volumeName);
    if (!volume) {
      event(claim, "PersistentVolumeClaim", "Normal", "FailedBinding",
            "volume \"" + volumeName + "\" not found");
      return setClaimStatus(claim, "Pending", nullptr);
    }
    const json ref = volume->value("spec", json::object()).value("claimRef", json());
    if (ref.is_object() && !volumeBoundToClaim(*volume, claim)) {
      event(claim, "PersistentVolumeClaim", "Warning", "FailedBinding",
            "volume \"" + volumeName + "\" already bound to a different claim.");
      return setClaimStatus(claim, "Pending", nullptr);
    }
    if (std::string why = volumeMismatch(*volume, claim); !why.empty()) {
      event(claim, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
            "Cannot bind to requested volume \"" + volumeName + "\": " + why);
      return setClaimStatus(claim, "Pending", nullptr);
    }
    return bind(*volume, claim);
  }

  const std::string className = api::claimClassOf(claim);
  auto cls = classOf(className);
  const bool waitForConsumer =
      cls && cls->value("volumeBindingMode", std::string()) == "WaitForFirstConsumer";
  const std::string selectedNode = api::annotationValue(claim, api::kAnnSelectedNode);
  if (auto volume = findMatchingVolume(claim, volumes_.list())) {
    // A WaitForFirstConsumer claim takes only a volume the scheduler pre-bound to it for the
    // node it chose.
    if (!waitForConsumer || volumeBoundToClaim(*volume, claim)) return bind(*volume, claim);
  }

  // Nothing to bind to (yet).
  Status pending = setClaimStatus(claim, "Pending", nullptr);
  if (!pending.ok()) return pending;
  if (!className.empty() && !cls) {
    event(claim, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
          "storageclass.storage.k8s.io \"" + className + "\" not found");
    return Status::Ok();
  }
  if (!cls) {
    event(claim, "PersistentVolumeClaim", "Normal", "FailedBinding",
          "no persistent volumes available for this claim and no storage class is set");
    return Status::Ok();
  }
  if (waitForConsumer && selectedNode.empty()) {
    event(claim, "PersistentVolumeClaim", "Normal", "WaitForFirstConsumer",
          "waiting for first consumer to be created before binding");
    return Status::Ok();
  }
  const std::string provisioner = cls->value("provisioner", std::string());
  if (provisioner.empty() || provisioner == "kubernetes.io/no-provisioner") {
    event(claim, "PersistentVolumeClaim", "Normal", "FailedBinding",
          "no persistent volumes available for this claim and no storage class is set");
    return Status::Ok();
  }
  if (api::annotationValue(claim, api::kAnnStorageProvisioner) != provisioner) {
    json updated = claim;
    setAnnotation(updated, api::kAnnStorageProvisioner, provisioner);
    setAnnotation(updated, api::kAnnBetaStorageProvisioner, provisioner);
    auto r = rest_.update(kPersistentVolumeClaims, updated);
    if (!r.ok()) return r.status();
  }
  event(claim, "PersistentVolumeClaim", "Normal", "ExternalProvisioning",
        "Waiting for a volume to be created either by the external provisioner '" + provisioner +
            "' or manually by the system administrator. If volume creation is delayed, please "
            "verify that the provisioner is running and correctly registered.");
  return Status::Ok();
}

Status PersistentVolumeController::syncBoundClaim(const json& claim) {
  const std::string volumeName = stringAt(claim, "/spec/volumeName");
  if (volumeName.empty()) {
    event(claim, "PersistentVolumeClaim", "Warning", "ClaimLost",
          "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!");
    return setClaimStatus(claim, "Lost", nullptr);
  }
  auto volume = volumes_.get(volumeName);
  if (!volume) {
    // The cache may lag a volume created just now: ask the API server before calling it lost.
    auto live = rest_.get(kPersistentVolumes, "", volumeName);
    if (live.ok()) {
      volume = *live;
    } else if (live.status().code() == 404) {
      if (stringAt(claim, "/status/phase") != "Lost") {
        event(claim, "PersistentVolumeClaim", "Warning", "ClaimLost",
              "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
      }
      return setClaimStatus(claim, "Lost", nullptr);
    } else {
      return live.status();
    }
  }
  const json ref = volume->value("spec", json::object()).value("claimRef", json());
  if (!ref.is_object()) return bind(*volume, claim);  // the volume's half was not written yet
  if (volumeBoundToClaim(*volume, claim) && !ref.value("uid", "").empty()) {
    return setClaimStatus(claim, "Bound", &*volume);
  }
  if (stringAt(claim, "/status/phase") != "Lost") {
    event(claim, "PersistentVolumeClaim", "Warning", "ClaimMisbound",
          "Two claims are bound to the same volume, this one is bound incorrectly");
  }
  return setClaimStatus(claim, "Lost", nullptr);
}

Status PersistentVolumeController::bind(json volume, json claim) {
  // 1. The volume's claimRef (and its phase).
  if (!volumeBoundToClaim(volume, claim) ||
      volume.value("spec", json::object()).value("claimRef", json()).value("uid", "") !=
          uidOf(claim)) {
    const bool chosenByUs =
        !volume.value("spec", json::object()).value("claimRef", json()).is_object();
    volume["spec"]["claimRef"] = claimRefTo(claim);
    if (chosenByUs) setAnnotation(volume, api::kAnnBoundByController, "yes");
    auto r = rest_.update(kPersistentVolumes, volume);
    if (!r.ok()) return r.status();
    volume = *r;
  }
  auto bound = setVolumePhase(volume, "Bound", "");
  if (!bound.ok()) return bound.status();
  // 2. The claim's volumeName and bind-completed annotation.
  if (stringAt(claim, "/spec/volumeName") != nameOf(volume) ||
      api::annotationValue(claim, api::kAnnBindCompleted) != "yes") {
    if (stringAt(claim, "/spec/volumeName").empty()) {
      claim["spec"]["volumeName"] = nameOf(volume);
      setAnnotation(claim, api::kAnnBoundByController, "yes");
    }
    setAnnotation(claim, api::kAnnBindCompleted, "yes");
    auto r = rest_.update(kPersistentVolumeClaims, claim);
    if (!r.ok()) return r.status();
    claim = *r;
  }
  // 3. The claim's status.
  return setClaimStatus(claim, "Bound", &volume);
}

Status PersistentVolumeController::setClaimStatus(const json& claim, const std::string& phase,
                                                  const json* volume) {
  json status = claim.value("status", json::object());
  json wanted = status;
  wanted["phase"] = phase;
  if (volume) {
    const json spec = volume->value("spec", json::object());
    wanted["accessModes"] = spec.value("accessModes", json::array());
    wanted["capacity"] = spec.value("capacity", json::object());
  } else if (phase == "Pending") {
    wanted.erase("accessModes");
    wanted.erase("capacity");
  }
  if (wanted == status) return Status::Ok();
  json updated = claim;
  updated["status"] = wanted;
  auto r = rest_.update(kPersistentVolumeClaims, updated, "status");
  return r.ok() ? Status::Ok() : r.status();
}

Result<json> PersistentVolumeController::setVolumePhase(const json& volume,
                                                        const std::string& phase,
                                                        const std::string& message) {
  json status = volume.value("status", json::object());
  if (status.value("phase", "") == phase && status.value("message", "") == message) return volume;
  json updated = volume;
  updated["status"]["phase"] = phase;
  if (message.empty()) {
    updated["status"].erase("message");
  } else {
    updated["status"]["message"] = message;
  }
  if (phase == "Released" || phase == "Failed") {
    updated["status"]["lastPhaseTransitionTime"] = formatRfc3339(WallClock::now());
  }
  return rest_.update(kPersistentVolumes, updated, "status");
}

Status PersistentVolumeController::syncVolume(const std::string& name) {
  auto volume = volumes_.get(name);
  if (!volume) return Status::Ok();
  const json ref = volume->value("spec", json::object()).value("claimRef", json());
  auto phaseOnly = [](const Result<json>& r) { return r.ok() ? Status::Ok() : r.status(); };
  if (!ref.is_object() || ref.value("uid", "").empty()) {
    // Free, or pre-bound by an administrator to a claim that has not bound yet.
    return phaseOnly(setVolumePhase(*volume, "Available", ""));
  }
  const std::string claimKey = ref.value("namespace", "") + "/" + ref.value("name", "");
  std::optional<json> claim = claims_.get(claimKey);
  if (!claim || uidOf(*claim) != ref.value("uid", "")) {
    // Make sure the claim is really gone, not just missing from a lagging cache.
    auto live =
        rest_.get(kPersistentVolumeClaims, ref.value("namespace", ""), ref.value("name", ""));
    if (live.ok()) {
      claim = *live;
    } else if (live.status().code() != 404) {
      return live.status();
    }
  }
  if (claim && uidOf(*claim) == ref.value("uid", "")) {
    const std::string boundTo = stringAt(*claim, "/spec/volumeName");
    if (boundTo.empty() || boundTo == name) return phaseOnly(setVolumePhase(*volume, "Bound", ""));
    // The claim bound elsewhere: give this volume back if we chose it.
    if (api::annotationValue(*volume, api::kAnnBoundByController) == "yes") {
      json updated = *volume;
      updated["spec"].erase("claimRef");
      updated["metadata"]["annotations"].erase(api::kAnnBoundByController);
      auto r = rest_.update(kPersistentVolumes, updated);
      if (!r.ok()) return r.status();
      return phaseOnly(setVolumePhase(*r, "Available", ""));
    }
    return Status::Ok();
  }

  // The claim is gone: Released, then the reclaim policy.
  json current = *volume;
  const std::string phase = stringAt(current, "/status/phase");
  if (phase != "Released" && phase != "Failed") {
    auto released = setVolumePhase(current, "Released", "");
    if (!released.ok()) return released.status();
    current = *released;
    event(current, "PersistentVolume", "Normal", "VolumeReleased",
          "claim " + claimKey + " was deleted");
  }
  if (phase == "Failed") return Status::Ok();
  const std::string policy = stringAt(current, "/spec/persistentVolumeReclaimPolicy");
  std::string failure;
  if (policy == "Delete" && api::annotationValue(current, api::kAnnProvisionedBy).empty()) {
    failure = "error getting deleter volume plugin for volume \"" + name +
              "\": no deletable volume plugin matched";
    event(current, "PersistentVolume", "Warning", "VolumeFailedDelete", failure);
  } else if (policy == "Recycle") {
    failure = "the Recycle reclaim policy is deprecated and not supported";
    event(current, "PersistentVolume", "Warning", "VolumeFailedRecycle", failure);
  }
  // Delete with a provisioner: the provisioner removes the storage, then the volume.
  if (failure.empty()) return Status::Ok();
  return phaseOnly(setVolumePhase(current, "Failed", failure));
}

}  // namespace minik8s::controllers
