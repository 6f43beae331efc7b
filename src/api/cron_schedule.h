// Cron schedules as Kubernetes' CronJob reads them (the standard five fields of robfig/cron:
// minute hour day-of-month month day-of-week, with lists, ranges, steps, names, `?`, and the
// descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly), evaluated in an IANA
// time zone read from the system's tzdata (TZif files under /usr/share/zoneinfo).
//
// next() walks absolute time and checks the local wall-clock fields, as robfig/cron does: a time
// skipped by a DST spring-forward does not fire that day, a time repeated by a fall-back fires
// at both instants. Thread-safe once built (immutable).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::api::cron {

using SysSeconds = std::chrono::sys_seconds;

// One IANA zone: UTC offsets and the instants they change. Beyond the last transition of the
// file the last offset holds (Debian ships "fat" TZif files with transitions up to 2037).
class TimeZone {
 public:
  static const TimeZone& utc();
  // "Europe/Berlin", "UTC", "Etc/GMT+5"... NotFound (with the name) when unknown; BadRequest
  // when the name is not a zone name (absolute, "..").
  static Result<std::shared_ptr<const TimeZone>> load(
      const std::string& name, const std::string& zoneinfoDir = "/usr/share/zoneinfo");
  // Parses the contents of a TZif file.
  static Result<std::shared_ptr<const TimeZone>> fromTzif(const std::string& name,
                                                          const std::string& bytes);

  const std::string& name() const { return name_; }
  // Seconds east of UTC at `t`.
  int64_t offsetAt(SysSeconds t) const;

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;  // instants (unix seconds), ascending
  std::vector<int64_t> offsets_;      // offset from transitions_[i] on
  int64_t initialOffset_ = 0;         // before the first transition
};

// Local wall-clock fields of an instant in a zone.
struct LocalTime {
  int year, month, day, hour, minute, weekday;  // month 1-12, weekday 0 = Sunday
};
LocalTime toLocal(SysSeconds t, const TimeZone& zone);

class CronSchedule {
 public:
  // BadRequest with robfig/cron's kind of message ("expected exactly 5 fields, found 2: [a b]",
  // "end of range (70) above maximum (59): 0-70") when `spec` does not parse.
  static Result<CronSchedule> parse(const std::string& spec);

  // The first activation strictly after `after`, or nullopt if none within 5 years.
  std::optional<SysSeconds> next(SysSeconds after, const TimeZone& zone) const;

 private:
  uint64_t minutes_ = 0, hours_ = 0, days_ = 0, months_ = 0, weekdays_ = 0;
  bool daysStar_ = false, weekdaysStar_ = false;  // `*` or `?`: the other day field decides
};

}  // namespace minik8s::api::cron
