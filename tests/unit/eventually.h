// Polls a condition that another thread (a server, an informer, a controller) makes true: every
// 10 ms until it holds or `within` has passed, then one last try.
#pragma once

#include <chrono>
#include <thread>

namespace minik8s::testing {

template <typename F>
bool eventually(F f, std::chrono::milliseconds within = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

}  // namespace minik8s::testing
