// The HPA's pure arithmetic: the replica formula with its tolerance, missing and unready pods,
// AverageValue targets, stabilization windows and behavior policies, all on explicit times.
#include <gtest/gtest.h>

#include "common/time_util.h"
#include "controllers/hpa/replica_calculator.h"
#include "controllers/hpa/scaling_behavior.h"

namespace minik8s::controllers::hpa {
namespace {

using namespace std::chrono_literals;

const WallClock::time_point kNow = WallClock::time_point(std::chrono::seconds(1'700'000'000));

// A running pod started `age` ago, Ready (or not) since `readyFor` ago, requesting `cpuMilli`
// millicores and `memory` bytes.
json pod(const std::string& name, int64_t cpuMilli = 1000, bool ready = true,
         std::chrono::seconds age = 3600s, std::chrono::seconds readyFor = 3500s,
         const std::string& phase = "Running") {
  return {
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"containers",
         {{{"name", "c"},
           {"resources",
            {{"requests", {{"cpu", std::to_string(cpuMilli) + "m"}, {"memory", "100Mi"}}}}}}}}}},
      {"status",
       {{"phase", phase},
        {"startTime", formatRfc3339(kNow - age)},
        {"conditions",
         {{{"type", "Ready"},
           {"status", ready ? "True" : "False"},
           {"lastTransitionTime", formatRfc3339(kNow - readyFor)}}}}}}};
}

PodMetric sample(int64_t milli) { return {milli, kNow - 5s, 30s}; }

TEST(ReplicaFormula, ScalesUpByTheUtilizationRatio) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c")};
  PodMetrics m = {{"a", sample(900)}, {"b", sample(1000)}, {"c", sample(1100)}};
  auto r = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->replicas, 6);
  EXPECT_EQ(r->utilization, 100);
  EXPECT_EQ(r->averageMilli, 1000);
}

TEST(ReplicaFormula, KeepsTheSizeWithinTheTenPercentTolerance) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c")};
  // 54% against 50%: ratio 1.08.
  PodMetrics m = {{"a", sample(540)}, {"b", sample(540)}, {"c", sample(540)}};
  auto r = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas, 3);
  EXPECT_EQ(r->utilization, 54);
  // 56%: ratio 1.12, ceil(3.36) = 4.
  m = {{"a", sample(560)}, {"b", sample(560)}, {"c", sample(560)}};
  r = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas, 4);
  // A wider tolerance keeps it.
  ReplicaCalculatorConfig wide;
  wide.tolerance = 0.15;
  EXPECT_EQ(replicasForUtilization(3, 50, "cpu", pods, m, wide, kNow)->replicas, 3);
}

TEST(ReplicaFormula, UtilizationIsTruncatedBeforeTheRatio) {
  // 1005m of 1000m is 100.5% -> 100%: ratio 2.0 against 50%, so 2 replicas, not ceil(2.01).
  auto r = replicasForUtilization(1, 50, "cpu", {pod("a")}, {{"a", sample(1005)}}, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->utilization, 100);
  EXPECT_EQ(r->replicas, 2);
  // Exactly 10% off is outside the tolerance in floating point (|1 - 55/50| > 0.1), as in
  // Kubernetes.
  std::vector<json> pods = {pod("a"), pod("b"), pod("c")};
  PodMetrics m = {{"a", sample(550)}, {"b", sample(550)}, {"c", sample(550)}};
  r = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->utilization, 55);
  EXPECT_EQ(r->replicas, 4);
}

TEST(ReplicaFormula, ScalesDown) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c"), pod("d")};
  PodMetrics m = {{"a", sample(100)}, {"b", sample(100)}, {"c", sample(100)}, {"d", sample(100)}};
  auto r = replicasForUtilization(4, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->utilization, 10);
  EXPECT_EQ(r->replicas, 1);  // ceil(0.2 * 4)
}

TEST(ReplicaFormula, MissingPodsCountAsZeroOnScaleUp) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c")};
  PodMetrics m = {{"a", sample(1000)}, {"b", sample(1000)}};
  auto r = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  // Ready pods: 100% (reported); with c at 0: 2000/3000 = 66% -> ratio 1.32 -> ceil(3.96).
  EXPECT_EQ(r->utilization, 100);
  EXPECT_EQ(r->replicas, 4);
}

TEST(ReplicaFormula, MissingPodsCountAsFullRequestOnScaleDown) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c"), pod("d")};
  PodMetrics m = {{"a", sample(100)}, {"b", sample(100)}, {"c", sample(100)}};
  auto r = replicasForUtilization(4, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  // (300 + 1000) / 4000 = 32% -> 0.64 -> ceil(2.56) = 3.
  EXPECT_EQ(r->replicas, 3);
}

