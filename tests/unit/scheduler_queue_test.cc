// The scheduling queue's active, backoff and unschedulable queues, with a fake clock.
#include <gtest/gtest.h>

#include "fake_clock.h"
#include "scheduler/scheduling_queue.h"

namespace minik8s::scheduler {
namespace {

using namespace std::chrono_literals;

using testing::FakeClock;

class SchedulingQueueTest : public ::testing::Test {
 protected:
  FakeClock clock;
  SchedulingQueue q{clock, QueueOptions{1000ms, 4000ms, 60000ms}};
};

TEST_F(SchedulingQueueTest, ActiveQueueIsFifoAndDeduplicates) {
  q.add("ns/a");
  q.add("ns/b");
  q.add("ns/a");
  EXPECT_EQ(q.activeLength(), 2u);
  EXPECT_EQ(*q.pop(1ms), "ns/a");
  EXPECT_EQ(*q.pop(1ms), "ns/b");
  EXPECT_FALSE(q.pop(1ms).has_value());
}

TEST_F(SchedulingQueueTest, UnschedulablePodsWaitForAClusterEventThenBackOff) {
  q.add("ns/a");
  ASSERT_TRUE(q.pop(1ms));
  q.addUnschedulable("ns/a", q.schedulingCycle());
  EXPECT_EQ(q.unschedulableLength(), 1u);
  q.add("ns/a");  // an informer resync does not bypass the wait
  EXPECT_FALSE(q.pop(1ms).has_value());
  // A node appears right away: the pod still waits out its 1 s back-off.
  q.moveAllToActiveOrBackoff();
  EXPECT_EQ(q.unschedulableLength(), 0u);
  EXPECT_EQ(q.backoffLength(), 1u);
  clock.t += 999ms;
  EXPECT_FALSE(q.pop(1ms).has_value());
  clock.t += 1ms;
  EXPECT_EQ(*q.pop(1ms), "ns/a");
}

TEST_F(SchedulingQueueTest, BackoffDoublesUpToTheMaximum) {
  for (auto expected : {1000ms, 2000ms, 4000ms, 4000ms}) {
    q.addBackoff("ns/a");
    clock.t += expected - 1ms;
    q.flush();
    EXPECT_EQ(q.activeLength(), 0u) << expected.count();
    clock.t += 1ms;
    q.flush();
    EXPECT_EQ(q.activeLength(), 1u) << expected.count();
    ASSERT_TRUE(q.pop(1ms));
  }
  EXPECT_EQ(q.attempts("ns/a"), 4);
  q.remove("ns/a");
  EXPECT_EQ(q.attempts("ns/a"), 0);
}

TEST_F(SchedulingQueueTest, AMoveDuringTheAttemptSendsThePodToBackoffNotUnschedulable) {
  q.add("ns/a");
  ASSERT_TRUE(q.pop(1ms));
  int64_t cycle = q.schedulingCycle();
  q.moveAllToActiveOrBackoff();  // a node was added while the pod was being scheduled
  q.addUnschedulable("ns/a", cycle);
  EXPECT_EQ(q.unschedulableLength(), 0u);
  EXPECT_EQ(q.backoffLength(), 1u);
}

TEST_F(SchedulingQueueTest, UnschedulablePodsAreRetriedAfterTheTimeout) {
  q.add("ns/a");
  ASSERT_TRUE(q.pop(1ms));
  q.addUnschedulable("ns/a", q.schedulingCycle());
  clock.t += 59s;
  EXPECT_FALSE(q.pop(1ms).has_value());
  clock.t += 1s;
  EXPECT_EQ(*q.pop(1ms), "ns/a");
}

TEST_F(SchedulingQueueTest, DueBackoffsComeOutEarliestFirstAndOnlyWhenDue) {
  // Three pods failing at different times (names in the reverse order of their expiries): each
  // comes back exactly when its own back-off ends, the earliest first.
  for (const char* key : {"ns/c", "ns/b", "ns/a"}) {
    q.add(key);
    ASSERT_TRUE(q.pop(1ms));
    q.addBackoff(key);  // 1 s from now
    clock.t += 100ms;
  }
  EXPECT_EQ(q.backoffLength(), 3u);
  clock.t += 700ms;  // c's back-off ends at +1000 ms: now is +1000 ms
  EXPECT_EQ(*q.pop(1ms), "ns/c");
  EXPECT_FALSE(q.pop(1ms).has_value());
  clock.t += 200ms;
  EXPECT_EQ(*q.pop(1ms), "ns/b");
  EXPECT_EQ(*q.pop(1ms), "ns/a");
  EXPECT_EQ(q.backoffLength(), 0u);
  // A pod backing off again moves to its new expiry (its third failure: 4 s, the maximum), not
  // a copy.
  q.addBackoff("ns/a");
  q.addBackoff("ns/a");
  EXPECT_EQ(q.backoffLength(), 1u);
  clock.t += 3999ms;
  EXPECT_FALSE(q.pop(1ms).has_value());
  clock.t += 1ms;
  EXPECT_EQ(*q.pop(1ms), "ns/a");
}

TEST(TimedKeysTest, OrderedByTimeWithOneEntryPerKey) {
  TimedKeys k;
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  k.set("z", t0 + 3s);
  k.set("y", t0 + 1s);
  k.set("x", t0 + 2s);
  k.set("z", t0);  // moved, not added
  EXPECT_EQ(k.size(), 3u);
  EXPECT_TRUE(k.contains("x"));
  EXPECT_EQ(k.takeUntil(t0 + 1s), (std::vector<std::string>{"z", "y"}));
  EXPECT_FALSE(k.contains("z"));
  EXPECT_TRUE(k.erase("x"));
  EXPECT_FALSE(k.erase("x"));
  EXPECT_TRUE(k.takeUntil(t0 + 1h).empty());
  k.set("b", t0 + 2s);
  k.set("a", t0 + 5s);
  auto all = k.takeAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, "b");
  EXPECT_EQ(all[1].first, "a");
  EXPECT_EQ(k.size(), 0u);
}

TEST_F(SchedulingQueueTest, RemoveForgetsAPodEverywhereAndCloseWakesPop) {
  q.add("ns/a");
  q.add("ns/b");
  q.remove("ns/a");
  EXPECT_EQ(*q.pop(1ms), "ns/b");
  q.addUnschedulable("ns/b", q.schedulingCycle());
  q.remove("ns/b");
  q.moveAllToActiveOrBackoff();
  EXPECT_FALSE(q.pop(1ms).has_value());
  std::thread closer([&] {
    std::this_thread::sleep_for(20ms);
    q.close();
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(q.pop(10s).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  closer.join();
}

}  // namespace
}  // namespace minik8s::scheduler
