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
