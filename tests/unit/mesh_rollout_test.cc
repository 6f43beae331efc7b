// The rollout's step logic with a fake cluster, fake sidecar counts and a fake clock: weights
// and replicas per step, the rollback decision from error counts, and where each run ends.
#include <gtest/gtest.h>

#include <deque>

#include "common/yaml_json.h"
#include "mesh/rollout.h"
#include "mesh/rollout_cluster.h"

namespace minik8s::mesh {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(MeshRolloutTest, WeightsPerStep) {
  EXPECT_EQ(rolloutWeights(20), (std::vector<int>{20, 40, 60, 80, 100}));
  EXPECT_EQ(rolloutWeights(30), (std::vector<int>{30, 60, 90, 100}));
  EXPECT_EQ(rolloutWeights(100), (std::vector<int>{100}));
  EXPECT_EQ(rolloutWeights(50), (std::vector<int>{50, 100}));
}

TEST(MeshRolloutTest, ReplicasFollowTheWeight) {
  EXPECT_EQ(replicasAt(4, 25).newReplicas, 1);
  EXPECT_EQ(replicasAt(4, 25).oldReplicas, 3);
  EXPECT_EQ(replicasAt(4, 50).newReplicas, 2);
  EXPECT_EQ(replicasAt(4, 50).oldReplicas, 2);
  EXPECT_EQ(replicasAt(3, 40).newReplicas, 2);  // shares round up
  EXPECT_EQ(replicasAt(3, 40).oldReplicas, 2);
  // The old version keeps a pod until the promotion; the new one has one from the first step.
  EXPECT_EQ(replicasAt(1, 10).newReplicas, 1);
  EXPECT_EQ(replicasAt(1, 10).oldReplicas, 1);
  EXPECT_EQ(replicasAt(2, 100).newReplicas, 2);
  EXPECT_EQ(replicasAt(2, 100).oldReplicas, 1);
}

TEST(MeshRolloutTest, RollBackDecision) {
  RolloutOptions o;
  o.maxErrorRate = 0.05;
  o.minRequests = 10;
  std::string why;
  EXPECT_FALSE(shouldRollBack(o, {0, 0}, true, &why));    // no traffic: nothing to judge
  EXPECT_FALSE(shouldRollBack(o, {100, 5}, true, &why));  // exactly 5%: allowed
  EXPECT_TRUE(shouldRollBack(o, {100, 6}, false, &why));  // above, enough requests: at once
  EXPECT_EQ(why, "error rate 6.0% (6 of 100 requests answered 5xx) is above 5.0%");
  EXPECT_FALSE(shouldRollBack(o, {4, 4}, false, &why));  // too few to judge early...
  EXPECT_TRUE(shouldRollBack(o, {4, 4}, true, &why));    // ...but the step's end judges them
}

TEST(MeshRolloutTest, CounterDeltasSurviveRestartsAndNewPods) {
  std::map<std::string, std::map<std::string, RequestCounts>> a = {
      {"front-1", {{"v1", {100, 0}}, {"v2", {10, 1}}}}, {"gone", {{"v2", {50, 50}}}}};
  std::map<std::string, std::map<std::string, RequestCounts>> b = {
      {"front-1", {{"v1", {150, 0}}, {"v2", {30, 2}}}},
      {"front-2", {{"v2", {5, 0}}}},  // new pod: all of it
  };
  auto d = countersDelta(a, b);
  EXPECT_EQ(d["v1"].requests, 50);
  EXPECT_EQ(d["v2"].requests, 25);
  EXPECT_EQ(d["v2"].errors, 1);
  // front-1 restarted: its counters start again from zero.
  std::map<std::string, std::map<std::string, RequestCounts>> c = {
      {"front-1", {{"v1", {3, 0}}, {"v2", {2, 2}}}}};
  d = countersDelta(b, c);
  EXPECT_EQ(d["v1"].requests, 3);
  EXPECT_EQ(d["v2"].errors, 2);
}

TEST(MeshRolloutTest, ParsesTheSidecarsCounters) {
  const std::string text =
      "# TYPE mesh_destination_requests_total counter\n"
      "mesh_destination_requests_total{destination_service=\"shop/reviews\",destination_version="
      "\"v1\",response_code=\"200\"} 40\n"
      "mesh_destination_requests_total{destination_service=\"shop/reviews\",destination_version="
      "\"v2\",response_code=\"200\"} 7\n"
      "mesh_destination_requests_total{destination_service=\"shop/reviews\",destination_version="
      "\"v2\",response_code=\"503\"} 3\n"
      "mesh_destination_requests_total{destination_service=\"shop/ratings\",destination_version="
      "\"v2\",response_code=\"500\"} 9\n";
  auto c = parseDestinationCounts(text, "shop/reviews");
  EXPECT_EQ(c["v1"].requests, 40);
  EXPECT_EQ(c["v1"].errors, 0);
  EXPECT_EQ(c["v2"].requests, 10);
  EXPECT_EQ(c["v2"].errors, 3);
}

TEST(MeshRolloutTest, VersionsAndTheNewDeployment) {
  EXPECT_EQ(versionOfImage("shop/reviews:v2"), "v2");
  EXPECT_EQ(versionOfImage("127.0.0.1:5000/shop/reviews:2.1"), "2.1");
  EXPECT_EQ(versionOfImage("127.0.0.1:5000/shop/reviews"), "");
  EXPECT_EQ(versionOfImage("shop/reviews:latest"), "");
  auto old = parseYaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: reviews-v1, namespace: shop, labels: {app: reviews, version: v1},
           resourceVersion: "7", uid: abc, annotations: {deployment.kubernetes.io/revision: "1"}}
spec:
  replicas: 2
  selector: {matchLabels: {app: reviews, version: v1}}
  template:
    metadata: {labels: {app: reviews, version: v1}}
    spec:
      containers:
      - {name: reviews, image: shop/reviews:v1}
      - {name: helper, image: busybox}
status: {replicas: 2}
)");
  ASSERT_TRUE(old.ok());
  auto d = newVersionDeployment(*old, "reviews-v2", "v2", "shop/reviews:v2", "");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)["metadata"]["name"], "reviews-v2");
  EXPECT_FALSE((*d)["metadata"].contains("resourceVersion"));
  EXPECT_FALSE(d->contains("status"));
  EXPECT_EQ((*d)["spec"]["replicas"], 0);
  EXPECT_EQ((*d)["spec"]["selector"]["matchLabels"]["version"], "v2");
  EXPECT_EQ((*d)["spec"]["template"]["metadata"]["labels"]["version"], "v2");
  EXPECT_EQ((*d)["spec"]["template"]["spec"]["containers"][0]["image"], "shop/reviews:v2");
  EXPECT_EQ((*d)["spec"]["template"]["spec"]["containers"][1]["image"], "busybox");
  auto helper = newVersionDeployment(*old, "reviews-v2", "v2", "busybox:1.36", "helper");
  ASSERT_TRUE(helper.ok());
  EXPECT_EQ((*helper)["spec"]["template"]["spec"]["containers"][1]["image"], "busybox:1.36");
  auto missing = newVersionDeployment(*old, "reviews-v2", "v2", "x:1", "nope");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "--container: Deployment reviews-v1 has no container named nope");
  json vs = rolloutVirtualService("shop", "reviews", {{"v1", 80}, {"v2", 20}});
  EXPECT_EQ(vs["spec"]["http"][0]["route"][1]["destination"]["subset"], "v2");
  EXPECT_EQ(vs["spec"]["http"][0]["route"][1]["weight"], 20);
}

