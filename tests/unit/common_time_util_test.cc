// common/time_util: Go durations (time.ParseDuration's grammar, exact to the nanosecond before
// truncation to milliseconds) and RFC 3339 round trips.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/time_util.h"

namespace minik8s {
namespace {

using std::chrono::milliseconds;

TEST(GoDurationTest, ParsesWhatGoWrites) {
  EXPECT_EQ(parseGoDuration("0"), milliseconds(0));
  EXPECT_EQ(parseGoDuration("0s"), milliseconds(0));
  EXPECT_EQ(parseGoDuration("15s"), milliseconds(15'000));
  EXPECT_EQ(parseGoDuration("5m0s"), milliseconds(300'000));
  EXPECT_EQ(parseGoDuration("1m30s"), milliseconds(90'000));
  EXPECT_EQ(parseGoDuration("2h45m"), milliseconds((2 * 3600 + 45 * 60) * 1000));
  EXPECT_EQ(parseGoDuration("1.5h"), milliseconds(5'400'000));
  EXPECT_EQ(parseGoDuration("300ms"), milliseconds(300));
  EXPECT_EQ(parseGoDuration("+5s"), milliseconds(5000));
  EXPECT_EQ(parseGoDuration(".5s"), milliseconds(500));
  EXPECT_EQ(parseGoDuration("5.s"), milliseconds(5000));
  EXPECT_EQ(parseGoDuration("1h1m1s1ms1us1ns"), milliseconds(3'661'001));
  EXPECT_EQ(parseGoDuration("1500us"), milliseconds(1));
  EXPECT_EQ(parseGoDuration("2000\u00b5s"), milliseconds(2));  // micro sign
  EXPECT_EQ(parseGoDuration("3000\u03bcs"), milliseconds(3));  // Greek mu
  EXPECT_EQ(parseGoDuration("999999ns"), milliseconds(0));     // truncated
}

TEST(GoDurationTest, IsExactWhereFloatingPointWouldNotBe) {
  EXPECT_EQ(parseGoDuration("1.001s"), milliseconds(1001));
  EXPECT_EQ(parseGoDuration("0.007s"), milliseconds(7));
  EXPECT_EQ(parseGoDuration("4.035s"), milliseconds(4035));
  EXPECT_EQ(parseGoDuration("1.000000000000000000001h"), milliseconds(3'600'000));
}

TEST(GoDurationTest, RefusesMalformedAndOutOfRange) {
  const std::vector<std::string> bad = {"",    "s",   ".",  ".s",    "10",  "1.2.3s", "1sx",
                                        "1 s", "-1s", "1d", "3000y", "s10", "1h-1m"};
  for (const auto& text : bad) EXPECT_EQ(parseGoDuration(text), std::nullopt) << text;
  EXPECT_EQ(parseGoDuration("9223372036854775807ns"), milliseconds(9223372036854));
  EXPECT_EQ(parseGoDuration("9223372036854775808ns"), std::nullopt);
  EXPECT_EQ(parseGoDuration("2562047h47m16.854775807s"), milliseconds(9223372036854));
  EXPECT_EQ(parseGoDuration("2562048h"), std::nullopt);
  EXPECT_EQ(parseGoDuration("99999999999999999999s"), std::nullopt);
}

TEST(Rfc3339Test, RoundTripsSecondsAndMicroseconds) {
  const Clock::time_point t = Clock::from_time_t(1704164645) + std::chrono::microseconds(123456);
  EXPECT_EQ(formatRfc3339(t), "2024-01-02T03:04:05Z");
  EXPECT_EQ(formatRfc3339Micro(t), "2024-01-02T03:04:05.123456Z");
  auto back = parseRfc3339(formatRfc3339Micro(t));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, t);
  EXPECT_EQ(parseRfc3339("2024-01-02T05:04:05+02:00"), Clock::from_time_t(1704164645));
  EXPECT_EQ(parseRfc3339("yesterday"), std::nullopt);
}

}  // namespace
}  // namespace minik8s