TEST(ReplicaFormula, AssumptionsThatFlipTheDirectionKeepTheSize) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c")};
  // 120% of a 100% target on the one pod reporting; the two missing ones at 0 make it 40%.
  PodMetrics m = {{"a", sample(1200)}};
  auto r = replicasForUtilization(3, 100, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas, 3);
}

TEST(ReplicaFormula, UnreadyCpuPodsCountAsZeroOnlyOnScaleUp) {
  std::vector<json> pods = {pod("a"), pod("b"), pod("c", 1000, false, 60s, 50s)};
  PodMetrics m = {{"a", sample(1000)}, {"b", sample(1000)}, {"c", sample(1000)}};
  auto up = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(up->replicas, 4);  // (1000 + 1000 + 0) / 3000 = 66%
  m = {{"a", sample(100)}, {"b", sample(100)}, {"c", sample(1000)}};
  auto down = replicasForUtilization(3, 50, "cpu", pods, m, {}, kNow);
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down->utilization, 10);  // c is left out
  EXPECT_EQ(down->replicas, 1);      // ceil(0.2 * 2 ready pods)
}

TEST(ReplicaFormula, GroupsPodsTheWayKubernetesDoes) {
  std::vector<json> pods = {
      pod("ready"),
      pod("pending", 1000, false, 10s, 10s, "Pending"),
      pod("failed", 1000, false, 100s, 10s, "Failed"),
      pod("nosample"),
      // Within the cpu initialization period, ready, but the sample predates readiness+window.
      pod("fresh", 1000, true, 60s, 20s),
      // Ready for long enough within the initialization period.
      pod("warm", 1000, true, 120s, 100s),
      // Unready long after start, having been ready once: its sample counts.
      pod("wasready", 1000, false, 3600s, 60s),
      // Never ready since start (transition within the initial readiness delay).
      pod("neverready", 1000, false, 3600s, 3590s),
  };
  json deleting = pod("deleting");
  deleting["metadata"]["deletionTimestamp"] = formatRfc3339(kNow);
  pods.push_back(deleting);
  PodMetrics m;
  for (const auto& p : pods) m[p["metadata"]["name"]] = sample(500);
  m.erase("nosample");
  PodGroups g = groupPods(pods, m, "cpu", {}, kNow);
  EXPECT_EQ(g.readyCount, 3);  // ready, warm, wasready
  EXPECT_EQ(g.ignored, (std::set<std::string>{"pending", "failed", "deleting"}));
  EXPECT_EQ(g.missing, (std::set<std::string>{"nosample"}));
  EXPECT_EQ(g.unready, (std::set<std::string>{"fresh", "neverready"}));
  // Memory has no readiness rule.
  PodGroups mem = groupPods(pods, m, "memory", {}, kNow);
  EXPECT_EQ(mem.readyCount, 5);
  EXPECT_TRUE(mem.unready.empty());
}

TEST(ReplicaFormula, Errors) {
  EXPECT_EQ(replicasForUtilization(1, 50, "cpu", {}, {}, {}, kNow).status().message(),
            "no pods returned by selector while calculating replica count");
  std::vector<json> pods = {pod("a")};
  EXPECT_EQ(replicasForUtilization(1, 50, "cpu", pods, {}, {}, kNow).status().message(),
            "did not receive metrics for targeted pods (pods might be unready)");
  json noRequest = pod("b");
  noRequest["spec"]["containers"][0]["resources"] = json::object();
  EXPECT_EQ(replicasForUtilization(1, 50, "cpu", {noRequest}, {{"b", sample(100)}}, {}, kNow)
                .status()
                .message(),
            "missing request for cpu in container c of Pod b");
}

TEST(ReplicaFormula, AverageValueOfMemory) {
  const int64_t mi = 1024 * 1024 * 1000LL;  // one MiB in millibytes
  std::vector<json> pods = {pod("a"), pod("b")};
  PodMetrics m = {{"a", sample(200 * mi)}, {"b", sample(300 * mi)}};
  auto r = replicasForAverageValue(2, 100 * mi, "memory", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->averageMilli, 250 * mi);
  EXPECT_EQ(r->replicas, 5);
  // A missing pod on a scale-down counts as the target.
  pods.push_back(pod("c"));
  m = {{"a", sample(10 * mi)}, {"b", sample(20 * mi)}};
  r = replicasForAverageValue(3, 100 * mi, "memory", pods, m, {}, kNow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas, 2);  // (10 + 20 + 100) / 3 = 43.3 -> 0.433 * 3 -> ceil(1.3) = 2
}

// ---- behavior

