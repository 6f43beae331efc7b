// Node lifecycle against a real in-process API server with a fake wall clock: heartbeats stop ->
// Ready=Unknown, unreachable taints, pods not ready -> pods evicted after their toleration; the
// node comes back -> taints removed; the Events of each step. Plus the toleration arithmetic.
#include <gtest/gtest.h>

#include <thread>

#include "common/time_util.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

const WallClock::time_point kT0 = WallClock::time_point(std::chrono::seconds(1'700'000'000));

TEST(Tolerations, MatchingAndDefaults) {
  json unreachable = {{"key", kTaintNodeUnreachable}, {"effect", "NoExecute"}};
  EXPECT_TRUE(tolerates({{"operator", "Exists"}}, unreachable));
  EXPECT_TRUE(tolerates({{"key", kTaintNodeUnreachable}, {"operator", "Exists"}}, unreachable));
  EXPECT_FALSE(
      tolerates({{"key", kTaintNodeUnreachable}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
                unreachable));
  EXPECT_FALSE(tolerates({{"key", "other"}, {"operator", "Exists"}}, unreachable));
  EXPECT_TRUE(tolerates({{"key", "k"}, {"value", "v"}},
                        {{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}));
  EXPECT_FALSE(tolerates({{"key", "k"}, {"value", "w"}}, {{"key", "k"}, {"value", "v"}}));

  json pod = {{"spec", json::object()}};
  json added = unreachable;
  added["timeAdded"] = formatRfc3339(kT0);
  // The DefaultTolerationSeconds default.
  EXPECT_EQ(evictionTime(pod, json::array({added}), 300s, kT0 + 1s), kT0 + 300s);
  // The pod's own toleration wins over the default.
  pod["spec"]["tolerations"] = {{{"key", kTaintNodeUnreachable},
                                 {"operator", "Exists"},
                                 {"effect", "NoExecute"},
                                 {"tolerationSeconds", 10}}};
  EXPECT_EQ(evictionTime(pod, json::array({added}), 300s, kT0 + 1s), kT0 + 10s);
  // Tolerated forever.
  pod["spec"]["tolerations"] = {{{"operator", "Exists"}}};
  EXPECT_FALSE(evictionTime(pod, json::array({added}), 300s, kT0 + 1s).has_value());
  // A NoExecute taint nothing tolerates: now.
  json custom = {{"key", "dedicated"}, {"value", "x"}, {"effect", "NoExecute"}};
  pod["spec"]["tolerations"] = json::array();
  EXPECT_EQ(evictionTime(pod, json::array({custom}), 300s, kT0), WallClock::time_point::min());
  // NoSchedule only: never.
  EXPECT_FALSE(evictionTime(pod, json::array({{{"key", "a"}, {"effect", "NoSchedule"}}}), 300s, kT0)
                   .has_value());
}

class NodeLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    rest->create(
        res::kNamespaces, "",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "kube-node-lease"}}}});
    nodes = std::make_unique<client::Informer>(*rest, res::kNodes);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    leases = std::make_unique<client::Informer>(*rest, res::kLeases, "kube-node-lease");
    NodeLifecycleOptions opts;
    opts.now = [this] { return now; };
    opts.events = &events;
    controller = std::make_unique<NodeLifecycleController>(*rest, *nodes, *pods, *leases, opts);
    for (auto* i : {nodes.get(), pods.get(), leases.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }
  void TearDown() override {
    controller.reset();
    for (auto* i : {nodes.get(), pods.get(), leases.get()}) i->stop();
    apiServer.stop();
  }

  json readyConditions(const std::string& heartbeat) {
    json conds = json::array();
    for (const char* t : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
      conds.push_back({{"type", t},
                       {"status", "False"},
                       {"reason", "KubeletHasSufficient"},
                       {"lastHeartbeatTime", heartbeat},
                       {"lastTransitionTime", heartbeat}});
    }
    conds.push_back({{"type", "Ready"},
                     {"status", "True"},
                     {"reason", "KubeletReady"},
                     {"message", "kubelet is posting ready status"},
                     {"lastHeartbeatTime", heartbeat},
                     {"lastTransitionTime", heartbeat}});
    return conds;
  }
  void createNode() {
    json n = {{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata", {{"name", "n1"}}},
              {"status", {{"conditions", readyConditions(formatRfc3339(now))}}}};
    ASSERT_TRUE(rest->create(res::kNodes, "", n).ok());
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", "n1"}, {"namespace", "kube-node-lease"}}},
                  {"spec",
                   {{"holderIdentity", "n1"},
                    {"leaseDurationSeconds", 40},
                    {"renewTime", formatRfc3339Micro(now)}}}};
    ASSERT_TRUE(rest->create(res::kLeases, "kube-node-lease", lease).ok());
  }
  void createPod(const std::string& name, json tolerations = json::array()) {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"nodeName", "n1"},
                {"tolerations", tolerations},
                {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    ASSERT_TRUE(rest->create(res::kPods, "default", p).ok());
    json st = {{"status",
                {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    ASSERT_TRUE(rest->patch(res::kPods, "default", name, st, "merge", "status").ok());
  }
  template <typename F>
  bool eventually(F f) {
    for (int i = 0; i < 250; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  // Waits until the informers hold what the API server holds, then runs one pass.
  void pass() {
    auto same = [&](client::Informer& inf, const client::Resource& r, const std::string& ns) {
      auto l = rest->list(r, ns);
      if (!l.ok()) return false;
      std::map<std::string, std::string> want;
      for (const auto& o : (*l)["items"]) {
        want[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      }
      std::map<std::string, std::string> have;
      for (const auto& o : inf.list()) {
        have[client::objectKey(o)] = o["metadata"]["resourceVersion"];
      }
      return want == have;
    };
    ASSERT_TRUE(eventually([&] {
      return same(*nodes, res::kNodes, "") && same(*pods, res::kPods, "") &&
             same(*leases, res::kLeases, "kube-node-lease");
    }));
    Status s = controller->monitorNodeHealth();
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  json node() { return *rest->get(res::kNodes, "", "n1"); }
  static json condition(const json& obj, const std::string& type) {
    for (const auto& c : obj["status"]["conditions"]) {
      if (c["type"] == type) return c;
    }
    return nullptr;
  }
  std::set<std::string> taintKeys() {
    std::set<std::string> out;
    for (const auto& t : node().value("/spec/taints"_json_pointer, json::array())) {
      out.insert(t["key"].get<std::string>() + ":" + t["effect"].get<std::string>());
    }
    return out;
  }
  // Not deleted yet. A pod bound to a node is deleted gracefully (its agent confirms), so an
  // evicted pod may linger with a deletionTimestamp: that is gone for its ReplicaSet.
  bool podExists(const std::string& name) {
    auto p = rest->get(res::kPods, "default", name);
    return p.ok() && !(*p)["metadata"].contains("deletionTimestamp");
  }

  // The records of `reason`, as "kind ns/name type: message".
  std::vector<std::string> recorded(const std::string& reason) {
    std::vector<std::string> out;
    for (const auto& e : events.events()) {
      if (e.reason != reason) continue;
      out.push_back(e.involvedObject.value("kind", "") + " " +
                    e.involvedObject.value("namespace", "") + "/" +
                    e.involvedObject.value("name", "") + " " + e.type + ": " + e.message);
    }
    return out;
  }

  testing::InProcessApiServer apiServer;
  client::FakeEventRecorder events;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> nodes, pods, leases;
  std::unique_ptr<NodeLifecycleController> controller;
  WallClock::time_point now = kT0;
};

TEST_F(NodeLifecycleTest, SilentNodeBecomesUnknownTaintedAndItsPodsAreEvicted) {
  createNode();
  createPod("default-toleration");
  createPod("short-toleration", {{{"key", kTaintNodeUnreachable},
                                  {"operator", "Exists"},
                                  {"effect", "NoExecute"},
                                  {"tolerationSeconds", 10}}});
  createPod("tolerates-all", {{{"operator", "Exists"}}});
  pass();
  EXPECT_EQ(condition(node(), "Ready")["status"], "True");
  EXPECT_TRUE(taintKeys().empty());
  EXPECT_EQ(recorded("RegisteredNode"),
            std::vector<std::string>{
                "Node /n1 Normal: Node n1 event: Registered Node n1 in Controller"});
  EXPECT_EQ(events.find("RegisteredNode")->involvedObject["uid"], node()["metadata"]["uid"]);

  // The lease is renewed at +30 s: still healthy at +60 s (30 s since the last heartbeat).
  now = kT0 + 30s;
  json lease = *rest->get(res::kLeases, "kube-node-lease", "n1");
  lease["spec"]["renewTime"] = formatRfc3339Micro(now);
  ASSERT_TRUE(rest->update(res::kLeases, lease).ok());
  pass();
  now = kT0 + 70s;
  pass();
  EXPECT_EQ(condition(node(), "Ready")["status"], "True");
  EXPECT_EQ(events.reasons(), std::vector<std::string>{"RegisteredNode"});  // once per node

  // 41 s without a heartbeat.
  now = kT0 + 71s;
  pass();
  json n = node();
  for (const char* t : {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"}) {
    json c = condition(n, t);
    EXPECT_EQ(c["status"], "Unknown") << t;
    EXPECT_EQ(c["reason"], "NodeStatusUnknown") << t;
    EXPECT_EQ(c["message"], "Kubelet stopped posting node status.") << t;
    EXPECT_EQ(c["lastTransitionTime"], formatRfc3339(now)) << t;
  }
  EXPECT_EQ(condition(n, "Ready")["lastHeartbeatTime"], formatRfc3339(kT0));
  EXPECT_EQ(condition(*rest->get(res::kPods, "default", "default-toleration"), "Ready")["status"],
            "False");
  EXPECT_EQ(recorded("NodeNotReady"),
            (std::vector<std::string>{"Node /n1 Normal: Node n1 status is now: NodeNotReady",
                                      "Pod default/default-toleration Warning: Node is not ready",
                                      "Pod default/short-toleration Warning: Node is not ready",
                                      "Pod default/tolerates-all Warning: Node is not ready"}));
  pass();  // the taints follow the Unknown status
  EXPECT_EQ(taintKeys(), (std::set<std::string>{"node.kubernetes.io/unreachable:NoExecute",
                                                "node.kubernetes.io/unreachable:NoSchedule"}));
  const json taintedAt = node()["spec"]["taints"];

  now = kT0 + 80s;
  pass();
  EXPECT_TRUE(podExists("short-toleration"));
  now = kT0 + 82s;  // 10 s after the taint
  pass();
  EXPECT_TRUE(eventually([&] { return !podExists("short-toleration"); }));
  EXPECT_TRUE(podExists("default-toleration"));
  EXPECT_EQ(recorded("TaintManagerEviction"),
            std::vector<std::string>{"Pod default/short-toleration Normal: Marking for deletion "
                                     "Pod default/short-toleration"});
  now = kT0 + 370s;
  pass();
  EXPECT_TRUE(podExists("default-toleration"));
  now = kT0 + 373s;  // 300 s after the taint
  pass();
  EXPECT_TRUE(eventually([&] { return !podExists("default-toleration"); }));
  EXPECT_TRUE(podExists("tolerates-all"));
  EXPECT_EQ(node()["spec"]["taints"], taintedAt);  // timeAdded kept across passes
  EXPECT_EQ(recorded("TaintManagerEviction").size(), 2u);
  EXPECT_EQ(recorded("TaintManagerEviction")[1],
            "Pod default/default-toleration Normal: Marking for deletion Pod "
            "default/default-toleration");
  EXPECT_EQ(recorded("NodeNotReady").size(), 4u);  // not again while it stays Unknown

  // The agent comes back: Ready=True again, the taints go.
  now = kT0 + 400s;
  n = node();
  n["status"]["conditions"] = readyConditions(formatRfc3339(now));
  ASSERT_TRUE(rest->update(res::kNodes, n, "status").ok());
  pass();
  EXPECT_TRUE(taintKeys().empty());
  EXPECT_EQ(condition(node(), "Ready")["status"], "True");
  now = kT0 + 420s;
  pass();
  EXPECT_EQ(condition(node(), "Ready")["status"], "True");
}

TEST_F(NodeLifecycleTest, NotReadyNodeGetsNotReadyTaints) {
  createNode();
  pass();
  json n = node();
  for (auto& c : n["status"]["conditions"]) {
    if (c["type"] == "Ready") c["status"] = "False";
  }
  ASSERT_TRUE(rest->update(res::kNodes, n, "status").ok());
  pass();
  EXPECT_EQ(taintKeys(), (std::set<std::string>{"node.kubernetes.io/not-ready:NoExecute",
                                                "node.kubernetes.io/not-ready:NoSchedule"}));
  // The kubelet said NotReady itself: the kubelet reports it, not this controller.
  EXPECT_TRUE(recorded("NodeNotReady").empty());
}

TEST_F(NodeLifecycleTest, DeletedNodeIsRemovedFromTheController) {
  createNode();
  pass();
  const std::string uid = node()["metadata"]["uid"];
  ASSERT_TRUE(rest->remove(res::kNodes, "", "n1").ok());
  pass();
  EXPECT_EQ(events.reasons(), (std::vector<std::string>{"RegisteredNode", "RemovingNode"}));
  EXPECT_EQ(recorded("RemovingNode"),
            std::vector<std::string>{
                "Node /n1 Normal: Node n1 event: Removing Node n1 from Controller"});
  EXPECT_EQ(events.find("RemovingNode")->involvedObject["uid"], uid);
  pass();
  EXPECT_EQ(events.events().size(), 2u);
}

}  // namespace
}  // namespace minik8s::controllers
