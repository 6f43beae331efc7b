// The Job controller: its pure rules exactly (index sets, back-off, podFailurePolicy), then the
// controller against a real in-process API server with a fake wall clock, one sync at a time
// (no workers): completions and parallelism, Indexed pods, back-off, backoffLimit,
// activeDeadlineSeconds, podFailurePolicy, suspend/resume, the tracking finalizer across a
// restart, orphans of a deleted Job, and the TTL-after-finished controller.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "common/time_util.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/job_util.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;
using job::kTrackingFinalizer;

TEST(JobIndexesTest, ParseAndFormatAsKubernetesWritesThem) {
  EXPECT_EQ(job::formatIndexes({}), "");
  EXPECT_EQ(job::formatIndexes({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(job::formatIndexes({3}), "3");
  EXPECT_EQ(job::parseIndexes("0-2,5,7-8"), (std::set<int64_t>{0, 1, 2, 5, 7, 8}));
  EXPECT_EQ(job::parseIndexes("1,x,3-2,4"), (std::set<int64_t>{1, 4}));  // malformed parts go
  EXPECT_EQ(job::parseIndexes("0-9", 3), (std::set<int64_t>{0, 1, 2}));  // beyond completions
  EXPECT_TRUE(job::parseIndexes("").empty());
}

TEST(JobBackoffTest, DoublesFromTheBaseUpToTheCap) {
  EXPECT_EQ(job::failureBackoff(0, 10s, 6min), 0ms);
  EXPECT_EQ(job::failureBackoff(1, 10s, 6min), 10s);
  EXPECT_EQ(job::failureBackoff(2, 10s, 6min), 20s);
  EXPECT_EQ(job::failureBackoff(4, 10s, 6min), 80s);
  EXPECT_EQ(job::failureBackoff(6, 10s, 6min), 320s);
  EXPECT_EQ(job::failureBackoff(7, 10s, 6min), 6min);  // 640 s is capped
  EXPECT_EQ(job::failureBackoff(60, 10s, 6min), 6min);
}

json terminatedPod(const std::string& container, int exitCode, json conditions = json::array()) {
  return {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
          {"status",
           {{"phase", "Failed"},
            {"conditions", conditions},
            {"containerStatuses",
             {{{"name", container}, {"state", {{"terminated", {{"exitCode", exitCode}}}}}}}}}}};
}

TEST(JobPodFailurePolicyTest, FirstMatchingRuleDecides) {
  json policy = {
      {"rules",
       {{{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}},
        {{"action", "FailJob"},
         {"onExitCodes", {{"containerName", "main"}, {"operator", "In"}, {"values", {42}}}}},
        {{"action", "Count"}, {"onExitCodes", {{"operator", "NotIn"}, {"values", {1, 2}}}}}}}};
  auto m = job::matchPodFailurePolicy(policy, terminatedPod("main", 42));
  EXPECT_EQ(m.action, job::FailureAction::kFailJob);
  EXPECT_EQ(
      m.message,
      "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1");
  // Another container with 42 is not "main"; NotIn {1,2} counts it.
  EXPECT_EQ(job::matchPodFailurePolicy(policy, terminatedPod("side", 42)).action,
            job::FailureAction::kCount);
  EXPECT_EQ(job::matchPodFailurePolicy(policy, terminatedPod("main", 1)).action,
            job::FailureAction::kCount);  // no rule: counted
  json disrupted = terminatedPod("main", 42, {{{"type", "DisruptionTarget"}, {"status", "True"}}});
  EXPECT_EQ(job::matchPodFailurePolicy(policy, disrupted).action, job::FailureAction::kIgnore);
  json notDisrupted =
      terminatedPod("main", 1, {{{"type", "DisruptionTarget"}, {"status", "False"}}});
  EXPECT_EQ(job::matchPodFailurePolicy(policy, notDisrupted).action, job::FailureAction::kCount);
  // Exit code 0 never matches an exit-code rule.
  json zero = {
      {"rules",
       {{{"action", "FailJob"}, {"onExitCodes", {{"operator", "NotIn"}, {"values", {1}}}}}}}};
  EXPECT_EQ(job::matchPodFailurePolicy(zero, terminatedPod("main", 0)).action,
            job::FailureAction::kCount);
}

TEST(JobFinishTimeTest, CompletionTimeOrTheConditionsTransition) {
  json j = {{"status",
             {{"conditions",
               {{{"type", "Failed"},
                 {"status", "True"},
                 {"lastTransitionTime", "2024-01-01T00:00:10Z"}}}}}}};
  EXPECT_TRUE(job::isJobFinished(j));
  EXPECT_EQ(job::jobFinishTime(j), parseRfc3339("2024-01-01T00:00:10Z"));
  j["status"]["conditions"][0]["status"] = "False";
  EXPECT_FALSE(job::isJobFinished(j));
  j["status"]["completionTime"] = "2024-01-01T00:01:00Z";
  EXPECT_EQ(job::jobFinishTime(j), parseRfc3339("2024-01-01T00:01:00Z"));
}

class JobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    restart();
  }
  void TearDown() override {
    stopAll();
    apiServer.stop();
  }
  // Informers first: their handlers call into the controllers.
  void stopAll() {
    for (auto* i : {jobs.get(), pods.get()}) {
      if (i) i->stop();
    }
    ttl.reset();
    controller.reset();
  }
  // New informers and controllers, as after a restart of the controller manager.
  void restart() {
    stopAll();
    jobs = std::make_unique<client::Informer>(*rest, res::kJobs);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    addNamespaceIndex(*pods);
    JobControllerOptions opts;
    opts.clock = &clock;
    opts.now = [this] { return wallNow; };
    opts.events = &events;
    opts.backoffBase = 10s;
    controller = std::make_unique<JobController>(*rest, *jobs, *pods, opts);
    TtlAfterFinishedOptions tOpts;
    tOpts.clock = &clock;
    tOpts.now = [this] { return wallNow; };
    ttl = std::make_unique<TtlAfterFinishedController>(*rest, *jobs, tOpts);
    for (auto* i : {jobs.get(), pods.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }

  json createJob(const std::string& name, json spec) {
    json tmpl = {
        {"spec",
         {{"restartPolicy", "Never"}, {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
    if (!spec.contains("template")) spec["template"] = tmpl;
    json j = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}}},
              {"spec", spec}};
    auto r = rest->create(res::kJobs, "default", j);
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() ? *r : json();
  }
  json getJob(const std::string& name) {
    auto r = rest->get(res::kJobs, "default", name);
    return r.ok() ? *r : json();
  }
  std::vector<json> podsOf(const std::string& jobName, bool activeOnly = true) {
    std::vector<json> out;
    auto l = rest->list(res::kPods, "default");
    if (!l.ok()) return out;
    for (const auto& p : (*l)["items"]) {
      if (p["metadata"]["labels"].value("job-name", "") != jobName) continue;
      if (activeOnly && !isPodActive(p)) continue;
      out.push_back(p);
    }
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a["metadata"]["name"] < b["metadata"]["name"];
    });
    return out;
  }
  void finishPod(const json& pod, const std::string& phase, int exitCode = 0,
                 json conditions = json::array()) {
    json st = {{"status",
                {{"phase", phase},
                 {"containerStatuses",
                  {{{"name", "main"},
                    {"image", "busybox"},
                    {"imageID", ""},
                    {"ready", false},
                    {"restartCount", 0},
                    {"state",
                     {{"terminated",
                       {{"exitCode", exitCode}, {"finishedAt", formatRfc3339(wallNow)}}}}}}}}}}};
    if (!conditions.empty()) st["status"]["conditions"] = conditions;
    auto r = rest->patch(res::kPods, "default", pod["metadata"]["name"], st, "merge", "status");
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }

  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  // Waits until both caches hold what the API server holds, then runs one sync of the Job.
  void pass(const std::string& name) {
    auto same = [&](client::Informer& inf, const client::Resource& r) {
      auto l = rest->list(r, "");
      if (!l.ok()) return false;
      std::map<std::string, std::string> want, have;
      for (const auto& o : (*l)["items"])
        want[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      for (const auto& o : inf.list())
        have[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      return want == have;
    };
    ASSERT_TRUE(eventually([&] { return same(*jobs, res::kJobs) && same(*pods, res::kPods); }));
    Status s = controller->sync("default/" + name);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  // Syncs until the Job stops changing (at most `n` passes).
  void settle(const std::string& name, int n = 6) {
    for (int i = 0; i < n; ++i) {
      const std::string before = getJob(name)["metadata"]["resourceVersion"].dump() +
                                 std::to_string(podsOf(name, false).size());
      pass(name);
      const std::string after = getJob(name)["metadata"]["resourceVersion"].dump() +
                                std::to_string(podsOf(name, false).size());
      if (before == after) return;
    }
  }
  static json condition(const json& obj, const std::string& type) {
    for (const auto& c : obj.value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == type) return c;
    }
    return nullptr;
  }
  static int64_t field(const json& job, const char* f) {
    return job["status"].value(f, int64_t{0});
  }
  static bool hasFinalizer(const json& pod) {
    const json f = pod.value("/metadata/finalizers"_json_pointer, json::array());
    return std::find(f.begin(), f.end(), kTrackingFinalizer) != f.end();
  }

  testing::InProcessApiServer apiServer;
  testing::FakeClock clock;
  WallClock::time_point wallNow = *parseRfc3339("2026-01-01T00:00:00Z");
  client::FakeEventRecorder events;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> jobs, pods;
  std::unique_ptr<JobController> controller;
  std::unique_ptr<TtlAfterFinishedController> ttl;
};

TEST_F(JobControllerTest, RunsCompletionsWithParallelismThenCompletes) {
  createJob("pi", {{"completions", 3}, {"parallelism", 2}});
  pass("pi");
  auto running = podsOf("pi");
  ASSERT_EQ(running.size(), 2u);
  for (const auto& p : running) {
    EXPECT_TRUE(hasFinalizer(p)) << p.dump();
    auto ref = controllerRef(p);
    ASSERT_TRUE(ref);
    EXPECT_EQ((*ref)["kind"], "Job");
    EXPECT_EQ(p["metadata"]["generateName"], "pi-");
  }
  json j = getJob("pi");
  EXPECT_EQ(field(j, "active"), 2);
  EXPECT_EQ(j["status"]["startTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(events.reasons(), (std::vector<std::string>{"SuccessfulCreate", "SuccessfulCreate"}));

  wallNow += 5s;
  finishPod(running[0], "Succeeded");
  settle("pi");
  j = getJob("pi");
  EXPECT_EQ(field(j, "succeeded"), 1);
  EXPECT_EQ(field(j, "active"), 2);  // one more started for the last completion
  EXPECT_TRUE(j["status"]["uncountedTerminatedPods"].empty()) << j.dump();
  EXPECT_FALSE(hasFinalizer(*rest->get(res::kPods, "default", running[0]["metadata"]["name"])));

  for (const auto& p : podsOf("pi")) finishPod(p, "Succeeded");
  settle("pi");
  j = getJob("pi");
  EXPECT_EQ(field(j, "succeeded"), 3);
  EXPECT_EQ(field(j, "active"), 0);
  EXPECT_EQ(field(j, "failed"), 0);
  EXPECT_EQ(condition(j, "Complete")["status"], "True") << j.dump();
  EXPECT_EQ(condition(j, "SuccessCriteriaMet")["status"], "True");
  EXPECT_EQ(j["status"]["completionTime"], "2026-01-01T00:00:05Z");
  EXPECT_TRUE(events.find("Completed"));
  EXPECT_EQ(podsOf("pi", false).size(), 3u);
  for (const auto& p : podsOf("pi", false)) EXPECT_FALSE(hasFinalizer(p));
}

TEST_F(JobControllerTest, IndexedPodsCarryTheirIndexAndFailedIndexesAreRetried) {
  createJob("idx", {{"completions", 4}, {"parallelism", 2}, {"completionMode", "Indexed"}});
  pass("idx");
  auto running = podsOf("idx");
  ASSERT_EQ(running.size(), 2u);
  std::set<std::string> indexes;
  for (const auto& p : running) {
    const std::string i = p["metadata"]["annotations"][job::kCompletionIndexAnnotation];
    indexes.insert(i);
    EXPECT_EQ(p["metadata"]["labels"][job::kCompletionIndexAnnotation], i);
    EXPECT_EQ(p["spec"]["hostname"], "idx-" + i);
    EXPECT_EQ(p["metadata"]["generateName"], "idx-" + i + "-");
    const json env = p["spec"]["containers"][0]["env"];
    ASSERT_EQ(env.size(), 1u) << p.dump();
    EXPECT_EQ(env[0]["name"], "JOB_COMPLETION_INDEX");
    EXPECT_EQ(env[0]["valueFrom"]["fieldRef"]["fieldPath"],
              "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1"}));

  auto indexOf = [](const json& p) -> std::string {
    return p["metadata"]["annotations"][job::kCompletionIndexAnnotation];
  };
  for (const auto& p : running) finishPod(p, indexOf(p) == "1" ? "Succeeded" : "Failed", 3);
  settle("idx");
  json j = getJob("idx");
  EXPECT_EQ(j["status"]["completedIndexes"], "1");
  EXPECT_EQ(field(j, "succeeded"), 1);
  EXPECT_EQ(field(j, "failed"), 1);
  // Index 0 failed: back-off holds new pods for 10 s after the failure.
  EXPECT_TRUE(podsOf("idx").empty());
  wallNow += 11s;
  pass("idx");
  indexes.clear();
  for (const auto& p : podsOf("idx")) indexes.insert(indexOf(p));
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "2"}));  // the lowest missing ones

  for (int round = 0; round < 3 && !podsOf("idx").empty(); ++round) {
    for (const auto& p : podsOf("idx")) finishPod(p, "Succeeded");
    settle("idx");
  }
  j = getJob("idx");
  EXPECT_EQ(j["status"]["completedIndexes"], "0-3");
  EXPECT_EQ(field(j, "succeeded"), 4);
  EXPECT_EQ(condition(j, "Complete")["status"], "True") << j.dump();
}

TEST_F(JobControllerTest, BackoffLimitFailsTheJobWithBackOffBetweenPods) {
  createJob("fail", {{"backoffLimit", 2}});
  pass("fail");
  for (int failure = 1; failure <= 3; ++failure) {
    auto running = podsOf("fail");
    ASSERT_EQ(running.size(), 1u) << "failure " << failure;
    finishPod(running[0], "Failed", 1);
    settle("fail");
    json j = getJob("fail");
    EXPECT_EQ(field(j, "failed"), failure);
    if (failure == 3) break;
    // 10 s after the first failure, 20 s after the second.
    const auto wait = failure == 1 ? 10s : 20s;
    EXPECT_TRUE(podsOf("fail").empty());
    wallNow += wait - 1s;
    pass("fail");
    EXPECT_TRUE(podsOf("fail").empty()) << "still backing off after failure " << failure;
    wallNow += 2s;
    pass("fail");
  }
  json j = getJob("fail");
  EXPECT_EQ(condition(j, "FailureTarget")["reason"], "BackoffLimitExceeded") << j.dump();
  EXPECT_EQ(condition(j, "Failed")["status"], "True");
  EXPECT_EQ(condition(j, "Failed")["message"], "Job has reached the specified backoff limit");
  EXPECT_FALSE(condition(j, "Complete").is_object());
  auto ev = events.find("BackoffLimitExceeded");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->type, "Warning");
  EXPECT_FALSE(j["status"].contains("completionTime"));
}

