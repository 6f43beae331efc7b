// ReplicaSet controller pieces that need no server: expectations under a fake clock and the
// scale-down preference order.
#include <gtest/gtest.h>

#include <algorithm>

#include "controllers/replicaset/expectations.h"
#include "controllers/replicaset/replicaset_controller.h"

namespace minik8s::controllers {
namespace {

class ManualClock : public client::Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return t; }
  std::chrono::steady_clock::time_point t{};
};

TEST(ExpectationsTest, CreationsMustBeObservedBeforeActingAgain) {
  ManualClock clock;
  ControllerExpectations e(clock, std::chrono::minutes(5));
  EXPECT_TRUE(e.satisfied("ns/rs"));  // never recorded
  e.expectCreations("ns/rs", 2);
  EXPECT_FALSE(e.satisfied("ns/rs"));
  e.creationObserved("ns/rs");
  EXPECT_FALSE(e.satisfied("ns/rs"));
  EXPECT_EQ(e.pendingCreations("ns/rs"), 1);
  e.creationObserved("ns/rs");
  EXPECT_TRUE(e.satisfied("ns/rs"));
  e.creationObserved("ns/rs");  // extra observations never go negative
  EXPECT_EQ(e.pendingCreations("ns/rs"), 0);
}

TEST(ExpectationsTest, DeletionsTrackedByUid) {
  ManualClock clock;
  ControllerExpectations e(clock);
  e.expectDeletions("ns/rs", {"a", "b"});
  e.deletionObserved("ns/rs", "zzz");  // someone else's pod
  EXPECT_EQ(e.pendingDeletions("ns/rs"), 2u);
  e.deletionObserved("ns/rs", "a");
  e.deletionObserved("ns/rs", "a");  // the same pod twice counts once
  EXPECT_FALSE(e.satisfied("ns/rs"));
  e.deletionObserved("ns/rs", "b");
  EXPECT_TRUE(e.satisfied("ns/rs"));
}

TEST(ExpectationsTest, ExpireAfterTtlAndErase) {
  ManualClock clock;
  ControllerExpectations e(clock, std::chrono::minutes(5));
  e.expectCreations("k", 3);
  clock.t += std::chrono::minutes(4);
  EXPECT_FALSE(e.satisfied("k"));
  clock.t += std::chrono::minutes(2);
  EXPECT_TRUE(e.satisfied("k"));  // a lost watch event cannot block for ever
  e.expectCreations("k", 1);
  EXPECT_FALSE(e.satisfied("k"));
  e.erase("k");
  EXPECT_TRUE(e.satisfied("k"));
  EXPECT_TRUE(e.satisfied("other"));
}

json pod(const std::string& name, const std::string& node, const std::string& phase, bool ready,
         const std::string& created, int restarts = 0) {
  json p = {{"metadata", {{"name", name}, {"creationTimestamp", created}}},
            {"spec", json::object()},
            {"status",
             {{"phase", phase},
              {"conditions",
               {{{"type", "Ready"},
                 {"status", ready ? "True" : "False"},
                 {"lastTransitionTime", created}}}},
              {"containerStatuses", {{{"name", "c"}, {"restartCount", restarts}}}}}}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  return p;
}

std::vector<std::string> order(std::vector<json> pods) {
  std::sort(pods.begin(), pods.end(), podDeletionLess);
  std::vector<std::string> names;
  for (const auto& p : pods) names.push_back(p["metadata"]["name"]);
  return names;
}

TEST(PodDeletionOrderTest, UnscheduledThenPendingThenNotReadyThenNewest) {
  const std::string t1 = "2024-01-01T00:00:01Z", t2 = "2024-01-01T00:00:02Z";
  EXPECT_EQ(
      order({pod("running-ready", "n1", "Running", true, t1),
             pod("unscheduled", "", "Pending", false, t1),
             pod("pending", "n1", "Pending", false, t1),
             pod("running-notready", "n1", "Running", false, t1)}),
      std::vector<std::string>({"unscheduled", "pending", "running-notready", "running-ready"}));
  // Among equally ready pods: ready for less time first, then more restarts, then newest.
  EXPECT_EQ(order({pod("old", "n1", "Running", true, t1), pod("new", "n1", "Running", true, t2)}),
            std::vector<std::string>({"new", "old"}));
  EXPECT_EQ(order({pod("calm", "n1", "Running", false, t1),
                   pod("crashy", "n1", "Running", false, t1, 5)}),
            std::vector<std::string>({"crashy", "calm"}));
  EXPECT_EQ(order({pod("a", "n1", "Running", false, t1), pod("b", "n1", "Running", false, t2)}),
            std::vector<std::string>({"b", "a"}));
}

}  // namespace
}  // namespace minik8s::controllers
