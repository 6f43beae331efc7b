// Times for tests whose results depend on "now".
#pragma once

#include <chrono>

namespace minik8s::testing {

// A fixed instant, for output that prints ages or timestamps: 2024-01-02T03:04:05Z.
inline const std::chrono::system_clock::time_point kNow =
    std::chrono::system_clock::from_time_t(1704164645);

// The wall clock when the test program started, for checks against the real clock.
inline const std::chrono::system_clock::time_point kStartedAt = std::chrono::system_clock::now();

}  // namespace minik8s::testing
