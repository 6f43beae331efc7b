#include "controllers/volume/volume_binding.h"

namespace minik8s::controllers {

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
