// The Scheduler end to end against a real in-process API server: binding, events, the
// Unschedulable condition and the retry when a node appears.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "common/http.h"
#include "common/metrics.h"
#include "in_process_api_server.h"
#include "scheduler/scheduler.h"
#include "storage/store.h"

namespace minik8s::scheduler {
namespace {

using namespace std::chrono_literals;
using client::resources::kEvents;
using client::resources::kNodes;
using client::resources::kPods;

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
  }
  void TearDown() override {
    if (sched) sched->stop();
    if (front) front->stop();
    apiServer.stop();
  }

  // Puts a server in front of the API server for the scheduler's client: `hook` sees each request
  // first and answers it itself by returning true (a failing or slow binding).
  void interpose(std::function<bool(const http::Request&, http::ResponseWriter&)> hook) {
    front = std::make_unique<http::Server>(
        [this, hook](const http::Request& req, http::ResponseWriter& w) {
          if (!hook(req, w)) apiServer.api().handle(req, w);
        });
    ASSERT_TRUE(front->start("127.0.0.1:0").ok());
    rest =
        std::make_unique<client::RestClient>("http://127.0.0.1:" + std::to_string(front->port()));
  }
  static bool isBinding(const http::Request& req) {
    return req.method == "POST" && req.path.ends_with("/binding");
  }

  void startScheduler(Policy policy = Policy::kDefault) {
    SchedulerOptions opts;
    opts.policy = policy;
    opts.queue.initialBackoff = 50ms;
    opts.queue.maxBackoff = 200ms;
    sched = std::make_unique<Scheduler>(*rest, opts);
    sched->start();
    ASSERT_TRUE(sched->waitForSync(5s));
  }

