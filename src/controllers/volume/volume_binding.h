// The volume controllers' shared pieces: the work-queue keys of controllers that watch claims and
// volumes in one queue. The matching rules live in api/persistent_volumes.h (the scheduler reads
// them too).
#pragma once

#include <optional>
#include <string>

namespace minik8s::controllers {

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