TEST_F(JobControllerTest, ActiveDeadlineStopsRunningPods) {
  createJob("slow", {{"parallelism", 2}, {"completions", 2}, {"activeDeadlineSeconds", 30}});
  pass("slow");
  ASSERT_EQ(podsOf("slow").size(), 2u);
  wallNow += 29s;
  pass("slow");
  EXPECT_FALSE(condition(getJob("slow"), "FailureTarget").is_object());
  wallNow += 2s;
  settle("slow");
  json j = getJob("slow");
  EXPECT_EQ(condition(j, "Failed")["reason"], "DeadlineExceeded") << j.dump();
  EXPECT_EQ(condition(j, "Failed")["message"], "Job was active longer than specified deadline");
  EXPECT_TRUE(podsOf("slow").empty());
  EXPECT_TRUE(events.find("DeadlineExceeded"));
  // The pods it stopped keep no finalizer (they may be gone already).
  for (const auto& p : podsOf("slow", false)) EXPECT_FALSE(hasFinalizer(p)) << p.dump();
}

TEST_F(JobControllerTest, PodFailurePolicyIgnoresDisruptionsAndFailsOnAnExitCode) {
  json policy = {
      {"rules",
       {{{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}},
        {{"action", "FailJob"}, {"onExitCodes", {{"operator", "In"}, {"values", {42}}}}}}}};
  createJob("pfp", {{"backoffLimit", 6}, {"podFailurePolicy", policy}});
  pass("pfp");
  auto running = podsOf("pfp");
  ASSERT_EQ(running.size(), 1u);
  finishPod(
      running[0], "Failed", 137,
      {{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "EvictionByEvictionAPI"}}});
  settle("pfp");
  json j = getJob("pfp");
  EXPECT_EQ(field(j, "failed"), 0) << j.dump();  // ignored: not counted
  running = podsOf("pfp");
  ASSERT_EQ(running.size(), 1u)
      << j.dump();  // replaced at once: no back-off from an ignored failure
  finishPod(running[0], "Failed", 42);
  settle("pfp");
  j = getJob("pfp");
  EXPECT_EQ(field(j, "failed"), 1);
  EXPECT_EQ(condition(j, "Failed")["reason"], "PodFailurePolicy") << j.dump();
  EXPECT_EQ(condition(j, "Failed")["message"].get<std::string>().find("Container main for pod "),
            0u);
}

