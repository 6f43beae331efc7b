// Writes the admin kubeconfig a user points kubectl at. Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::apiserver {

// `serverUrl` like "http://127.0.0.1:6443". Written atomically (temp file + rename), mode 0600.
Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const std::string& clusterName = "minik8s");

}  // namespace minik8s::apiserver
