// RuntimeReadiness: the node says NotReady for its runtime only once the runtime has been silent
// for the grace period (the kubelet's maxWaitForContainerRuntime), so a containerd restart does
// not flap the node (found by the chaos soak: a 1 s containerd outage made the node NotReady for
// ~10 s and, with a short eviction timeout, evicted its pods).
#include <gtest/gtest.h>

#include "kubelet/node_status.h"

namespace minik8s::kubelet {
namespace {

using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

TEST(RuntimeReadiness, NotReadyUntilTheRuntimeFirstAnswers) {
  RuntimeReadiness r(seconds(30));
  const SteadyClock::time_point t0{};
  EXPECT_FALSE(r.observe(false, t0));
  EXPECT_FALSE(r.observe(false, t0 + seconds(40)));
  EXPECT_TRUE(r.observe(true, t0 + seconds(50)));
}

TEST(RuntimeReadiness, AShortOutageKeepsTheNodeReady) {
  RuntimeReadiness r(seconds(30));
  const SteadyClock::time_point t0{};
  EXPECT_TRUE(r.observe(true, t0));
  EXPECT_TRUE(r.observe(false, t0 + seconds(10)));
  EXPECT_TRUE(r.observe(false, t0 + seconds(29)));
  EXPECT_TRUE(r.observe(true, t0 + seconds(35)));
  EXPECT_TRUE(r.observe(false, t0 + seconds(64)));
}

TEST(RuntimeReadiness, NotReadyOnceSilentForTheGraceThenReadyAtTheFirstAnswer) {
  RuntimeReadiness r(seconds(30));
  const SteadyClock::time_point t0{};
  EXPECT_TRUE(r.observe(true, t0));
  EXPECT_FALSE(r.observe(false, t0 + seconds(30)));
  EXPECT_FALSE(r.observe(false, t0 + seconds(100)));
  EXPECT_TRUE(r.observe(true, t0 + seconds(101)));
}

}  // namespace
}  // namespace minik8s::kubelet
