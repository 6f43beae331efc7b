#include "common/time_util.h"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace minik8s {

namespace {
std::string formatWith(Clock::time_point t, bool micro) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  std::time_t tt = Clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (micro) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
    std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(us));
    out += buf;
  }
  return out + "Z";
}
}  // namespace

std::string formatRfc3339(Clock::time_point t) { return formatWith(t, false); }
std::string formatRfc3339Micro(Clock::time_point t) { return formatWith(t, true); }

std::optional<Clock::time_point> parseRfc3339(const std::string& s) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  auto t = Clock::from_time_t(timegm(&tm));
  size_t i = static_cast<size_t>(consumed);
  if (i < s.size() && s[i] == '.') {
    size_t start = ++i;
    int64_t frac = 0;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 9) {
        frac = frac * 10 + (s[i] - '0');
        ++digits;
      }
      ++i;
    }
    if (i == start) return std::nullopt;
    while (digits < 9) {
      frac *= 10;
      ++digits;
    }
    t += std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(frac));
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return t;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int hh = 0, mm = 0;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &hh, &mm) != 2) return std::nullopt;
    auto off = std::chrono::hours(hh) + std::chrono::minutes(mm);
    return s[i] == '+' ? t - off : t + off;
  }
  return std::nullopt;
}

namespace {

// Nanoseconds per unit; nullopt for an unknown unit.
std::optional<uint64_t> nanosPerUnit(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") return 1'000;  // micro sign, mu
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60'000'000'000;
  if (unit == "h") return 3'600'000'000'000;
  return std::nullopt;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<std::chrono::milliseconds> parseGoDuration(std::string_view text) {
  constexpr uint64_t kMax = uint64_t{1} << 63;  // Go's limit: |d| <= 2^63 ns (the sign aside)
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return std::nullopt;
  uint64_t total = 0;
  while (!text.empty()) {
    uint64_t whole = 0;
    size_t i = 0;
    for (; i < text.size() && isDigit(text[i]); ++i) {
      const auto digit = static_cast<uint64_t>(text[i] - '0');
      if (whole > (kMax - digit) / 10) return std::nullopt;
      whole = whole * 10 + digit;
    }
    const bool hasWhole = i > 0;
    // Fraction: digits past 18 only refine below a nanosecond of the largest unit; keep 18.
    uint64_t fraction = 0, scale = 1;
    bool hasFraction = false;
    if (i < text.size() && text[i] == '.') {
      ++i;
      for (; i < text.size() && isDigit(text[i]); ++i) {
        hasFraction = true;
        if (scale < 1'000'000'000'000'000'000ULL) {
          fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
          scale *= 10;
        }
      }
    }
    if (!hasWhole && !hasFraction) return std::nullopt;  // "", ".", "s"
    size_t unitEnd = i;
    while (unitEnd < text.size() && !isDigit(text[unitEnd]) && text[unitEnd] != '.') ++unitEnd;
    auto unit = nanosPerUnit(text.substr(i, unitEnd - i));
    if (!unit) return std::nullopt;  // missing or unknown unit
    if (whole > kMax / *unit) return std::nullopt;
    uint64_t nanos = whole * *unit;
    // fraction / scale < 1, so this part is below one unit; long double keeps it exact enough
    // (to the nanosecond for every unit up to an hour).
    nanos +=
        static_cast<uint64_t>(static_cast<long double>(fraction) * static_cast<long double>(*unit) /
                              static_cast<long double>(scale));
    if (nanos > kMax - total) return std::nullopt;
    total += nanos;
    text.remove_prefix(unitEnd);
  }
  if (total > kMax - 1) return std::nullopt;  // 2^63 ns fits only as a negative duration
  return std::chrono::milliseconds(static_cast<int64_t>(total / 1'000'000));
}

}  // namespace minik8s
