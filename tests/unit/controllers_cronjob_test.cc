// The CronJob controller against a real in-process API server with a fake wall clock, one sync
// at a time: a Job per scheduled time (named by its minute, owned, annotated), status.active and
// lastScheduleTime, one catch-up run after an outage (TooManyMissedTimes past 100), the
// startingDeadlineSeconds miss, concurrencyPolicy Forbid and Replace, the history limits,
// suspend, and no second run of a time across a lost status write.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "common/time_util.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class CronJobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    cronJobs = std::make_unique<client::Informer>(*rest, kCronJobs);
    jobs = std::make_unique<client::Informer>(*rest, res::kJobs);
    addNamespaceIndex(*jobs);
    CronJobControllerOptions opts;
    opts.clock = &clock;
    opts.now = [this] { return wallNow; };
    opts.events = &events;
    controller = std::make_unique<CronJobController>(*rest, *cronJobs, *jobs, opts);
    for (auto* i : {cronJobs.get(), jobs.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }
  void TearDown() override {
    for (auto* i : {cronJobs.get(), jobs.get()}) i->stop();  // their handlers call the controller
    controller.reset();
    apiServer.stop();
  }

  // Creates the CronJob; the fake clock starts at its creationTimestamp (a whole minute later
  // is the first run of "* * * * *" at the latest).
  void createCronJob(const std::string& name, json spec) {
    if (!spec.contains("schedule")) spec["schedule"] = "* * * * *";
    spec["jobTemplate"] = {{"metadata", {{"labels", {{"app", name}}}}},
                           {"spec",
                            {{"template",
                              {{"spec",
                                {{"restartPolicy", "Never"},
                                 {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
    json cj = {{"apiVersion", "batch/v1"},
               {"kind", "CronJob"},
               {"metadata", {{"name", name}}},
               {"spec", spec}};
    auto r = rest->create(kCronJobs, "default", cj);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    created = *parseRfc3339((*r)["metadata"]["creationTimestamp"]);
    wallNow = created;
  }
  json getCronJob(const std::string& name) {
    auto r = rest->get(kCronJobs, "default", name);
    return r.ok() ? *r : json();
  }
  std::vector<std::string> jobNames() {
    std::vector<std::string> out;
    auto l = rest->list(res::kJobs, "default");
    if (!l.ok()) return out;
    for (const auto& j : (*l)["items"]) {
      if (!isTerminating(j)) out.push_back(j["metadata"]["name"]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The Job name of the scheduled minute `t` (unix minutes).
  static std::string jobFor(const std::string& cj, WallClock::time_point t) {
    return cj + "-" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count());
  }
  // The first whole minute after `t`.
  static WallClock::time_point nextMinute(WallClock::time_point t) {
    return std::chrono::floor<std::chrono::minutes>(t) + 1min;
  }
  void finishJob(const std::string& name, bool ok, const std::string& startTime) {
    auto j = rest->get(res::kJobs, "default", name);
    ASSERT_TRUE(j.ok());
    json st = {{"status",
                {{"startTime", startTime},
                 {"conditions",
                  {{{"type", ok ? "Complete" : "Failed"},
                    {"status", "True"},
                    {"lastTransitionTime", startTime}}}}}}};
    if (ok) st["status"]["completionTime"] = startTime;
    ASSERT_TRUE(rest->patch(res::kJobs, "default", name, st, "merge", "status").ok());
  }

  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
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
    ASSERT_TRUE(eventually([&] { return same(*cronJobs, kCronJobs) && same(*jobs, res::kJobs); }));
    Status s = controller->sync("default/" + name);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  int countEvents(const std::string& reason) {
    int n = 0;
    for (const auto& e : events.events()) n += e.reason == reason;
    return n;
  }

  testing::InProcessApiServer apiServer;
  testing::FakeClock clock;
  WallClock::time_point wallNow, created;
  client::FakeEventRecorder events;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> cronJobs, jobs;
  std::unique_ptr<CronJobController> controller;
};

TEST_F(CronJobControllerTest, CreatesAJobPerScheduledTime) {
  createCronJob("every", {});
  pass("every");
  EXPECT_TRUE(jobNames().empty());  // the first minute has not come yet
  const auto first = nextMinute(created);
  wallNow = first + 5s;
  pass("every");
  EXPECT_EQ(jobNames(), (std::vector<std::string>{jobFor("every", first)}));
  auto job = *rest->get(res::kJobs, "default", jobFor("every", first));
  EXPECT_EQ(job["metadata"]["labels"]["app"], "every");
  EXPECT_EQ(job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            formatRfc3339(first));
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
  EXPECT_EQ(job["spec"]["backoffLimit"], 6);  // the Job's own defaults apply
  json cj = getCronJob("every");
  EXPECT_EQ(cj["status"]["lastScheduleTime"], formatRfc3339(first));
  ASSERT_EQ(cj["status"]["active"].size(), 1u);
  EXPECT_EQ(cj["status"]["active"][0]["name"], jobFor("every", first));
  EXPECT_TRUE(events.find("SuccessfulCreate"));

  pass("every");  // the same minute again: nothing new
  EXPECT_EQ(jobNames().size(), 1u);

  finishJob(jobFor("every", first), true, formatRfc3339(first + 3s));
  wallNow = first + 65s;
  pass("every");
  EXPECT_EQ(jobNames().size(), 2u);
  cj = getCronJob("every");
  EXPECT_EQ(cj["status"]["active"].size(), 1u);  // only the new one runs
  EXPECT_EQ(cj["status"]["lastSuccessfulTime"], formatRfc3339(first + 3s));
  EXPECT_EQ(countEvents("SawCompletedJob"), 1);
}

TEST_F(CronJobControllerTest, AfterAnOutageOnlyTheMostRecentTimeRuns) {
  createCronJob("late", {});
  const auto first = nextMinute(created);
  wallNow = first + 10min + 5s;  // 11 times missed
  pass("late");
  EXPECT_EQ(jobNames(), (std::vector<std::string>{jobFor("late", first + 10min)}));
  EXPECT_EQ(countEvents("TooManyMissedTimes"), 0);

  wallNow += 200min;  // more than 100 missed: still one run, and a warning
  pass("late");
  EXPECT_EQ(jobNames().size(), 2u);
  EXPECT_EQ(countEvents("TooManyMissedTimes"), 1);
  auto ev = events.find("TooManyMissedTimes");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->type, "Warning");
}

TEST_F(CronJobControllerTest, StartingDeadlineSkipsARunThatIsTooLate) {
  createCronJob("deadline", {{"startingDeadlineSeconds", 20}});
  const auto first = nextMinute(created);
  wallNow = first + 45s;
  pass("deadline");
  EXPECT_TRUE(jobNames().empty());  // 45 s late with a 20 s deadline: that time is skipped
  EXPECT_FALSE(getCronJob("deadline")["status"].contains("lastScheduleTime"));
  wallNow = first + 1min + 10s;  // the next time, within the deadline
  pass("deadline");
  EXPECT_EQ(jobNames(), (std::vector<std::string>{jobFor("deadline", first + 1min)}));
}

TEST_F(CronJobControllerTest, ForbidWaitsAndReplaceReplaces) {
  createCronJob("forbid", {{"concurrencyPolicy", "Forbid"}});
  const auto first = nextMinute(created);
  wallNow = first + 1s;
  pass("forbid");
  wallNow = first + 61s;
  pass("forbid");
  EXPECT_EQ(jobNames().size(), 1u);  // the first still runs
  EXPECT_TRUE(events.find("JobAlreadyActive"));

  createCronJob("replace", {{"concurrencyPolicy", "Replace"}});
  const auto r1 = nextMinute(created);
  wallNow = r1 + 1s;
  pass("replace");
  wallNow = r1 + 61s;
  pass("replace");
  auto names = jobNames();
  EXPECT_EQ(std::count(names.begin(), names.end(), jobFor("replace", r1)), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), jobFor("replace", r1 + 1min)), 1);
  json cj = getCronJob("replace");
  ASSERT_EQ(cj["status"]["active"].size(), 1u);
  EXPECT_EQ(cj["status"]["active"][0]["name"], jobFor("replace", r1 + 1min));
}

TEST_F(CronJobControllerTest, HistoryLimitsKeepTheNewestFinishedJobs) {
  createCronJob("hist", {{"successfulJobsHistoryLimit", 2}, {"failedJobsHistoryLimit", 1}});
  const auto first = nextMinute(created);
  for (int i = 0; i < 5; ++i) {
    wallNow = first + std::chrono::minutes(i) + 1s;
    pass("hist");
    const std::string name = jobFor("hist", first + std::chrono::minutes(i));
    // Runs 0, 1, 3 succeed; 2 and 4 fail.
    finishJob(name, i != 2 && i != 4, formatRfc3339(first + std::chrono::minutes(i)));
  }
  pass("hist");
  EXPECT_EQ(jobNames(),
            (std::vector<std::string>{jobFor("hist", first + 1min), jobFor("hist", first + 3min),
                                      jobFor("hist", first + 4min)}));
  EXPECT_GE(countEvents("SuccessfulDelete"), 2);
  EXPECT_FALSE(getCronJob("hist")["status"].contains("active"));
}

TEST_F(CronJobControllerTest, SuspendedCronJobsStartNothing) {
  createCronJob("paused", {{"suspend", true}});
  wallNow = nextMinute(created) + 5min;
  pass("paused");
  EXPECT_TRUE(jobNames().empty());
}

TEST_F(CronJobControllerTest, ATimeThatRanIsNotRunTwiceWhenTheStatusWriteWasLost) {
  createCronJob("once", {});
  const auto first = nextMinute(created);
  wallNow = first + 1s;
  pass("once");
  // The status write is lost: lastScheduleTime and active go back to nothing.
  json cj = getCronJob("once");
  cj["status"] = json::object();
  ASSERT_TRUE(rest->update(kCronJobs, cj, "status").ok());
  pass("once");
  EXPECT_EQ(jobNames().size(), 1u);
  cj = getCronJob("once");
  EXPECT_EQ(cj["status"]["lastScheduleTime"], formatRfc3339(first));
  EXPECT_EQ(cj["status"]["active"].size(), 1u);
}

TEST_F(CronJobControllerTest, BadSchedulesAreRefusedWithAFieldPath) {
  json cj = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "bad"},
    "spec": {"schedule": "61 * * * *", "timeZone": "Mars/Olympus",
             "jobTemplate": {"spec": {"template": {"spec": {
               "restartPolicy": "Always",
               "containers": [{"name": "c", "image": "busybox"}]}}}}}})");
  auto r = rest->create(kCronJobs, "default", cj);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 422);
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above "
                     "maximum (59): 61"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone "
                     "Mars/Olympus"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("spec.jobTemplate.spec.template.spec.restartPolicy: Required value"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace minik8s::controllers