TEST_F(JobControllerTest, SuspendDeletesPodsWithoutFailuresAndResumeRestartsTheClock) {
  createJob("sus", {{"parallelism", 2}, {"completions", 4}});
  pass("sus");
  ASSERT_EQ(podsOf("sus").size(), 2u);
  json j = getJob("sus");
  j["spec"]["suspend"] = true;
  ASSERT_TRUE(rest->update(res::kJobs, j).ok());
  settle("sus");
  j = getJob("sus");
  EXPECT_TRUE(podsOf("sus").empty());
  EXPECT_EQ(field(j, "failed"), 0) << j.dump();
  EXPECT_EQ(condition(j, "Suspended")["status"], "True");
  EXPECT_EQ(condition(j, "Suspended")["reason"], "JobSuspended");
  EXPECT_TRUE(events.find("Suspended"));

  wallNow += 60s;
  j["spec"]["suspend"] = false;
  ASSERT_TRUE(rest->update(res::kJobs, j).ok());
  pass("sus");
  j = getJob("sus");
  EXPECT_EQ(podsOf("sus").size(), 2u);
  EXPECT_EQ(condition(j, "Suspended")["status"], "False");
  EXPECT_EQ(condition(j, "Suspended")["reason"], "JobResumed");
  EXPECT_EQ(j["status"]["startTime"], "2026-01-01T00:01:00Z");
  EXPECT_TRUE(events.find("Resumed"));
}

