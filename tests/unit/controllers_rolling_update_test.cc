// Rollout arithmetic and shared helpers of the workload controllers, checked against the
// numbers Kubernetes produces.
#include <gtest/gtest.h>

#include "controllers/common/controller_utils.h"
#include "controllers/deployment/rolling_update.h"

namespace minik8s::controllers {
namespace {

TEST(ScaledValueTest, PercentagesRoundLikeKubernetes) {
  EXPECT_EQ(*scaledValue("25%", 10, true), 3);   // 2.5 up
  EXPECT_EQ(*scaledValue("25%", 10, false), 2);  // 2.5 down
  EXPECT_EQ(*scaledValue("10%", 3, true), 1);
  EXPECT_EQ(*scaledValue("10%", 3, false), 0);
  EXPECT_EQ(*scaledValue("100%", 7, false), 7);
  EXPECT_EQ(*scaledValue(4, 100, true), 4);
  EXPECT_EQ(*scaledValue("4", 100, true), 4);
  EXPECT_EQ(scaledValue("x%", 10, true).status().code(), 400);
  EXPECT_EQ(scaledValue("12a", 10, true).status().code(), 400);
  EXPECT_EQ(scaledValue(json::array(), 10, true).status().code(), 400);
}

TEST(FencepostsTest, DefaultsAndZeroZero) {
  auto f = resolveFenceposts("25%", "25%", 10);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->maxSurge, 3);
  EXPECT_EQ(f->maxUnavailable, 2);
  f = resolveFenceposts(0, 0, 5);
  EXPECT_EQ(f->maxSurge, 0);
  EXPECT_EQ(f->maxUnavailable, 1);  // a rollout must be able to move
  f = resolveFenceposts("25%", "25%", 1);
  EXPECT_EQ(f->maxSurge, 1);
  EXPECT_EQ(f->maxUnavailable, 0);
  EXPECT_FALSE(resolveFenceposts("bad", 1, 3).ok());
}

TEST(NewReplicaSetReplicasTest, GrowsWithinSurge) {
  // 10 replicas, surge 3, old RS at 10, new at 0: new may grow to 3.
  EXPECT_EQ(newReplicaSetReplicas(10, 3, 10, 0), 3);
  // Already at the ceiling of 13 pods: no growth.
  EXPECT_EQ(newReplicaSetReplicas(10, 3, 13, 3), 3);
  // Old shrunk to 5, new at 3 (8 pods): grow by 5 but never past replicas.
  EXPECT_EQ(newReplicaSetReplicas(10, 3, 8, 3), 8);
  EXPECT_EQ(newReplicaSetReplicas(10, 3, 3, 3), 10);
  // Surge 0: only what old scale-downs freed.
  EXPECT_EQ(newReplicaSetReplicas(3, 0, 3, 0), 0);
  EXPECT_EQ(newReplicaSetReplicas(3, 0, 2, 0), 1);
}

TEST(ScaleDownOldTest, KeepsMinimumAvailability) {
  // 3 replicas, maxUnavailable 0, surge 1: new RS at 1 not yet available; old must stay.
  EXPECT_EQ(scaleDownOldReplicaSets({{3, 3}}, {1, 0}, 3, 0), std::vector<int64_t>({3}));
  // New pod became available: one old pod may go.
  EXPECT_EQ(scaleDownOldReplicaSets({{3, 3}}, {1, 1}, 3, 0), std::vector<int64_t>({2}));
  // maxUnavailable 1 lets one old pod go at once even before the new one is ready.
  EXPECT_EQ(scaleDownOldReplicaSets({{3, 3}}, {1, 0}, 3, 1), std::vector<int64_t>({2}));
  // Nothing old: nothing to do.
  EXPECT_EQ(scaleDownOldReplicaSets({{0, 0}}, {3, 3}, 3, 1), std::vector<int64_t>({0}));
}

TEST(ScaleDownOldTest, UnhealthyOldReplicasGoFirstAndOldestFirst) {
  // Oldest RS has 2 replicas none available; newer old RS 2 available; new 2 available.
  // replicas 4, maxUnavailable 1: allPods 6, minAvailable 3, new unavailable 0 -> 3 may go.
  // Cleanup removes the 2 unhealthy; then available 4 > 3 lets 1 more go from the next RS.
  EXPECT_EQ(scaleDownOldReplicaSets({{2, 0}, {2, 2}}, {2, 2}, 4, 1), std::vector<int64_t>({0, 1}));
  // Healthy old sets shrink oldest first.
  EXPECT_EQ(scaleDownOldReplicaSets({{2, 2}, {2, 2}}, {2, 2}, 4, 0), std::vector<int64_t>({0, 2}));
}

TEST(ScaleDownOldTest, StaleStatusAboveSpecCountsNoAvailability) {
  // replicas 6, maxUnavailable 1: the old RS was just lowered to 5 but its status still says 6
  // available; new RS 2 with 1 available. Really available once the RS acts: 5 + 1 = 6, so one
  // more old pod may go (old 4), not two (which would leave 4 < 5 available).
  EXPECT_EQ(scaleDownOldReplicaSets({{5, 6}}, {2, 1}, 6, 1), std::vector<int64_t>({4}));
}

TEST(PodTemplateHashTest, StableSafeAndSensitive) {
  json t = {{"metadata", {{"labels", {{"app", "web"}}}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx:1"}}}}}}};
  const std::string h = podTemplateHash(t, 0);
  EXPECT_EQ(h, podTemplateHash(t, 0));
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos);
  EXPECT_NE(h, podTemplateHash(t, 1));
  json t2 = t;
  t2["spec"]["containers"][0]["image"] = "nginx:2";
  EXPECT_NE(h, podTemplateHash(t2, 0));
}

TEST(PodHelpersTest, ReadyAvailableActive) {
  json pod = {{"metadata", {{"name", "p"}}},
              {"status",
               {{"phase", "Running"},
                {"conditions",
                 {{{"type", "Ready"},
                   {"status", "True"},
                   {"lastTransitionTime", "2024-01-01T00:00:00Z"}}}}}}};
  EXPECT_TRUE(isPodReady(pod));
  EXPECT_TRUE(isPodActive(pod));
  auto t0 = std::chrono::sys_days{std::chrono::year{2024} / 1 / 1};
  EXPECT_TRUE(isPodAvailable(pod, 0, t0));
  EXPECT_FALSE(isPodAvailable(pod, 10, t0 + std::chrono::seconds(9)));
  EXPECT_TRUE(isPodAvailable(pod, 10, t0 + std::chrono::seconds(10)));
  pod["status"]["phase"] = "Failed";
  EXPECT_FALSE(isPodActive(pod));
  pod["status"]["phase"] = "Running";
  pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z";
  EXPECT_FALSE(isPodActive(pod));
}

TEST(OwnerRefTest, ControllerRefAndRemoval) {
  json owner = {{"apiVersion", "apps/v1"},
                {"kind", "ReplicaSet"},
                {"metadata", {{"name", "rs"}, {"uid", "u1"}}}};
  json ref = makeControllerRef(owner);
  EXPECT_EQ(ref["kind"], "ReplicaSet");
  EXPECT_EQ(ref["controller"], true);
  EXPECT_EQ(ref["blockOwnerDeletion"], true);
  json pod = {
      {"metadata", {{"ownerReferences", {{{"kind", "X"}, {"name", "x"}, {"uid", "u0"}}, ref}}}}};
  ASSERT_TRUE(controllerRef(pod).has_value());
  EXPECT_EQ(controllerRef(pod)->value("uid", ""), "u1");
  EXPECT_EQ(ownerRefsWithout(pod, "u1").size(), 1u);
  EXPECT_FALSE(controllerRef(json::object()).has_value());
}

}  // namespace
}  // namespace minik8s::controllers
