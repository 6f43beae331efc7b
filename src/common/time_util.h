// Time as the Kubernetes API writes it: RFC 3339 in UTC, second precision ("2024-01-02T03:04:05Z")
// for metav1.Time and microsecond precision for MicroTime. Pure functions, thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace minik8s {

using Clock = std::chrono::system_clock;

std::string formatRfc3339(Clock::time_point t);
std::string formatRfc3339Micro(Clock::time_point t);
// Accepts "2024-01-02T03:04:05Z", fractional seconds and numeric offsets.
std::optional<Clock::time_point> parseRfc3339(const std::string& s);

}  // namespace minik8s
