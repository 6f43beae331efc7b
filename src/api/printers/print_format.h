// Formatting helpers shared by the Table printers: JSON field access that tolerates missing or
// mistyped fields, RFC 3339 parsing, ages, label selectors. Internal to src/api; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s::api::printers {

using TimePoint = std::chrono::system_clock::time_point;

// obj[key] as a string / integer / bool, or the fallback when absent or of another type.
std::string str(const json& obj, std::string_view key, std::string fallback = "");
int64_t integer(const json& obj, std::string_view key, int64_t fallback = 0);
bool boolean(const json& obj, std::string_view key, bool fallback = false);
// obj[key] if it is an object / array, else an empty one.
const json& object(const json& obj, std::string_view key);
const json& array(const json& obj, std::string_view key);

// "2024-01-02T03:04:05Z", with optional fraction and offset; nullopt when absent or malformed.
std::optional<TimePoint> parseTime(const json& value);

// HumanDuration(now - t), or "<unknown>" when t is missing.
std::string since(const json& timestamp, TimePoint now);

// metav1.LabelSelector as a selector string "app=web,tier in (a,b)"; "" when it selects all.
std::string labelSelectorString(const json& selector);
// A map of labels as "a=1,b=2" (sorted), or "<none>" when empty.
std::string labelsString(const json& labels);

// Container names and images joined by commas, as in the Containers / Images columns.
std::string containerNames(const json& podSpec);
std::string containerImages(const json& podSpec);

}  // namespace minik8s::api::printers