  void createNode(const std::string& name, const std::string& cpu, json labels = json::object()) {
    json node = {
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", labels}}}};
    ASSERT_TRUE(rest->create(kNodes, "", node).ok());
    json status = {{"status",
                    {{"allocatable", {{"cpu", cpu}, {"memory", "4Gi"}, {"pods", "110"}}},
                     {"capacity", {{"cpu", cpu}, {"memory", "4Gi"}, {"pods", "110"}}},
                     {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    auto r = rest->patch(kNodes, "", name, status, "merge", "status");
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }

  void createPod(const std::string& name, const std::string& cpu, json extraSpec = {}) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"containers",
                   {{{"name", "c"},
                     {"image", "busybox"},
                     {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}}};
    if (extraSpec.is_object()) pod["spec"].update(extraSpec);
    auto r = rest->create(kPods, "default", pod);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }

  std::string nodeOf(const std::string& pod) {
    auto p = rest->get(kPods, "default", pod);
    return p.ok() ? p->value("/spec/nodeName"_json_pointer, std::string()) : "";
  }

  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  std::vector<json> eventsFor(const std::string& pod, const std::string& reason) {
    client::ListParams params;
    params.fieldSelector = "involvedObject.name=" + pod + ",reason=" + reason;
    auto list = rest->list(kEvents, "default", params);
    std::vector<json> out;
    if (list.ok()) {
      for (const auto& e : (*list)["items"]) out.push_back(e);
    }
    return out;
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<http::Server> front;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<Scheduler> sched;
};

// scheduler_schedule_attempts_total{result, profile="default-scheduler"} of this process.
double attempts(std::string_view result) {
  return metrics::defaultRegistry()
      .counterVec("scheduler_schedule_attempts_total", "", {"result", "profile"})
      .with({result, "default-scheduler"})
      .value();
}

TEST_F(SchedulerTest, BindsPendingPodsAndRecordsScheduledEvents) {
  const double scheduledBefore = attempts("scheduled");
  createNode("n1", "2", {{"disk", "ssd"}});
  createNode("n2", "2");
  startScheduler();
  createPod("a", "1500m");
  createPod("b", "1500m");
  createPod("picky", "100m", {{"nodeSelector", {{"disk", "ssd"}}}});
  ASSERT_TRUE(eventually(
      [&] { return !nodeOf("a").empty() && !nodeOf("b").empty() && !nodeOf("picky").empty(); }));
  EXPECT_NE(nodeOf("a"), nodeOf("b"));  // 1.5 cpu each on 2-cpu nodes
  EXPECT_EQ(nodeOf("picky"), "n1");
  ASSERT_TRUE(eventually([&] { return eventsFor("a", "Scheduled").size() == 1; }));
  json e = eventsFor("a", "Scheduled")[0];
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["message"], "Successfully assigned default/a to " + nodeOf("a"));
  EXPECT_EQ(e["source"]["component"], "default-scheduler");
  EXPECT_EQ(e["involvedObject"]["kind"], "Pod");
  auto pod = rest->get(kPods, "default", "a");
  bool scheduledTrue = false;
  for (const auto& c : (*pod)["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") scheduledTrue = c["status"] == "True";
  }
  EXPECT_TRUE(scheduledTrue);
  // Three attempts, each counted once its binding succeeded; nothing left pending.
  EXPECT_TRUE(eventually([&] { return attempts("scheduled") - scheduledBefore == 3; }))
      << attempts("scheduled") - scheduledBefore;
  std::string text = metrics::defaultRegistry().exposition();
  EXPECT_NE(text.find("\nscheduler_pending_pods{queue=\"active\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("\nscheduler_scheduling_attempt_duration_seconds_count{result=\"scheduled\","
                      "profile=\"default-scheduler\"} "),
            std::string::npos);
}

TEST_F(SchedulerTest, UnschedulablePodGetsConditionAndEventThenFitsWhenANodeAppears) {
  createNode("n1", "1");
  createNode("n2", "1");
  createNode("n3", "1");
  startScheduler();
  createPod("big", "2");
  const std::string message = "0/3 nodes are available: 3 Insufficient cpu.";
  ASSERT_TRUE(eventually([&] {
    auto pod = rest->get(kPods, "default", "big");
    for (const auto& c : pod->value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable" &&
          c["message"] == message) {
        return true;
      }
    }
    return false;
  }));
  ASSERT_TRUE(eventually([&] { return !eventsFor("big", "FailedScheduling").empty(); }));
  json e = eventsFor("big", "FailedScheduling")[0];
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["message"], message);
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["source"]["component"], "default-scheduler");
  EXPECT_EQ(e["involvedObject"]["name"], "big");
  EXPECT_FALSE(e["involvedObject"]["uid"].get<std::string>().empty());
  EXPECT_TRUE(e["firstTimestamp"].is_string());

  createNode("huge", "4");
  ASSERT_TRUE(eventually([&] { return nodeOf("big") == "huge"; }));
}

TEST_F(SchedulerTest, OnlyPodsForThisSchedulerAreBound) {
  createNode("n1", "2");
  startScheduler(Policy::kRoundRobin);
  createPod("other", "100m", {{"schedulerName", "my-scheduler"}});
  createPod("mine", "100m", {{"schedulerName", "default-scheduler"}});
  ASSERT_TRUE(eventually([&] { return nodeOf("mine") == "n1"; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(nodeOf("other"), "");
  EXPECT_EQ(sched->stats().bound, 1u);
}

TEST_F(SchedulerTest, CordonedNodesAreSkippedAndDeletedPodsFreeRoom) {
  createNode("n1", "1");
  createNode("n2", "1");
  ASSERT_TRUE(rest->patch(kNodes, "", "n2", {{"spec", {{"unschedulable", true}}}}).ok());
  startScheduler();
  createPod("a", "1");
  ASSERT_TRUE(eventually([&] { return nodeOf("a") == "n1"; }));
  createPod("b", "1");
  ASSERT_TRUE(eventually([&] { return !eventsFor("b", "FailedScheduling").empty(); }));
  EXPECT_EQ(eventsFor("b", "FailedScheduling")[0]["message"],
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.");
  ASSERT_TRUE(rest->remove(kPods, "default", "a", {{"gracePeriodSeconds", 0}}).ok());
  ASSERT_TRUE(eventually([&] { return nodeOf("b") == "n1"; }));
}

// Bindings run on workers while the next pods are scheduled: a binding that fails undoes the
// pod's assumed place (else the retry would find the 1-cpu node full of the pod itself) and puts
// the pod back in the queue, to be bound on the next try.
TEST_F(SchedulerTest, AFailedBindingForgetsTheAssumedPodAndRetriesIt) {
  std::atomic<int> bindings{0};
  interpose([&](const http::Request& req, http::ResponseWriter& w) {
    if (!isBinding(req) || bindings++ > 0) return false;
    w.send(http::Response::error(Status::Internal("etcd is away")));
    return true;
  });
  createNode("n1", "1");
  startScheduler();
  createPod("a", "600m");
  ASSERT_TRUE(eventually([&] { return nodeOf("a") == "n1"; }));
  EXPECT_EQ(bindings.load(), 2);
  // The pod shows its node before the worker counts the binding.
  ASSERT_TRUE(eventually([&] { return sched->stats().bound == 1; }));
  auto st = sched->stats();
  EXPECT_EQ(st.bindErrors, 1u);
  EXPECT_GE(st.attempts, 2u);
  ASSERT_TRUE(eventually([&] { return eventsFor("a", "Scheduled").size() == 1; }));
  // Counted once now: a second pod of 600m does not fit.
  createPod("b", "600m");
  ASSERT_TRUE(eventually([&] { return !eventsFor("b", "FailedScheduling").empty(); }));
  EXPECT_EQ(eventsFor("b", "FailedScheduling")[0]["message"],
            "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_EQ(nodeOf("b"), "");
}

// With every binding slow, many are in flight at once: the pods already placed count against
// the nodes (assumed), so no node gets more than it holds and no pod is bound twice.
TEST_F(SchedulerTest, CapacityHoldsWhileBindingsAreInFlight) {
  std::mutex mu;
  std::map<std::string, int> bindsPerPod;
  interpose([&](const http::Request& req, http::ResponseWriter&) {
    if (!isBinding(req)) return false;
    {
      std::lock_guard l(mu);
      ++bindsPerPod[req.path];
    }
    std::this_thread::sleep_for(300ms);
    return false;
  });
  createNode("n1", "2");
  createNode("n2", "1");
  startScheduler();
  for (int i = 0; i < 8; ++i) createPod("p" + std::to_string(i), "500m");
  // 4 fit on n1 and 2 on n2; the other 2 stay pending.
  ASSERT_TRUE(eventually([&] { return sched->stats().bound == 6; }));
  ASSERT_TRUE(eventually([&] { return sched->stats().unschedulable >= 2; }));
  std::map<std::string, int> perNode;
  for (int i = 0; i < 8; ++i) ++perNode[nodeOf("p" + std::to_string(i))];
  EXPECT_EQ(perNode["n1"], 4);
  EXPECT_EQ(perNode["n2"], 2);
  EXPECT_EQ(perNode[""], 2);
  std::lock_guard l(mu);
  EXPECT_EQ(bindsPerPod.size(), 6u);
  for (const auto& [path, n] : bindsPerPod) EXPECT_EQ(n, 1) << path;
  EXPECT_EQ(sched->stats().bindErrors, 0u);
}

// As in `minik8s server`: schedulers reading informers shared with other components, one after
// the other as the Lease moves. The stopped one reacts to nothing more; the next one starts from
// the shared caches, including the node usage of pods bound before it.
TEST_F(SchedulerTest, TheNextSchedulerOnSharedInformersStartsFromTheirCaches) {
  client::SharedInformers informers(*rest);
  auto controllersPods = informers.informer(kPods);  // another reader: the pods watch lives on
  controllersPods->start();
  SchedulerOptions opts;
  opts.queue.initialBackoff = 50ms;
  opts.queue.maxBackoff = 200ms;
  createNode("n1", "3");
  auto first = std::make_unique<Scheduler>(*rest, opts, &informers);
  first->start();
  ASSERT_TRUE(first->waitForSync(5s));
  createPod("a", "1500m");
  ASSERT_TRUE(eventually([&] { return nodeOf("a") == "n1"; }));
  first->stop();
  first.reset();
  EXPECT_EQ(informers.size(), 1u);  // the pods, for the other reader

  createPod("b", "1500m");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(nodeOf("b"), "");  // no scheduler runs

  auto next = std::make_unique<Scheduler>(*rest, opts, &informers);
  next->start();
  ASSERT_TRUE(next->waitForSync(5s));
  ASSERT_TRUE(eventually([&] { return nodeOf("b") == "n1"; }));
  createPod("c", "100m");  // a's 1.5 cpu counts: n1 is full
  ASSERT_TRUE(eventually([&] { return next->stats().unschedulable >= 1; }));
  EXPECT_EQ(nodeOf("c"), "");
  EXPECT_EQ(next->stats().bound, 1u);
  next->stop();
}

}  // namespace
}  // namespace minik8s::scheduler
