// Pod garbage collection against a real in-process API server with a fake clock: orphans of a
// missing node after the quarantine (marked Failed with DisruptionTarget, then force-deleted),
// the live GET that spares pods of a node the cache does not show, unscheduled terminating pods,
// terminating pods on out-of-service nodes, the terminated-pod threshold, restarts, and the
// event-driven loop with a real clock.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "controllers/manager/controller_manager.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

constexpr char kHold[] = "test.minik8s.io/hold";  // a finalizer keeps deleted pods readable

json pod(const std::string& name, const std::string& created = "2024-01-01T00:00:00Z",
         const std::string& phase = "Succeeded", const std::string& reason = "") {
  json p = {{"metadata", {{"name", name}, {"creationTimestamp", created}}},
            {"status", {{"phase", phase}}}};
  if (!reason.empty()) p["status"]["reason"] = reason;
  return p;
}

std::vector<std::string> names(const std::vector<json>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p["metadata"]["name"]);
  return out;
}

TEST(TerminatedPodsToDelete, EvictedFirstThenOldestThenName) {
  std::vector<json> pods = {
      pod("new", "2024-01-03T00:00:00Z"),
      pod("running", "2023-01-01T00:00:00Z", "Running"),
      pod("old-b", "2024-01-01T00:00:00Z", "Failed"),
      pod("old-a", "2024-01-01T00:00:00Z"),
      pod("evicted", "2024-01-05T00:00:00Z", "Failed", "Evicted"),
      pod("mid", "2024-01-02T00:00:00Z"),
  };
  EXPECT_EQ(names(terminatedPodsToDelete(pods, 2)),
            (std::vector<std::string>{"evicted", "old-a", "old-b"}));
  EXPECT_EQ(names(terminatedPodsToDelete(pods, 4)), (std::vector<std::string>{"evicted"}));
  EXPECT_TRUE(terminatedPodsToDelete(pods, 5).empty());
  EXPECT_TRUE(terminatedPodsToDelete(pods, 0).empty());  // turned off
  EXPECT_TRUE(terminatedPodsToDelete(pods, -1).empty());
}

TEST(PodGcOptionsTest, ManagerDefaultsAndTheThresholdFlag) {
  ControllerManager::Options options;
  EXPECT_EQ(options.controllers, std::vector<std::string>{"*"});
  EXPECT_EQ(options.terminatedPodGcThreshold, 12500);
  EXPECT_EQ(options.podGcQuarantine, 40s);
  ControllerDurationFlags flags;
  flags.terminatedPodGcThreshold = 7;
  ASSERT_TRUE(flags.applyTo(options).ok());
  EXPECT_EQ(options.terminatedPodGcThreshold, 7);
}

