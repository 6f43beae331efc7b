// The autoscaler's decisions with a fake clock: cold start, scale-up under load, panic mode, the
// stable window, scale to zero after the idle window, min/max clamps.
#include <gtest/gtest.h>

#include "fake_clock.h"
#include "serverless/autoscaler.h"

namespace minik8s::serverless {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class AutoscalerTest : public ::testing::Test {
 protected:
  void SetUp() override { configure({}); }
  void configure(const ScaleSettings& s) { scaler.configure(kKey, s); }
  // Holds `n` more requests in flight (negative: ends that many).
  void load(int n) {
    for (; n > 0; --n) scaler.requestStarted(kKey);
    for (; n < 0; ++n) scaler.requestFinished(kKey);
  }
  // Lets `s` seconds pass with one sample per second.
  void run(int s) {
    for (int i = 0; i < s; ++i) {
      clock.advance(seconds(1));
      scaler.sample();
    }
  }
  int desired(int ready, int current = -1) {
    return scaler.decide(kKey, ready, current < 0 ? ready : current).desired;
  }

  static constexpr const char* kKey = "apps/hello";
  testing::FakeClock clock;
  Autoscaler scaler{clock};
};

TEST_F(AutoscalerTest, ColdStartAsksForOneInstanceAtTheFirstRequest) {
  EXPECT_EQ(desired(0), 0);
  run(5);
  EXPECT_EQ(desired(0), 0);
  load(1);  // held by the activator
  EXPECT_EQ(desired(0), 1);
  EXPECT_EQ(scaler.inFlight(kKey), 1);
}

TEST_F(AutoscalerTest, ABurstAtZeroAsksForEnoughInstancesAtOnce) {
  load(50);  // held while no instance is ready
  ScaleDecision d = scaler.decide(kKey, 0, 0);
  EXPECT_EQ(d.desired, 5);
  EXPECT_TRUE(d.panicking);
}

TEST_F(AutoscalerTest, StableLoadGetsConcurrencyOverTarget) {
  load(25);
  run(10);
  ScaleDecision d = scaler.decide(kKey, 3, 3);  // 25 < 2 x 3 x 10: no panic
  EXPECT_FALSE(d.panicking);
  EXPECT_DOUBLE_EQ(d.stableConcurrency, 25);
  EXPECT_EQ(d.desired, 3);
  load(10);  // 35
  run(60);
  EXPECT_EQ(desired(3), 4);
}

TEST_F(AutoscalerTest, SamplesAreTimeWeighted) {
  load(10);
  clock.advance(milliseconds(500));
  load(-10);
  clock.advance(milliseconds(500));
  scaler.sample();  // 10 in flight for half of the second
  EXPECT_DOUBLE_EQ(scaler.decide(kKey, 1, 1).stableConcurrency, 5);
}

TEST_F(AutoscalerTest, PanicScalesUpAtOnceAndNeverDownWhilePanicking) {
  load(10);
  run(60);
  EXPECT_EQ(desired(1), 1);
  load(40);  // a step to 50 with one instance ready: 50 >= 2 x 1 x 10
  run(6);
  ScaleDecision d = scaler.decide(kKey, 1, 1);
  EXPECT_TRUE(d.panicking);
  EXPECT_EQ(d.desired, 5);  // the 6 s average, not the 60 s one (which is ~14)
  load(-45);                // back to 5 in flight
  run(10);
  d = scaler.decide(kKey, 5, 5);
  EXPECT_TRUE(d.panicking);
  EXPECT_EQ(d.desired, 5);  // no scale-down while panicking
  run(50);
  d = scaler.decide(kKey, 5, 5);  // a stable window after the last overload: panic over
  EXPECT_FALSE(d.panicking);
  EXPECT_LT(d.desired, 5);
}

TEST_F(AutoscalerTest, StableWindowScalesDownGradually) {
  load(40);
  run(60);
  EXPECT_EQ(desired(4), 4);
  load(-30);  // 10 in flight
  run(30);    // the 60 s mean is (30 x 40 + 30 x 10) / 60 = 25
  EXPECT_EQ(desired(4), 3);
  run(30);
  EXPECT_EQ(desired(4), 1);
}

TEST_F(AutoscalerTest, ScalesToZeroAfterTheIdleWindowOnly) {
  ScaleSettings s;
  s.scaleToZeroAfter = seconds(5);
  configure(s);
  load(1);
  run(2);
  load(-1);
  run(4);
  EXPECT_EQ(desired(1), 1);  // 4 s idle
  run(1);
  EXPECT_EQ(desired(1), 0);  // 5 s idle
  load(1);                   // the next request wakes it
  EXPECT_EQ(desired(0), 1);
}

TEST_F(AutoscalerTest, ALongRequestKeepsItsInstance) {
  ScaleSettings s;
  s.scaleToZeroAfter = seconds(5);
  configure(s);
  load(1);
  run(30);
  EXPECT_EQ(desired(1), 1);
}

TEST_F(AutoscalerTest, MinAndMaxClamp) {
  ScaleSettings s;
  s.minScale = 2;
  s.maxScale = 3;
  s.scaleToZeroAfter = seconds(1);
  configure(s);
  run(10);
  EXPECT_EQ(desired(2), 2);  // idle, but minScale 2
  load(100);
  run(10);
  EXPECT_EQ(desired(2), 3);  // 10 wanted, maxScale 3
}

TEST_F(AutoscalerTest, AFunctionSeenFirstKeepsWhatItHasUntilIdle) {
  // A gateway that (re)starts finds a Function with 3 instances and no traffic yet.
  EXPECT_EQ(desired(3, 3), 3);
  run(29);
  EXPECT_EQ(desired(3, 3), 3);
  run(1);
  EXPECT_EQ(desired(3, 3), 0);
}

TEST_F(AutoscalerTest, UnknownAndForgottenFunctions) {
  EXPECT_EQ(scaler.decide("other/fn", 1, 1).desired, 0);
  scaler.requestStarted("other/fn");  // ignored
  EXPECT_EQ(scaler.inFlight("other/fn"), 0);
  scaler.forget(kKey);
  EXPECT_EQ(scaler.decide(kKey, 1, 1).desired, 0);
}

}  // namespace
}  // namespace minik8s::serverless
