// Lease-based leader election against a real in-process API server: one of two candidates leads,
// the other takes over once the leader stops renewing (observed on its own clock), a released
// lease is taken at once, and a leader that cannot renew steps down.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "client/leader_election.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<RestClient>(apiServer.url());
    rest->create(
        resources::kNamespaces, "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "kube-system"}}}});
  }
  LeaderElectionConfig config(const std::string& identity) {
    LeaderElectionConfig c;
    c.lockName = "kube-scheduler";
    c.identity = identity;
    c.clock = &clock;
    return c;
  }
  json lease() { return (*rest->get(resources::kLeases, "kube-system", "kube-scheduler"))["spec"]; }
  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<RestClient> rest;
  testing::FakeClock clock;
};

TEST_F(LeaderElectionTest, OnlyOneLeadsAndTheOtherTakesOverAfterTheLeaseExpires) {
  LeaderElector a(*rest, config("a")), b(*rest, config("b"));
  EXPECT_TRUE(a.tryAcquireOrRenew());
  EXPECT_FALSE(b.tryAcquireOrRenew());
  EXPECT_EQ(b.leader(), "a");
  json spec = lease();
  EXPECT_EQ(spec["holderIdentity"], "a");
  EXPECT_EQ(spec["leaseDurationSeconds"], 15);
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_TRUE(spec["renewTime"].is_string());
  EXPECT_EQ(spec["acquireTime"], spec["renewTime"]);

  // a renews: b keeps seeing fresh renewals and stays out, even after 15 s in total.
  clock.advance(10s);
  EXPECT_TRUE(a.tryAcquireOrRenew());
  EXPECT_FALSE(b.tryAcquireOrRenew());
  clock.advance(10s);
  EXPECT_FALSE(b.tryAcquireOrRenew());
  EXPECT_EQ(lease()["acquireTime"], spec["acquireTime"]);  // a renewed, not re-acquired

  // a stops renewing: 15 s after b last saw a change (at +10 s), b takes over.
  clock.advance(4s);
  EXPECT_FALSE(b.tryAcquireOrRenew());
  clock.advance(1s);
  EXPECT_TRUE(b.tryAcquireOrRenew());
  spec = lease();
  EXPECT_EQ(spec["holderIdentity"], "b");
  EXPECT_EQ(spec["leaseTransitions"], 1);
  // a comes back: it sees b's fresh lease and does not lead.
  EXPECT_FALSE(a.tryAcquireOrRenew());
  EXPECT_EQ(a.leader(), "b");
}

TEST_F(LeaderElectionTest, RunningCandidatesHandOverWithCallbacks) {
  std::atomic<int> aStarted{0}, aStopped{0}, bStarted{0};
  std::atomic<bool> bothLeading{false};
  LeaderElector* pa = nullptr;
  LeaderElector* pb = nullptr;
  auto ca = config("a");
  ca.retryPeriod = 20ms;
  ca.onStartedLeading = [&] { ++aStarted; };
  ca.onStoppedLeading = [&] { ++aStopped; };
  auto cb = config("b");
  cb.retryPeriod = 20ms;
  cb.onStartedLeading = [&] {
    ++bStarted;
    if (pa && pa->isLeader()) bothLeading = true;
  };
  LeaderElector a(*rest, ca);
  LeaderElector b(*rest, cb);
  pa = &a;
  pb = &b;
  a.start();
  ASSERT_TRUE(eventually([&] { return aStarted == 1; }));
  b.start();
  std::this_thread::sleep_for(200ms);  // b campaigns ~10 times
  EXPECT_TRUE(a.isLeader());
  EXPECT_FALSE(b.isLeader());
  EXPECT_EQ(b.leader(), "a");
  // a stops and releases the lease: b leads at once, without waiting for the lease to expire.
  a.stop();
  EXPECT_EQ(aStopped, 1);
  EXPECT_FALSE(a.isLeader());
  ASSERT_TRUE(eventually([&] { return bStarted == 1; }));
  EXPECT_TRUE(pb->isLeader());
  EXPECT_FALSE(bothLeading);
  EXPECT_EQ(lease()["holderIdentity"], "b");
  EXPECT_EQ(lease()["leaseTransitions"], 1);
  b.stop();
  EXPECT_EQ(lease()["holderIdentity"], "");
}

TEST_F(LeaderElectionTest, ALeaderThatCannotRenewStepsDown) {
  std::atomic<int> started{0}, stopped{0};
  auto c = config("a");
  c.retryPeriod = 20ms;
  c.renewDeadline = 5s;
  c.releaseOnStop = false;
  c.onStartedLeading = [&] { ++started; };
  c.onStoppedLeading = [&] { ++stopped; };
  LeaderElector a(*rest, c);
  a.start();
  ASSERT_TRUE(eventually([&] { return started == 1; }));
  // Another candidate steals the lease (as if a had been partitioned away long enough).
  // a renews every 20 ms, so a read-modify-write may meet a newer resourceVersion (409): retry
  // until one lands between two renewals, as any other writer would.
  ASSERT_TRUE(eventually([&] {
    json l = *rest->get(resources::kLeases, "kube-system", "kube-scheduler");
    l["spec"]["holderIdentity"] = "thief";
    return rest->update(resources::kLeases, l).ok();
  }));
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(a.isLeader());  // within the renew deadline it keeps trying
  clock.advance(6s);
  ASSERT_TRUE(eventually([&] { return stopped == 1; }));
  EXPECT_FALSE(a.isLeader());
  a.stop();
  EXPECT_EQ(lease()["holderIdentity"], "thief");
}

}  // namespace
}  // namespace minik8s::client
