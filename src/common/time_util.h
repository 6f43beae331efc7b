// Time as the Kubernetes API writes it: RFC 3339 in UTC, second precision ("2024-01-02T03:04:05Z")
// for metav1.Time and microsecond precision for MicroTime; and durations as Go writes them
// (metav1.Duration, PodMetrics.window, command-line flags). Pure functions, thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace minik8s {

using Clock = std::chrono::system_clock;

std::string formatRfc3339(Clock::time_point t);
std::string formatRfc3339Micro(Clock::time_point t);
// Accepts "2024-01-02T03:04:05Z", fractional seconds and numeric offsets.
std::optional<Clock::time_point> parseRfc3339(const std::string& s);

// A Go duration as time.ParseDuration reads it: "0", or decimal numbers each with a unit, such
// as "300ms", "1.5h", "2h45m", ".5s"; units ns, us (µs), ms, s, m, h. Computed exactly in
// nanoseconds, then truncated to milliseconds. nullopt when malformed, negative (no caller has
// a use for one, Go would accept it) or beyond int64 nanoseconds (~292 years).
std::optional<std::chrono::milliseconds> parseGoDuration(std::string_view text);

}  // namespace minik8s