class FakeClock : public RolloutClock {
 public:
  std::chrono::system_clock::time_point now() const override { return now_; }
  void sleepFor(milliseconds d) override { now_ += d; }
  std::chrono::system_clock::time_point now_{std::chrono::hours(24 * 365 * 50)};
};

// A cluster whose new pods are ready a little after they are asked for; it records the calls.
class FakeTarget : public RolloutTarget {
 public:
  explicit FakeTarget(FakeClock& clock) : clock_(clock) {}
  Result<int> oldReplicas() override { return old; }
  Status prepare() override {
    log.push_back("prepare");
    return Status::Ok();
  }
  Status scaleNew(int n) override {
    log.push_back("new=" + std::to_string(n));
    wantNew = n;
    readyAt = clock_.now() + readyDelay;
    return Status::Ok();
  }
  Status scaleOld(int n) override {
    log.push_back("old=" + std::to_string(n));
    old = n;
    return Status::Ok();
  }
  Result<int> readyNewEndpoints() override {
    return clock_.now() >= readyAt ? wantNew : std::max(0, wantNew - 1);
  }
  Status setWeights(int o, int n) override {
    log.push_back("weights=" + std::to_string(o) + "/" + std::to_string(n));
    newWeight = n;
    return Status::Ok();
  }
  Status promote() override {
    log.push_back("promote");
    return Status::Ok();
  }
  Status rollBack(int n) override {
    log.push_back("rollback old=" + std::to_string(n));
    return Status::Ok();
  }

  FakeClock& clock_;
  int old = 4, wantNew = 0, newWeight = 0;
  milliseconds readyDelay{3000};
  std::chrono::system_clock::time_point readyAt{};
  std::vector<std::string> log;
};

