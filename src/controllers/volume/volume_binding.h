// How PersistentVolumeClaims and PersistentVolumes match, as Kubernetes' PV controller decides
// it (pkg/controller/volume/persistentvolume): pure functions over the objects as JSON, shared by
// the binder (persistent_volume_controller.h) and the tests.
//
// A volume satisfies a claim when its class is the claim's, its access modes include every mode
// the claim asks for, its capacity is at least the request, its volumeMode is the claim's, and
// the claim's selector (if any) matches its labels. The binder picks the smallest such volume
// among the Available ones; a volume pre-bound to the claim (spec.claimRef naming it) wins over
// any other. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/persistent_volumes.h"
#include "common/status.h"

namespace minik8s::controllers {

// The claim's storage request in bytes; nullopt when missing or malformed.
std::optional<int64_t> requestedBytes(const json& claim);
// The volume's spec.capacity.storage in bytes; nullopt when missing or malformed.
std::optional<int64_t> capacityBytes(const json& volume);

// True when spec.claimRef names this claim (namespace, name and, when set, uid).
bool volumeBoundToClaim(const json& volume, const json& claim);

// Why `volume` cannot serve `claim` ("" when it can): class, access modes, capacity,
// volumeMode; the selector is checked by findMatchingVolume only (pre-bound volumes skip it).
std::string volumeMismatch(const json& volume, const json& claim);

// The volume the binder should bind `claim` to: one pre-bound to it, else the smallest unclaimed
// volume (Available, or Pending/no phase: just created) that satisfies it and its selector;
// nullopt when none.
std::optional<json> findMatchingVolume(const json& claim, const std::vector<json>& volumes);

// Work-queue keys of the volume controllers, which watch claims and volumes in one queue:
// "claim/NAMESPACE/NAME" and "volume/NAME".
std::string claimQueueKey(const std::string& ns, const std::string& name);
std::string volumeQueueKey(const std::string& name);
struct VolumeQueueKey {
  bool claim = false;  // else a volume
  std::string ns, name;
};
// nullopt for a key that is neither.
std::optional<VolumeQueueKey> parseVolumeQueueKey(const std::string& key);

}  // namespace minik8s::controllers