class PodGcTest : public ::testing::Test {
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
  void stopAll() {
    controller.reset();
    for (auto* i : {nodes.get(), pods.get()}) {
      if (i) i->stop();
    }
  }
  // A new controller with new informers (handlers are added before an informer starts), as
  // after a restart of the controller manager.
  void restart() {
    stopAll();
    // Nodes labelled hidden=true exist but stay out of the controller's cache.
    client::ListParams visible;
    visible.labelSelector = "hidden!=true";
    nodes = std::make_unique<client::Informer>(*rest, res::kNodes, "", visible);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    PodGcOptions opts;
    opts.clock = &clock;
    opts.terminatedPodThreshold = threshold;
    controller = std::make_unique<PodGcController>(*rest, *pods, *nodes, opts);
    for (auto* i : {nodes.get(), pods.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }

  void createNode(const std::string& name, bool ready = true, json taints = json::array(),
                  bool hidden = false) {
    json n = {
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", {{"name", name}, {"labels", {{"hidden", hidden ? "true" : "false"}}}}},
        {"spec", {{"taints", taints}}},
        {"status", {{"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
    ASSERT_TRUE(rest->create(res::kNodes, "", n).ok());
  }
  void createPod(const std::string& name, const std::string& node, bool hold = false,
                 const std::string& phase = "Running") {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    if (!node.empty()) p["spec"]["nodeName"] = node;
    if (hold) p["metadata"]["finalizers"] = {kHold};
    ASSERT_TRUE(rest->create(res::kPods, "default", p).ok());
    json st = {{"status", {{"phase", phase}}}};
    ASSERT_TRUE(rest->patch(res::kPods, "default", name, st, "merge", "status").ok());
  }
  // Deletes gracefully: a scheduled pod (or one with a finalizer) stays, terminating.
  void startDeleting(const std::string& name) {
    ASSERT_TRUE(rest->remove(res::kPods, "default", name).ok());
    ASSERT_TRUE(rest->get(res::kPods, "default", name).ok());
  }
  std::optional<json> getPod(const std::string& name) {
    auto p = rest->get(res::kPods, "default", name);
    if (!p.ok()) return std::nullopt;
    return *p;
  }
  bool exists(const std::string& name) { return getPod(name).has_value(); }

  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  // Waits until the caches hold what the API server holds, then runs one pass.
  void pass() {
    auto same = [&](client::Informer& inf, const client::Resource& r, const std::string& sel) {
      client::ListParams params;
      params.labelSelector = sel;
      auto l = rest->list(r, "", params);
      if (!l.ok()) return false;
      std::map<std::string, std::string> want, have;
      for (const auto& o : (*l)["items"])
        want[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      for (const auto& o : inf.list())
        have[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      return want == have;
    };
    ASSERT_TRUE(eventually(
        [&] { return same(*nodes, res::kNodes, "hidden!=true") && same(*pods, res::kPods, ""); }));
    Status s = controller->gc();
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  static json condition(const json& obj, const std::string& type) {
    for (const auto& c : obj.value("/status/conditions"_json_pointer, json::array())) {
      if (c["type"] == type) return c;
    }
    return nullptr;
  }

  testing::InProcessApiServer apiServer;
  testing::FakeClock clock;
  int threshold = 12500;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> nodes, pods;
  std::unique_ptr<PodGcController> controller;
};

TEST_F(PodGcTest, OrphansAreMarkedFailedAndForceDeletedAfterTheQuarantine) {
  createNode("n1");
  createPod("on-n1", "n1");
  createPod("orphan", "ghost");
  createPod("orphan-held", "ghost", /*hold=*/true);
  pass();  // the quarantine of "ghost" starts
  clock.advance(39s);
  pass();
  EXPECT_TRUE(exists("orphan"));
  EXPECT_TRUE(exists("orphan-held"));

  clock.advance(2s);
  pass();
  EXPECT_FALSE(exists("orphan"));
  EXPECT_TRUE(exists("on-n1"));
  // The finalizer keeps what podgc wrote readable: Failed, DisruptionTarget, deleted at once.
  auto held = getPod("orphan-held");
  ASSERT_TRUE(held);
  EXPECT_EQ((*held)["status"]["phase"], "Failed");
  json dt = condition(*held, "DisruptionTarget");
  ASSERT_TRUE(dt.is_object()) << held->dump();
  EXPECT_EQ(dt["status"], "True");
  EXPECT_EQ(dt["reason"], "DeletionByPodGC");
  EXPECT_EQ(dt["message"], "PodGC: node no longer exists");
  EXPECT_TRUE((*held)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*held)["metadata"]["deletionGracePeriodSeconds"], 0);
}

TEST_F(PodGcTest, ADeletedNodesPodsGoAfterTheQuarantine) {
  createNode("n1");
  createNode("n2");
  createPod("a", "n1");
  createPod("b", "n2");
  pass();
  ASSERT_TRUE(rest->remove(res::kNodes, "", "n1").ok());
  pass();
  clock.advance(40s);
  pass();
  EXPECT_FALSE(exists("a"));
  EXPECT_TRUE(exists("b"));
}

TEST_F(PodGcTest, ANodeTheCacheDoesNotShowIsCheckedLiveAndItsPodsStay) {
  createNode("hidden-node", true, json::array(), /*hidden=*/true);
  createPod("p", "hidden-node");
  pass();
  clock.advance(41s);
  pass();  // the live GET finds the node
  EXPECT_TRUE(exists("p"));
  clock.advance(41s);
  pass();  // a new quarantine starts
  EXPECT_TRUE(exists("p"));
  ASSERT_TRUE(rest->remove(res::kNodes, "", "hidden-node").ok());
  pass();  // the quarantine that started in the previous pass is not over yet
  EXPECT_TRUE(exists("p"));
  clock.advance(41s);
  pass();
  EXPECT_FALSE(exists("p"));
}

TEST_F(PodGcTest, ARestartStartsTheQuarantineAgain) {
  createPod("orphan", "ghost");
  pass();
  clock.advance(30s);
  restart();  // the new instance knows nothing of the first quarantine
  pass();
  clock.advance(30s);
  pass();
  EXPECT_TRUE(exists("orphan"));  // 60 s since the first sighting, 30 s since the restart
  clock.advance(11s);
  pass();
  EXPECT_FALSE(exists("orphan"));
}

TEST_F(PodGcTest, UnscheduledTerminatingPodsAreForceDeleted) {
  createPod("pending", "", /*hold=*/true, "Pending");
  createPod("pending-alive", "", /*hold=*/false, "Pending");
  pass();
  EXPECT_EQ((*getPod("pending"))["status"]["phase"], "Pending");  // not terminating: left alone
  startDeleting("pending");
  pass();
  auto p = getPod("pending");
  ASSERT_TRUE(p);  // only the finalizer holds it now
  EXPECT_EQ((*p)["status"]["phase"], "Failed");
  EXPECT_TRUE(condition(*p, "DisruptionTarget").is_null());
  EXPECT_EQ((*p)["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_TRUE(exists("pending-alive"));
}

TEST_F(PodGcTest, TerminatingPodsOnOutOfServiceNotReadyNodesAreForceDeleted) {
  json outOfService = {
      {{"key", kTaintNodeOutOfService}, {"value", "nodeshutdown"}, {"effect", "NoExecute"}}};
  createNode("down", /*ready=*/false, outOfService);
  createNode("down-untainted", /*ready=*/false);
  createNode("ready-tainted", /*ready=*/true, outOfService);
  for (const char* n : {"down", "down-untainted", "ready-tainted"}) {
    createPod(std::string("t-") + n, n);
    startDeleting(std::string("t-") + n);  // bound: waits for a kubelet that will not come
  }
  createPod("alive-on-down", "down");
  pass();
  EXPECT_FALSE(exists("t-down"));
  EXPECT_TRUE(exists("t-down-untainted"));
  EXPECT_TRUE(exists("t-ready-tainted"));
  EXPECT_TRUE(exists("alive-on-down"));  // not terminating
}

TEST_F(PodGcTest, TerminatedPodsAboveTheThresholdAreDeletedEvictedFirst) {
  threshold = 2;
  restart();
  createNode("n1");
  createPod("s-a", "n1", false, "Succeeded");
  createPod("s-b", "n1", false, "Succeeded");
  createPod("f-c", "n1", false, "Failed");
  createPod("z-evicted", "n1", false, "Failed");
  ASSERT_TRUE(rest->patch(res::kPods, "default", "z-evicted", {{"status", {{"reason", "Evicted"}}}},
                          "merge", "status")
                  .ok());
  createPod("running", "n1");
  pass();
  EXPECT_FALSE(exists("z-evicted"));
  // Same creation second for the rest: the name decides.
  int left = exists("s-a") + exists("s-b") + exists("f-c");
  EXPECT_EQ(left, 2);
  EXPECT_TRUE(exists("running"));
  pass();  // at the threshold now: nothing more
  EXPECT_EQ(exists("s-a") + exists("s-b") + exists("f-c"), 2);
}

TEST(PodGcLoop, ANodeDeletionTriggersAPassAndTheQuarantineEndsOnTime) {
  testing::InProcessApiServer apiServer;
  ASSERT_TRUE(apiServer.start().ok());
  client::RestClient rest(apiServer.url());
  client::Informer nodes(rest, res::kNodes), pods(rest, res::kPods);
  PodGcOptions opts;
  opts.quarantine = 300ms;
  opts.gcPeriod = 1h;  // only events and the quarantine can trigger a pass
  PodGcController controller(rest, pods, nodes, opts);
  ASSERT_TRUE(rest.create(res::kNodes, "",
                          {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}})
                  .ok());
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", "p"}}},
            {"spec", {{"nodeName", "n1"}, {"containers", {{{"name", "c"}, {"image", "b"}}}}}}};
  ASSERT_TRUE(rest.create(res::kPods, "default", p).ok());
  for (auto* i : {&nodes, &pods}) {
    i->start();
    ASSERT_TRUE(i->waitForSync(5s));
  }
  controller.start();
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(rest.get(res::kPods, "default", "p").ok());  // its node exists
  const auto deleted = std::chrono::steady_clock::now();
  ASSERT_TRUE(rest.remove(res::kNodes, "", "n1").ok());
  bool gone = false;
  while (std::chrono::steady_clock::now() - deleted < 5s) {
    if (!rest.get(res::kPods, "default", "p").ok()) {
      gone = true;
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  const auto took = std::chrono::steady_clock::now() - deleted;
  EXPECT_TRUE(gone);
  EXPECT_GE(took, 300ms);  // not before the quarantine
  EXPECT_LT(took, 2s);
  controller.stop();
  for (auto* i : {&nodes, &pods}) i->stop();
}

}  // namespace
}  // namespace minik8s::controllers