// The new version answers a steady stream: `rps` requests a second times its weight, a fraction
// `errorRate` of them 5xx from the weight `badFrom` on. The counts are one sidecar's totals
// (pod "front-1"), as the sidecars expose them.
class FakeMetrics : public RolloutMetrics {
 public:
  FakeMetrics(FakeClock& clock, FakeTarget& target) : clock_(clock), target_(target) {}
  Result<CounterReading> read() override {
    if (last_ == std::chrono::system_clock::time_point{}) last_ = clock_.now();
    auto elapsed = std::chrono::duration<double>(clock_.now() - last_).count();
    last_ = clock_.now();
    RequestCounts c;
    c.requests = static_cast<int64_t>(elapsed * rps * target_.newWeight / 100.0);
    if (target_.newWeight >= badFrom) c.errors = static_cast<int64_t>(c.requests * errorRate);
    v2 += c;
    v1.requests += static_cast<int64_t>(elapsed * rps * (100 - target_.newWeight) / 100.0);
    CounterReading r;
    r.counts["front-1"] = {{"v1", v1}, {"v2", v2}};
    return r;
  }
  FakeClock& clock_;
  FakeTarget& target_;
  std::chrono::system_clock::time_point last_{};
  RequestCounts v1, v2;
  double rps = 50, errorRate = 0;
  int badFrom = 0;
};

RolloutOptions fastOptions() {
  RolloutOptions o;
  o.stepPercent = 25;
  o.interval = seconds(10);
  o.checkEvery = seconds(1);
  o.readyTimeout = seconds(60);
  return o;
}

TEST(MeshRolloutTest, AHealthyRolloutStepsToTheEndAndPromotes) {
  FakeClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  std::vector<std::string> lines;
  Rollout rollout(fastOptions(), target, metrics, clock,
                  [&](const std::string& l) { lines.push_back(l); });
  auto start = clock.now();
  RolloutResult r = rollout.run();
  EXPECT_EQ(r.phase, RolloutPhase::kPromoted) << r.reason;
  EXPECT_EQ(r.lastWeight, 100);
  EXPECT_EQ(target.log,
            (std::vector<std::string>{"prepare", "new=1", "weights=75/25", "old=3", "new=2",
                                      "weights=50/50", "old=2", "new=3", "weights=25/75", "old=1",
                                      "new=4", "weights=0/100", "promote"}));
  // Each step: the new pods' start (3 s), the settle (1 s), the interval (10 s).
  EXPECT_EQ(std::chrono::duration_cast<seconds>(clock.now() - start).count(), 4 * 14);
  EXPECT_GT(r.total.requests, 1000);
  EXPECT_EQ(r.total.errors, 0);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().rfind("promoted: ", 0), 0u);
}

