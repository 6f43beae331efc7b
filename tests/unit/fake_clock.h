// A client::Clock that moves only when a test says so (work queues, back-off, probes).
#pragma once

#include <chrono>

#include "client/work_queue.h"

namespace minik8s::testing {

class FakeClock : public client::Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return t; }
  void advance(std::chrono::steady_clock::duration d) { t += d; }
  std::chrono::steady_clock::time_point t{std::chrono::hours(1000)};
};

}  // namespace minik8s::testing