TEST(ScalingBehavior, DefaultsFillWhatIsUnset) {
  EXPECT_FALSE(behaviorFromSpec(json{{"maxReplicas", 3}}, 300s).has_value());
  auto b = behaviorFromSpec(json{{"behavior", {{"scaleDown", {{"selectPolicy", "Min"}}}}}}, 120s);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->scaleUp.stabilizationWindowSeconds, 0);
  ASSERT_EQ(b->scaleUp.policies.size(), 2u);
  EXPECT_EQ(b->scaleUp.policies[0].type, ScalingPolicy::Type::kPods);
  EXPECT_EQ(b->scaleUp.policies[0].value, 4);
  EXPECT_EQ(b->scaleUp.policies[1].type, ScalingPolicy::Type::kPercent);
  EXPECT_EQ(b->scaleUp.policies[1].value, 100);
  EXPECT_EQ(b->scaleDown.stabilizationWindowSeconds, 120);
  EXPECT_EQ(b->scaleDown.selectPolicy, SelectPolicy::kMin);
  ASSERT_EQ(b->scaleDown.policies.size(), 1u);
  EXPECT_EQ(b->scaleDown.policies[0].periodSeconds, 15);
}

TEST(ScalingBehavior, WithoutBehaviorScaleDownIsStabilizedForTheWindow) {
  ScalingHistory h;
  h.recordInitial(5, kNow);
  Normalized n = h.normalize(std::nullopt, 5, 2, 1, 10, 300s, kNow);
  EXPECT_EQ(n.replicas, 5);
  EXPECT_EQ(n.ableToScaleReason, "ScaleDownStabilized");
  n = h.normalize(std::nullopt, 5, 3, 1, 10, 300s, kNow + 200s);
  EXPECT_EQ(n.replicas, 5);
  // 5 @0 is out of the window; 2 @0 too; 3 @200 is not.
  n = h.normalize(std::nullopt, 5, 2, 1, 10, 300s, kNow + 301s);
  EXPECT_EQ(n.replicas, 3);
  EXPECT_EQ(n.ableToScaleReason, "ScaleDownStabilized");
  n = h.normalize(std::nullopt, 3, 2, 1, 10, 300s, kNow + 501s);
  EXPECT_EQ(n.replicas, 2);
  EXPECT_EQ(n.ableToScaleReason, "ReadyForNewScale");
  EXPECT_FALSE(n.scalingLimited);
  EXPECT_EQ(n.scalingLimitedReason, "DesiredWithinRange");
}

TEST(ScalingBehavior, WithoutBehaviorScaleUpIsAtMostDoubleOrFour) {
  ScalingHistory h;
  Normalized n = h.normalize(std::nullopt, 3, 20, 1, 30, 300s, kNow);
  EXPECT_EQ(n.replicas, 6);
  EXPECT_TRUE(n.scalingLimited);
  EXPECT_EQ(n.scalingLimitedReason, "ScaleUpLimit");
  n = h.normalize(std::nullopt, 1, 20, 1, 30, 300s, kNow);
  EXPECT_EQ(n.replicas, 4);
  n = h.normalize(std::nullopt, 3, 20, 1, 5, 300s, kNow);
  EXPECT_EQ(n.replicas, 5);
  EXPECT_EQ(n.scalingLimitedReason, "TooManyReplicas");
  EXPECT_EQ(limitWithoutBehavior(3, 0, 2, 5).replicas, 2);
  EXPECT_EQ(limitWithoutBehavior(3, 0, 2, 5).reason, "TooFewReplicas");
}

TEST(ScalingBehavior, DefaultScaleUpPoliciesCountRecentEvents) {
  auto b = behaviorFromSpec(json{{"behavior", json::object()}}, 300s);
  ScalingHistory h;
  h.recordInitial(1, kNow);
  Normalized n = h.normalize(b, 1, 10, 1, 20, 300s, kNow);
  EXPECT_EQ(n.replicas, 5);  // max(1 + 4 pods, 1 * 200%)
  EXPECT_EQ(n.scalingLimitedReason, "ScaleUpLimit");
  h.recordScale(b, 1, 5, kNow);
  // 10 s later the period started at 1 replica: still 5 at most.
  n = h.normalize(b, 5, 10, 1, 20, 300s, kNow + 10s);
  EXPECT_EQ(n.replicas, 5);
  EXPECT_EQ(n.scalingLimitedReason, "ScaleUpLimit");
  // After the 15 s period: max(5 + 4, 5 * 2) = 10.
  n = h.normalize(b, 5, 12, 1, 20, 300s, kNow + 16s);
  EXPECT_EQ(n.replicas, 10);
}

