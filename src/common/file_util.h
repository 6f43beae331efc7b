// Whole-file reads, one way for the whole tree. Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s {

// The bytes of the file at `path`; NotFound ("cannot read PATH: <reason>") when it cannot be
// opened or read.
Result<std::string> readFile(const std::string& path);

}  // namespace minik8s
