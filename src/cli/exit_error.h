// How a user's command ends on an error it cannot go on from: "error: MESSAGE" on stderr, exit
// status 1 (as kubectl). For commands only: components return their Status instead.
#pragma once

#include <string_view>
#include <utility>

#include "common/status.h"

namespace minik8s::cli {

[[noreturn]] void exitWithError(std::string_view message);
[[noreturn]] void exitWithError(const Status& s);

// The value, or exitWithError(its status).
template <class T>
T valueOrExit(Result<T> r) {
  if (!r.ok()) exitWithError(r.status());
  return std::move(*r);
}

}  // namespace minik8s::cli