TEST_F(JobControllerTest, NoPodCountedTwiceOrMissedAcrossARestart) {
  json created = createJob("track", {{"completions", 2}, {"parallelism", 2}});
  pass("track");
  auto running = podsOf("track");
  ASSERT_EQ(running.size(), 2u);
  const std::string uidA = running[0]["metadata"]["uid"], uidB = running[1]["metadata"]["uid"];
  // As if a controller died after step 1 for pod A (recorded as uncounted, finalizer still on)
  // and after step 2 for pod B (uncounted, finalizer already removed).
  finishPod(running[0], "Succeeded");
  finishPod(running[1], "Succeeded");
  json podB = *rest->get(res::kPods, "default", running[1]["metadata"]["name"]);
  json rm = json::array({{{"op", "remove"}, {"path", "/metadata/finalizers/0"}}});
  ASSERT_TRUE(rest->patch(res::kPods, "default", podB["metadata"]["name"], rm, "json").ok());
  json j = getJob("track");
  j["status"]["uncountedTerminatedPods"] = {{"succeeded", {uidA, uidB}}};
  ASSERT_TRUE(rest->update(res::kJobs, j, "status").ok());

  restart();
  for (int i = 0; i < 4; ++i) pass("track");
  j = getJob("track");
  EXPECT_EQ(field(j, "succeeded"), 2) << j.dump();
  EXPECT_TRUE(j["status"]["uncountedTerminatedPods"].empty());
  EXPECT_EQ(condition(j, "Complete")["status"], "True");
  restart();
  pass("track");
  EXPECT_EQ(field(getJob("track"), "succeeded"), 2);
}

