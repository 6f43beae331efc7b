// A nesting-depth guard for JSON from untrusted peers.
//
// nlohmann's parser itself is not recursive, but much of what follows it is (schema checks,
// defaulting, patches, dump()): a body of a few MiB of "[[[[..." would exhaust a thread's stack.
// The API server refuses such bodies before parsing them, as Kubernetes' decoder does with its
// own depth limit. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/status.h"

namespace minik8s {

// Far deeper than any real object; shallow enough for every recursive walk over a JSON value.
inline constexpr size_t kMaxJsonDepth = 1000;

// OK when no array or object in `text` (JSON, possibly invalid) nests deeper than maxDepth;
// otherwise 400 BadRequest. Brackets inside strings do not count. Linear, no allocation.
Status checkJsonDepth(std::string_view text, size_t maxDepth = kMaxJsonDepth);

}  // namespace minik8s
