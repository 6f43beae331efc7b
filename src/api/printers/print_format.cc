#include "api/printers/print_format.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "api/table.h"

namespace minik8s::api::printers {

std::string str(const json& obj, std::string_view key, std::string fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

int64_t integer(const json& obj, std::string_view key, int64_t fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

bool boolean(const json& obj, std::string_view key, bool fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

const json& object(const json& obj, std::string_view key) {
  static const json kEmpty = json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

const json& array(const json& obj, std::string_view key) {
  static const json kEmpty = json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

std::optional<TimePoint> parseTime(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& s = value.get_ref<const std::string&>();
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {  // fractional seconds: irrelevant for ages
    ++pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && s[pos + 3] == ':') {
    int h = 0, m = 0;
    if (std::sscanf(s.c_str() + pos + 1, "%2d:%2d", &h, &m) != 2) return std::nullopt;
    offset = (s[pos] == '-' ? -1 : 1) * (h * 3600 + m * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  time_t t = timegm(&tm);
  return std::chrono::system_clock::from_time_t(t) - std::chrono::seconds(offset);
}

std::string since(const json& timestamp, TimePoint now) {
  auto t = parseTime(timestamp);
  if (!t) return "<unknown>";
  return humanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *t));
}

std::string labelSelectorString(const json& selector) {
  // Requirements sorted by key, as labels.Selector.String() prints them.
  std::vector<std::pair<std::string, std::string>> requirements;
  for (const auto& [k, v] : object(selector, "matchLabels").items()) {
    requirements.emplace_back(k, k + "=" + (v.is_string() ? v.get<std::string>() : ""));
  }
  for (const auto& expr : array(selector, "matchExpressions")) {
    std::string key = str(expr, "key");
    std::string op = str(expr, "operator");
    std::vector<std::string> values;
    for (const auto& v : array(expr, "values")) {
      if (v.is_string()) values.push_back(v.get<std::string>());
    }
    std::sort(values.begin(), values.end());
    std::string joined;
    for (const auto& v : values) joined += (joined.empty() ? "" : ",") + v;
    if (op == "In") {
      requirements.emplace_back(key, key + " in (" + joined + ")");
    } else if (op == "NotIn") {
      requirements.emplace_back(key, key + " notin (" + joined + ")");
    } else if (op == "Exists") {
      requirements.emplace_back(key, key);
    } else if (op == "DoesNotExist") {
      requirements.emplace_back(key, "!" + key);
    }
  }
  std::stable_sort(requirements.begin(), requirements.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& r : requirements) out += (out.empty() ? "" : ",") + r.second;
  return out;
}

std::string labelsString(const json& labels) {
  std::string out;
  if (labels.is_object()) {  // nlohmann objects iterate in key order
    for (const auto& [k, v] : labels.items()) {
      out += (out.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : "");
    }
  }
  return out.empty() ? "<none>" : out;
}

namespace {
std::string joinContainerField(const json& podSpec, std::string_view field) {
  std::string out;
  bool first = true;
  for (const auto& c : array(podSpec, "containers")) {
    if (!first) out += ",";
    out += str(c, field);
    first = false;
  }
  return out;
}
}  // namespace

std::string containerNames(const json& podSpec) { return joinContainerField(podSpec, "name"); }
std::string containerImages(const json& podSpec) { return joinContainerField(podSpec, "image"); }

}  // namespace minik8s::api::printers