TEST_F(JobControllerTest, ADeletedJobLeavesNoPodBehindItsFinalizer) {
  createJob("gone", {{"parallelism", 1}});
  pass("gone");
  auto running = podsOf("gone");
  ASSERT_EQ(running.size(), 1u);
  // The Job goes; its pod stays (no garbage collector here) and must lose our finalizer.
  ASSERT_TRUE(rest->remove(res::kJobs, "default", "gone").ok());
  ASSERT_TRUE(eventually([&] { return !rest->get(res::kJobs, "default", "gone").ok(); }));
  ASSERT_TRUE(eventually([&] { return !jobs->get("default/gone"); }));
  pass("gone");
  auto pod = rest->get(res::kPods, "default", running[0]["metadata"]["name"]);
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE(hasFinalizer(*pod)) << pod->dump();
}

TEST_F(JobControllerTest, TtlAfterFinishedDeletesTheJobWhenItExpires) {
  createJob("ttl", {{"ttlSecondsAfterFinished", 60}});
  pass("ttl");
  finishPod(podsOf("ttl")[0], "Succeeded");
  settle("ttl");
  ASSERT_EQ(condition(getJob("ttl"), "Complete")["status"], "True");
  ASSERT_TRUE(eventually([&] { return job::isJobFinished(*jobs->get("default/ttl")); }));
  ASSERT_TRUE(ttl->sync("default/ttl").ok());
  EXPECT_TRUE(rest->get(res::kJobs, "default", "ttl").ok());  // 60 s to go
  wallNow += 61s;
  ASSERT_TRUE(ttl->sync("default/ttl").ok());
  // Foreground deletion: the Job waits for the garbage collector, marked as being deleted.
  auto j = rest->get(res::kJobs, "default", "ttl");
  EXPECT_TRUE(!j.ok() || isTerminating(*j));
}

}  // namespace
}  // namespace minik8s::controllers