TEST(ScalingBehavior, SelectPolicyMinAndDisabled) {
  ScalingRules up{0,
                  SelectPolicy::kMin,
                  {{ScalingPolicy::Type::kPods, 4, 60}, {ScalingPolicy::Type::kPercent, 100, 60}}};
  EXPECT_EQ(scaleUpLimit(10, {}, {}, up, kNow), 14);
  up.selectPolicy = SelectPolicy::kMax;
  EXPECT_EQ(scaleUpLimit(10, {}, {}, up, kNow), 20);
  up.selectPolicy = SelectPolicy::kDisabled;
  EXPECT_EQ(scaleUpLimit(10, {}, {}, up, kNow), 10);
  ScalingRules down{0,
                    SelectPolicy::kMax,
                    {{ScalingPolicy::Type::kPods, 2, 60}, {ScalingPolicy::Type::kPercent, 50, 60}}};
  EXPECT_EQ(scaleDownLimit(10, {}, {}, down, kNow), 5);  // the biggest change
  down.selectPolicy = SelectPolicy::kMin;
  EXPECT_EQ(scaleDownLimit(10, {}, {}, down, kNow), 8);
  // Events within the period move its start: 3 removed 30 s ago -> started at 13.
  std::vector<ScaleEvent> downs = {{3, kNow - 30s, false}};
  EXPECT_EQ(scaleDownLimit(10, {}, downs, down, kNow), 11);
  EXPECT_EQ(scaleDownLimit(10, {}, downs, down, kNow + 31s), 8);
  // Percent rounds up on scale-up, down on scale-down.
  ScalingRules tenPercent{0, SelectPolicy::kMax, {{ScalingPolicy::Type::kPercent, 10, 60}}};
  EXPECT_EQ(scaleUpLimit(3, {}, {}, tenPercent, kNow), 4);
  EXPECT_EQ(scaleDownLimit(3, {}, {}, tenPercent, kNow), 2);
}

TEST(ScalingBehavior, ScaleDownPolicyAndDisabledScaleDown) {
  json spec = {{"behavior",
                {{"scaleDown",
                  {{"stabilizationWindowSeconds", 0},
                   {"policies", {{{"type", "Pods"}, {"value", 1}, {"periodSeconds", 60}}}}}}}}};
  auto b = behaviorFromSpec(spec, 300s);
  ScalingHistory h;
  h.recordInitial(5, kNow);
  Normalized n = h.normalize(b, 5, 1, 1, 10, 300s, kNow);
  EXPECT_EQ(n.replicas, 4);
  EXPECT_EQ(n.scalingLimitedReason, "ScaleDownLimit");
  EXPECT_EQ(n.ableToScaleReason, "ReadyForNewScale");
  h.recordScale(b, 5, 4, kNow);
  EXPECT_EQ(h.normalize(b, 4, 1, 1, 10, 300s, kNow + 30s).replicas, 4);
  EXPECT_EQ(h.normalize(b, 4, 1, 1, 10, 300s, kNow + 61s).replicas, 3);

  spec["behavior"]["scaleDown"]["selectPolicy"] = "Disabled";
  auto disabled = behaviorFromSpec(spec, 300s);
  ScalingHistory h2;
  EXPECT_EQ(h2.normalize(disabled, 5, 1, 1, 10, 300s, kNow).replicas, 5);
}

TEST(ScalingBehavior, StabilizationWindowsWithBehavior) {
  json spec = {{"behavior",
                {{"scaleDown", {{"stabilizationWindowSeconds", 60}}},
                 {"scaleUp", {{"stabilizationWindowSeconds", 30}}}}}};
  auto b = behaviorFromSpec(spec, 300s);
  ScalingHistory h;
  h.recordInitial(5, kNow);
  Normalized n = h.normalize(b, 5, 2, 1, 10, 300s, kNow + 10s);
  EXPECT_EQ(n.replicas, 5);
  EXPECT_EQ(n.ableToScaleReason, "ScaleDownStabilized");
  n = h.normalize(b, 5, 2, 1, 10, 300s, kNow + 61s);
  EXPECT_EQ(n.replicas, 2);
  // Scale-up: the lowest recommendation of the last 30 s wins.
  n = h.normalize(b, 2, 8, 1, 10, 300s, kNow + 70s);
  EXPECT_EQ(n.replicas, 2);
  EXPECT_EQ(n.ableToScaleReason, "ScaleUpStabilized");
  n = h.normalize(b, 2, 8, 1, 10, 300s, kNow + 92s);
  EXPECT_EQ(n.replicas, 6);  // 8 recommended since +70 s; the default policy: 2 + 4
  EXPECT_EQ(n.ableToScaleReason, "ReadyForNewScale");
}

}  // namespace
}  // namespace minik8s::controllers::hpa
