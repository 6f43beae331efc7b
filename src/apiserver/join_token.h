// The cluster's node join token: a random secret the server creates at first start and keeps
// in <data-dir>/token (mode 0600), or the one given with `minik8s server --token`. Agents present
// it as a bearer token (`minik8s agent --token`); the API server refuses unknown bearer tokens.
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::apiserver {

// Returns `given` when not empty (and stores it), else the stored token, else a new one.
Result<std::string> loadOrCreateJoinToken(const std::string& dataDir, const std::string& given);

}  // namespace minik8s::apiserver
