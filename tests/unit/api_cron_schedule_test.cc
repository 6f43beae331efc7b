// Cron schedules exactly: fields, lists, ranges, steps, names, descriptors, the day-of-month /
// day-of-week rule, errors with robfig/cron's wording, and time zones from the system tzdata
// across daylight-saving changes (a skipped time does not fire, a repeated one fires twice).
#include <gtest/gtest.h>

#include "api/cron_schedule.h"
#include "common/time_util.h"

namespace minik8s::api::cron {
namespace {

SysSeconds at(const std::string& rfc3339) {
  auto t = parseRfc3339(rfc3339);
  EXPECT_TRUE(t) << rfc3339;
  return std::chrono::floor<std::chrono::seconds>(*t);
}

std::string next(const std::string& spec, const std::string& after,
                 const std::string& zone = "UTC") {
  auto s = CronSchedule::parse(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().message();
  if (!s.ok()) return "";
  auto z = TimeZone::load(zone);
  EXPECT_TRUE(z.ok()) << zone;
  auto t = s->next(at(after), **z);
  return t ? formatRfc3339(Clock::time_point(*t)) : "none";
}

std::string error(const std::string& spec) {
  auto s = CronSchedule::parse(spec);
  return s.ok() ? "" : s.status().message();
}

TEST(CronScheduleTest, FieldsListsRangesAndSteps) {
  EXPECT_EQ(next("* * * * *", "2026-01-01T10:07:30Z"), "2026-01-01T10:08:00Z");
  EXPECT_EQ(next("*/15 * * * *", "2026-01-01T10:07:00Z"), "2026-01-01T10:15:00Z");
  EXPECT_EQ(next("*/15 * * * *", "2026-01-01T10:15:00Z"),
            "2026-01-01T10:30:00Z");  // strictly after
  EXPECT_EQ(next("5,35 9-17/4 * * *", "2026-01-01T09:40:00Z"), "2026-01-01T13:05:00Z");
  EXPECT_EQ(next("10/20 * * * *", "2026-01-01T00:31:00Z"), "2026-01-01T00:50:00Z");  // 10-59/20
  EXPECT_EQ(next("0 0 29 2 *", "2026-01-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(next("0 12 * jan,JUL mon", "2026-02-01T00:00:00Z"), "2026-07-06T12:00:00Z");
  EXPECT_EQ(next("0 0 31 * *", "2026-04-01T00:00:00Z"), "2026-05-31T00:00:00Z");
}

TEST(CronScheduleTest, DayOfMonthOrDayOfWeekUnlessOneIsAStar) {
  // 2026-11-01 is a Sunday.
  EXPECT_EQ(next("0 0 13 * 5", "2026-11-01T00:00:00Z"), "2026-11-06T00:00:00Z");  // Friday first
  EXPECT_EQ(next("0 0 13 * *", "2026-11-01T00:00:00Z"), "2026-11-13T00:00:00Z");
  EXPECT_EQ(next("0 0 * * SUN", "2026-11-01T00:00:00Z"), "2026-11-08T00:00:00Z");
  EXPECT_EQ(next("0 0 ? * 0", "2026-11-01T00:00:00Z"), "2026-11-08T00:00:00Z");
}

TEST(CronScheduleTest, Descriptors) {
  EXPECT_EQ(next("@hourly", "2026-01-01T10:00:00Z"), "2026-01-01T11:00:00Z");
  EXPECT_EQ(next("@daily", "2026-01-01T10:00:00Z"), "2026-01-02T00:00:00Z");
  EXPECT_EQ(next("@midnight", "2026-01-01T10:00:00Z"), "2026-01-02T00:00:00Z");
  EXPECT_EQ(next("@weekly", "2026-11-01T00:00:00Z"), "2026-11-08T00:00:00Z");
  EXPECT_EQ(next("@monthly", "2026-01-15T00:00:00Z"), "2026-02-01T00:00:00Z");
  EXPECT_EQ(next("@yearly", "2026-01-15T00:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@annually", "2026-01-15T00:00:00Z"), "2027-01-01T00:00:00Z");
}

TEST(CronScheduleTest, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(error("* * * *"), "expected exactly 5 fields, found 4: [* * * *]");
  EXPECT_EQ(error("70 * * * *"), "end of range (70) above maximum (59): 70");
  EXPECT_EQ(error("* 5-2 * * *"), "beginning of range (5) beyond end of range (2): 5-2");
  EXPECT_EQ(error("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(error("@reboot"), "unrecognized descriptor: @reboot");
  EXPECT_EQ(error("1-2-3 * * * *"), "too many hyphens: 1-2-3");
  EXPECT_EQ(error("*/0 * * * *"), "step of range should be a positive number: */0");
  EXPECT_EQ(error("x * * * *"), "failed to parse int from x: invalid syntax in minute field x");
  EXPECT_EQ(error("* * * foo *"),
            "failed to parse int from foo: invalid syntax in month field foo");
  EXPECT_EQ(error(""), "empty spec string");
  EXPECT_EQ(error("1,,2 * * * *"), "empty value in minute: 1,,2");
}

TEST(CronTimeZoneTest, LoadsTzdataAndRefusesBadNames) {
  auto berlin = TimeZone::load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.status().message();
  EXPECT_EQ((*berlin)->offsetAt(at("2026-01-15T12:00:00Z")), 3600);
  EXPECT_EQ((*berlin)->offsetAt(at("2026-07-15T12:00:00Z")), 7200);
  EXPECT_EQ(TimeZone::load("Nowhere/Land").status().code(), 404);
  EXPECT_EQ(TimeZone::load("../../etc/passwd").status().code(), 400);
  EXPECT_EQ(TimeZone::load("/etc/localtime").status().code(), 400);
  EXPECT_FALSE(TimeZone::fromTzif("x", "not a tzif file").ok());
  EXPECT_EQ(TimeZone::utc().offsetAt(at("2026-07-15T12:00:00Z")), 0);
}

TEST(CronTimeZoneTest, ScheduleRunsOnLocalWallClock) {
  EXPECT_EQ(next("0 9 * * 1-5", "2026-01-02T12:00:00Z", "Europe/Berlin"),  // Friday, after 9:00
            "2026-01-05T08:00:00Z");                                       // Monday 9:00 CET
  EXPECT_EQ(next("0 9 * * *", "2026-07-01T00:00:00Z", "Europe/Berlin"), "2026-07-01T07:00:00Z");
  EXPECT_EQ(next("30 5 * * *", "2026-01-01T00:00:00Z", "Asia/Kolkata"),  // +05:30
            "2026-01-02T00:00:00Z");
}

TEST(CronTimeZoneTest, SpringForwardSkipsAndFallBackRepeats) {
  // New York 2026: 2:00 EST -> 3:00 EDT on March 8; 2:00 EDT -> 1:00 EST on November 1.
  EXPECT_EQ(next("30 2 * * *", "2026-03-07T12:00:00Z", "America/New_York"),
            "2026-03-09T06:30:00Z");  // 2:30 does not exist on March 8
  EXPECT_EQ(next("30 3 * * *", "2026-03-07T12:00:00Z", "America/New_York"),
            "2026-03-08T07:30:00Z");  // 3:30 EDT
  EXPECT_EQ(next("30 1 * * *", "2026-11-01T04:00:00Z", "America/New_York"),
            "2026-11-01T05:30:00Z");  // 1:30 EDT
  EXPECT_EQ(next("30 1 * * *", "2026-11-01T05:30:00Z", "America/New_York"),
            "2026-11-01T06:30:00Z");  // 1:30 EST, the repeated hour
  EXPECT_EQ(next("30 1 * * *", "2026-11-01T06:30:00Z", "America/New_York"), "2026-11-02T06:30:00Z");
  EXPECT_EQ(next("0 0 * * *", "2026-03-07T12:00:00Z", "America/New_York"), "2026-03-08T05:00:00Z");
}

}  // namespace
}  // namespace minik8s::api::cron
