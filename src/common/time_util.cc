#include "common/time_util.h"

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

}  // namespace minik8s