TEST(MeshRolloutTest, ABrokenVersionRollsBackEarlyInTheFirstStep) {
  FakeClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  metrics.errorRate = 0.5;
  Rollout rollout(fastOptions(), target, metrics, clock);
  auto start = clock.now();
  RolloutResult r = rollout.run();
  EXPECT_EQ(r.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(r.lastWeight, 25);
  EXPECT_NE(r.reason.find("error rate 50.0%"), std::string::npos) << r.reason;
  EXPECT_EQ(target.log.back(), "rollback old=4");  // the old version's replicas come back
  // 12 requests a second reach the new version at 25%: minRequests (10) after one check.
  EXPECT_EQ(std::chrono::duration_cast<seconds>(clock.now() - start).count(), 3 + 1 + 1);
}

TEST(MeshRolloutTest, ErrorsThatStartLaterRollBackAtThatStep) {
  FakeClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  metrics.errorRate = 0.1;
  metrics.badFrom = 75;
  Rollout rollout(fastOptions(), target, metrics, clock);
  RolloutResult r = rollout.run();
  EXPECT_EQ(r.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(r.lastWeight, 75);
  EXPECT_EQ(std::count(target.log.begin(), target.log.end(), "promote"), 0);
}

TEST(MeshRolloutTest, NewPodsThatNeverGetReadyRollBack) {
  FakeClock clock;
  FakeTarget target(clock);
  target.readyDelay = std::chrono::hours(1);
  FakeMetrics metrics(clock, target);
  Rollout rollout(fastOptions(), target, metrics, clock);
  RolloutResult r = rollout.run();
  EXPECT_EQ(r.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(r.lastWeight, 0);
  EXPECT_EQ(r.reason, "the new version has 0 of 1 pods ready after 60 s");
  // No traffic ever moved.
  EXPECT_EQ(std::count(target.log.begin(), target.log.end(), "weights=75/25"), 0);
}

TEST(MeshRolloutTest, CancelRollsBackMidStep) {
  // A clock that interrupts the rollout (as Ctrl-C would) 20 s into it.
  class InterruptingClock : public FakeClock {
   public:
    void sleepFor(milliseconds d) override {
      FakeClock::sleepFor(d);
      if (rollout && now_ - start >= seconds(20)) {
        rollout->cancel();
      }
    }
    Rollout* rollout = nullptr;
    std::chrono::system_clock::time_point start = now_;
  };
  InterruptingClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  Rollout rollout(fastOptions(), target, metrics, clock);
  clock.rollout = &rollout;
  RolloutResult r = rollout.run();
  EXPECT_EQ(r.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(r.reason, "interrupted");
  EXPECT_EQ(r.lastWeight, 50);  // the second step (14 s each) was under way
  EXPECT_EQ(target.log.back(), "rollback old=4");
}

// A rollout driven one step at a time, its state written to JSON and read back by a new Rollout
// after every step (as the controller does through the MeshRollout's status), ends exactly as
// one run() does: same cluster calls, same counts. A sidecar restart in the middle (its
// counters back to zero) does not read as negative traffic.
TEST(MeshRolloutTest, ResumesFromItsPersistedStateAfterEveryStep) {
  FakeClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  RolloutState state;
  int steps = 0;
  while (state.phase == RolloutPhase::kProgressing) {
    Rollout fresh(fastOptions(), target, metrics, clock);  // a restarted controller
    auto wait = fresh.advance(state);
    json status = rolloutStateToJson(state);
    auto back = rolloutStateFromJson(json::parse(status.dump()));
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(rolloutStateToJson(*back), status);
    state = *back;
    if (steps == 100) metrics.v2 = {};  // the sidecar restarted mid-analysis
    clock.sleepFor(wait);
    ASSERT_LT(++steps, 10'000);
  }
  EXPECT_EQ(state.phase, RolloutPhase::kPromoted) << state.reason;
  EXPECT_EQ(state.weight, 100);
  EXPECT_EQ(target.log,
            (std::vector<std::string>{"prepare", "new=1", "weights=75/25", "old=3", "new=2",
                                      "weights=50/50", "old=2", "new=3", "weights=25/75", "old=1",
                                      "new=4", "weights=0/100", "promote"}));
  EXPECT_GT(state.totalCounts.requests, 1000);
  EXPECT_GE(state.stepCounts.requests, 0);
  EXPECT_EQ(state.totalCounts.errors, 0);
  // A bad status is refused with the field.
  json bad = rolloutStateToJson(state);
  bad["counterBaseline"]["front-1"]["v2"] = "x";
  EXPECT_EQ(rolloutStateFromJson(bad).status().message(),
            "status.counterBaseline.front-1.v2: want [requests, errors]");
  bad = rolloutStateToJson(state);
  bad["stage"] = "Dancing";
  EXPECT_EQ(rolloutStateFromJson(bad).status().message(),
            "status.stage: unknown stage \"Dancing\"");
}

// A MeshRollout's stepPercent changed mid-way (25 -> 50) while at the third step: the rollout
// goes on from the last step there is instead of reading past the new list of weights; a
// rollout stopped before its first step was recorded rolls back to the replicas the old
// version has.
TEST(MeshRolloutTest, ChangedStepsAndEarlyAbortsAreSafe) {
  FakeClock clock;
  FakeTarget target(clock);
  FakeMetrics metrics(clock, target);
  RolloutState state;
  while (state.step < 2 || state.stage != RolloutStage::kAnalysing) {
    Rollout r(fastOptions(), target, metrics, clock);
    clock.sleepFor(r.advance(state));
    ASSERT_EQ(state.phase, RolloutPhase::kProgressing);
  }
  RolloutOptions fewer = fastOptions();
  fewer.stepPercent = 50;  // weights {50, 100}: step 2 is no more
  Rollout changed(fewer, target, metrics, clock);
  while (state.phase == RolloutPhase::kProgressing) clock.sleepFor(changed.advance(state));
  EXPECT_EQ(state.phase, RolloutPhase::kPromoted) << state.reason;
  EXPECT_EQ(target.log.back(), "promote");

  FakeTarget fresh(clock);
  fresh.old = 3;
  RolloutState early;
  Rollout r(fastOptions(), fresh, metrics, clock);
  r.abort(early, "the MeshRollout was deleted");
  EXPECT_EQ(early.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(fresh.log, std::vector<std::string>{"rollback old=3"});
}

TEST(MeshRolloutTest, OptionsAreChecked) {
  RolloutOptions o;
  o.stepPercent = 0;
  EXPECT_EQ(validateRolloutOptions(o).message(), "--step: 0 is not a percentage from 1 to 100");
  o = RolloutOptions{};
  o.maxErrorRate = 5;
  EXPECT_EQ(validateRolloutOptions(o).message(),
            "--max-error-rate: 5 is not a fraction from 0 to 1 (0.05 is 5%)");
}

}  // namespace
}  // namespace minik8s::mesh
