#include "api/cron_schedule.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/strings.h"

namespace minik8s::api::cron {

namespace {

using std::chrono::days;
using std::chrono::minutes;
using std::chrono::seconds;

int64_t be(const std::string& b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  if (width == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

struct Field {
  const char* name;
  int min, max;
  std::map<std::string, int> names;
};

const Field kMinute{"minute", 0, 59, {}};
const Field kHour{"hour", 0, 23, {}};
const Field kDom{"day of month", 1, 31, {}};
const Field kMonth{"month",
                   1,
                   12,
                   {{"jan", 1},
                    {"feb", 2},
                    {"mar", 3},
                    {"apr", 4},
                    {"may", 5},
                    {"jun", 6},
                    {"jul", 7},
                    {"aug", 8},
                    {"sep", 9},
                    {"oct", 10},
                    {"nov", 11},
                    {"dec", 12}}};
const Field kDow{
    "day of week",
    0,
    6,
    {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3}, {"thu", 4}, {"fri", 5}, {"sat", 6}}};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

Result<int> number(const std::string& text, const Field& f, const std::string& expr) {
  const std::string lower = asciiLower(text);
  if (auto it = f.names.find(lower); it != f.names.end()) return it->second;
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::BadRequest("failed to parse int from " + text + ": invalid syntax in " + f.name +
                              " field " + expr);
  }
  return std::stoi(text);
}

// One comma-separated part: `*`, `?`, N, N-M, with an optional /step.
Status parseRange(const std::string& expr, const Field& f, uint64_t& bits, bool& star) {
  auto slash = split(expr, '/');
  if (slash.size() > 2) return Status::BadRequest("too many slashes: " + expr);
  auto dash = split(slash[0], '-');
  int start = 0, end = 0;
  bool all = false;
  if (slash[0] == "*" || slash[0] == "?") {
    start = f.min;
    end = f.max;
    all = true;
  } else {
    if (dash.size() > 2) return Status::BadRequest("too many hyphens: " + expr);
    auto a = number(dash[0], f, expr);
    if (!a.ok()) return a.status();
    start = end = *a;
    if (dash.size() == 2) {
      auto b = number(dash[1], f, expr);
      if (!b.ok()) return b.status();
      end = *b;
    }
  }
  int step = 1;
  if (slash.size() == 2) {
    auto s = number(slash[1], Field{f.name, 0, 0, {}}, expr);
    if (!s.ok()) return s.status();
    step = *s;
    if (!all && dash.size() == 1) end = f.max;  // "N/step" means N-max/step
    all = false;
  }
  if (start < f.min)
    return Status::BadRequest("beginning of range (" + std::to_string(start) + ") below minimum (" +
                              std::to_string(f.min) + "): " + expr);
  if (end > f.max)
    return Status::BadRequest("end of range (" + std::to_string(end) + ") above maximum (" +
                              std::to_string(f.max) + "): " + expr);
  if (start > end)
    return Status::BadRequest("beginning of range (" + std::to_string(start) +
                              ") beyond end of range (" + std::to_string(end) + "): " + expr);
  if (step == 0) return Status::BadRequest("step of range should be a positive number: " + expr);
  for (int i = start; i <= end; i += step) bits |= uint64_t{1} << i;
  if (all) star = true;
  return Status::Ok();
}

Status parseField(const std::string& text, const Field& f, uint64_t& bits, bool& star) {
  bits = 0;
  star = false;
  for (const auto& part : split(text, ',')) {
    if (part.empty())
      return Status::BadRequest(std::string("empty value in ") + f.name + ": " + text);
    Status s = parseRange(part, f, bits, star);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

bool has(uint64_t bits, int i) { return (bits >> i) & 1; }

}  // namespace

const TimeZone& TimeZone::utc() {
  static const TimeZone zone;
  return zone;
}

Result<std::shared_ptr<const TimeZone>> TimeZone::fromTzif(const std::string& name,
                                                           const std::string& b) {
  auto bad = [&] { return Status::BadRequest("time zone " + name + ": not a TZif file"); };
  if (b.size() < 44 || b.compare(0, 4, "TZif") != 0) return bad();
  size_t at = 0;
  int width = 4;
  auto counts = [&](size_t h, int64_t c[6]) {
    for (int i = 0; i < 6; ++i) c[i] = be(b, h + 20 + 4 * i, 4);
  };
  int64_t c[6];
  counts(0, c);
  auto blockSize = [&](const int64_t n[6], int w) {
    // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
    return n[3] * w + n[3] + n[4] * 6 + n[5] + n[2] * (w + 4) + n[1] + n[0];
  };
  if (b[4] >= '2') {
    const size_t second = 44 + static_cast<size_t>(blockSize(c, 4));
    if (b.size() < second + 44 || b.compare(second, 4, "TZif") != 0) return bad();
    counts(second, c);
    at = second + 44;
    width = 8;
  } else {
    at = 44;
  }
  for (int64_t n : c) {
    if (n < 0 || n > 100000) return bad();
  }
  if (b.size() < at + static_cast<size_t>(blockSize(c, width)) || c[4] == 0) return bad();
  auto zone = std::make_shared<TimeZone>();
  zone->name_ = name;
  const int64_t timecnt = c[3], typecnt = c[4];
  const size_t types = at + static_cast<size_t>(timecnt * width);
  const size_t infos = types + static_cast<size_t>(timecnt);
  std::vector<int64_t> utoff(static_cast<size_t>(typecnt));
  for (int64_t i = 0; i < typecnt; ++i) utoff[i] = be(b, infos + static_cast<size_t>(i * 6), 4);
  zone->initialOffset_ = utoff[0];
  for (int64_t i = 0; i < timecnt; ++i) {
    const unsigned idx = static_cast<unsigned char>(b[types + static_cast<size_t>(i)]);
    if (idx >= utoff.size()) return bad();
    zone->transitions_.push_back(be(b, at + static_cast<size_t>(i * width), width));
    zone->offsets_.push_back(utoff[idx]);
  }
  return std::shared_ptr<const TimeZone>(zone);
}

Result<std::shared_ptr<const TimeZone>> TimeZone::load(const std::string& name,
                                                       const std::string& zoneinfoDir) {
  if (name.empty() || name == "UTC" || name == "Etc/UTC") {
    auto z = std::make_shared<TimeZone>();
    z->name_ = name.empty() ? "UTC" : name;
    return std::shared_ptr<const TimeZone>(z);
  }
  if (name.front() == '/' || name.find("..") != std::string::npos ||
      name.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") !=
          std::string::npos) {
    return Status::BadRequest("invalid time zone name " + name);
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const TimeZone>> cache;
  const std::string path = zoneinfoDir + "/" + name;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(path); it != cache.end()) return it->second;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFoundMessage("unknown time zone " + name);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto zone = fromTzif(name, bytes);
  if (!zone.ok()) return zone.status();
  std::lock_guard lock(mu);
  cache[path] = *zone;
  return *zone;
}

int64_t TimeZone::offsetAt(SysSeconds t) const {
  const int64_t s = t.time_since_epoch().count();
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), s);
  if (it == transitions_.begin()) return initialOffset_;
  return offsets_[static_cast<size_t>(it - transitions_.begin() - 1)];
}

LocalTime toLocal(SysSeconds t, const TimeZone& zone) {
  const auto local = t + seconds(zone.offsetAt(t));
  const auto day = std::chrono::floor<days>(local);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{local - day};
  const std::chrono::weekday wd{day};
  return {static_cast<int>(ymd.year()),
          static_cast<int>(static_cast<unsigned>(ymd.month())),
          static_cast<int>(static_cast<unsigned>(ymd.day())),
          static_cast<int>(hms.hours().count()),
          static_cast<int>(hms.minutes().count()),
          static_cast<int>(wd.c_encoding())};
}

namespace {

// The first instant whose local time is at or after the civil time y-m-d 00:00 (a midnight in
// a DST gap moves forward with it).
SysSeconds startOfLocalDay(std::chrono::year_month_day ymd, const TimeZone& zone) {
  const SysSeconds civil{std::chrono::sys_days(ymd).time_since_epoch()};
  std::optional<SysSeconds> best;
  for (auto probe : {civil - days(1), civil + days(1)}) {
    const SysSeconds u = civil - seconds(zone.offsetAt(probe));
    if (u + seconds(zone.offsetAt(u)) == civil && (!best || u < *best)) best = u;
  }
  if (best) return *best;
  return civil - seconds(zone.offsetAt(civil - days(1)));  // in the gap: after it
}

}  // namespace

Result<CronSchedule> CronSchedule::parse(const std::string& text) {
  std::string spec = text;
  while (!spec.empty() && std::isspace(static_cast<unsigned char>(spec.back()))) spec.pop_back();
  while (!spec.empty() && std::isspace(static_cast<unsigned char>(spec.front()))) spec.erase(0, 1);
  if (spec.empty()) return Status::BadRequest("empty spec string");
  static const std::map<std::string, std::string> descriptors = {
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"}};
  if (spec.front() == '@') {
    auto it = descriptors.find(spec);
    if (it == descriptors.end()) return Status::BadRequest("unrecognized descriptor: " + spec);
    spec = it->second;
  }
  std::vector<std::string> fields;
  std::istringstream in(spec);
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() != 5) {
    std::string joined;
    for (const auto& f : fields) joined += (joined.empty() ? "" : " ") + f;
    return Status::BadRequest("expected exactly 5 fields, found " + std::to_string(fields.size()) +
                              ": [" + joined + "]");
  }
  CronSchedule s;
  bool ignored = false;
  for (auto [i, field, bits, star] :
       {std::tuple{0, &kMinute, &s.minutes_, &ignored}, std::tuple{1, &kHour, &s.hours_, &ignored},
        std::tuple{2, &kDom, &s.days_, &s.daysStar_}, std::tuple{3, &kMonth, &s.months_, &ignored},
        std::tuple{4, &kDow, &s.weekdays_, &s.weekdaysStar_}}) {
    Status st = parseField(fields[static_cast<size_t>(i)], *field, *bits, *star);
    if (!st.ok()) return st;
  }
  return s;
}

std::optional<SysSeconds> CronSchedule::next(SysSeconds after, const TimeZone& zone) const {
  SysSeconds t = std::chrono::floor<minutes>(after) + minutes(1);
  const SysSeconds limit = t + days(5 * 366);
  while (t < limit) {
    const LocalTime l = toLocal(t, zone);
    if (!has(months_, l.month)) {
      std::chrono::year_month_day first{std::chrono::year(l.year), std::chrono::month(l.month),
                                        std::chrono::day(1)};
      first += std::chrono::months(1);
      t = startOfLocalDay(first, zone);
      continue;
    }
    const bool domOk = has(days_, l.day), dowOk = has(weekdays_, l.weekday);
    const bool dayOk = (daysStar_ || weekdaysStar_) ? (domOk && dowOk) : (domOk || dowOk);
    if (!dayOk) {
      std::chrono::year_month_day ymd{std::chrono::year(l.year), std::chrono::month(l.month),
                                      std::chrono::day(l.day)};
      t = startOfLocalDay(std::chrono::sys_days(ymd) + days(1), zone);
      continue;
    }
    if (!has(hours_, l.hour)) {
      t += minutes(60 - l.minute);
      continue;
    }
    if (!has(minutes_, l.minute)) {
      int m = l.minute + 1;
      while (m < 60 && !has(minutes_, m)) ++m;
      t += minutes(m - l.minute);
      continue;
    }
    return t;
  }
  return std::nullopt;
}

}  // namespace minik8s::api::cron
