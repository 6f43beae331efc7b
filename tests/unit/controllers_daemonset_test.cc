// The DaemonSet controller against a real in-process API server (no kubelet: tests mark pods
// Ready), one sync at a time: one pod per eligible node (nodeSelector, taints, the node-name
// affinity and daemon tolerations on each pod), nodes coming, going and changing, failed pods
// replaced, ControllerRevisions, RollingUpdate within maxUnavailable and with maxSurge, OnDelete,
// status, and 422s for bad specs.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "controllers/daemonset/daemonset_controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "fake_clock.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

TEST(DaemonPodPlacementTest, SelectorAffinityAndTaints) {
  json node = {{"metadata", {{"name", "n1"}, {"labels", {{"disk", "ssd"}}}}},
               {"spec", {{"taints", json::array()}}}};
  json templ = {{"spec", {{"nodeSelector", {{"disk", "ssd"}}}}}};
  EXPECT_TRUE(daemonPodShouldRun(templ, node));
  templ["spec"]["nodeSelector"]["disk"] = "hdd";
  EXPECT_FALSE(daemonPodShouldRun(templ, node));
  templ = {{"spec", json::object()}};
  node["spec"]["taints"] = {{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}};
  EXPECT_FALSE(daemonPodShouldRun(templ, node));
  EXPECT_TRUE(daemonPodShouldRun(templ, node, /*newPod=*/false));  // an existing pod stays
  templ["spec"]["tolerations"] = {{{"key", "dedicated"}, {"operator", "Exists"}}};
  EXPECT_TRUE(daemonPodShouldRun(templ, node));
  // Daemon pods tolerate what a node under pressure or cordoned carries.
  node["spec"]["taints"] = {{{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}},
                            {{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoExecute"}}};
  EXPECT_TRUE(daemonPodShouldRun({{"spec", json::object()}}, node));
  node["spec"]["taints"] = {{{"key", "evict-me"}, {"effect", "NoExecute"}}};
  EXPECT_FALSE(daemonPodShouldRun({{"spec", json::object()}}, node, false));
}

TEST(DaemonPodPlacementTest, NodeOfAPod) {
  json pod = {
      {"spec",
       {{"affinity",
         {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms",
               {{{"matchFields",
                  {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"n2"}}}}}}}}}}}}}}}}};
  EXPECT_EQ(daemonPodNode(pod), "n2");
  pod["spec"]["nodeName"] = "n3";
  EXPECT_EQ(daemonPodNode(pod), "n3");
  EXPECT_EQ(daemonPodNode(json{{"spec", json::object()}}), "");
}

class DaemonSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    daemonSets = std::make_unique<client::Informer>(*rest, kDaemonSets);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    nodes = std::make_unique<client::Informer>(*rest, res::kNodes);
    revisions = std::make_unique<client::Informer>(*rest, kControllerRevisions);
    addNamespaceIndex(*pods);
    addNamespaceIndex(*revisions);
    DaemonSetControllerOptions opts;
    opts.clock = &clock;
    opts.events = &events;
    controller =
        std::make_unique<DaemonSetController>(*rest, *daemonSets, *pods, *nodes, *revisions, opts);
    for (auto* i : informers()) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
  }
  void TearDown() override {
    for (auto* i : informers()) i->stop();  // their handlers call the controller
    controller.reset();
    apiServer.stop();
  }
  std::vector<client::Informer*> informers() {
    return {daemonSets.get(), pods.get(), nodes.get(), revisions.get()};
  }

  void createNode(const std::string& name, json labels = json::object(),
                  json taints = json::array()) {
    json n = {{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata", {{"name", name}, {"labels", labels}}},
              {"spec", {{"taints", taints}}}};
    ASSERT_TRUE(rest->create(res::kNodes, "", n).ok());
  }
  void createDaemonSet(const std::string& name, json strategy = json(),
                       json podSpecExtra = json::object()) {
    json podSpec = {{"containers", {{{"name", "c"}, {"image", "busybox:1"}}}}};
    podSpec.update(podSpecExtra);
    json ds = {{"apiVersion", "apps/v1"},
               {"kind", "DaemonSet"},
               {"metadata", {{"name", name}}},
               {"spec",
                {{"selector", {{"matchLabels", {{"app", name}}}}},
                 {"template", {{"metadata", {{"labels", {{"app", name}}}}}, {"spec", podSpec}}}}}};
    if (!strategy.is_null()) ds["spec"]["updateStrategy"] = strategy;
    auto r = rest->create(kDaemonSets, "default", ds);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  void setImage(const std::string& name, const std::string& image) {
    auto ds = rest->get(kDaemonSets, "default", name);
    ASSERT_TRUE(ds.ok());
    (*ds)["spec"]["template"]["spec"]["containers"][0]["image"] = image;
    ASSERT_TRUE(rest->update(kDaemonSets, *ds).ok());
  }
  // "node=image" of every live pod, sorted.
  std::vector<std::string> placement(const std::string& app) {
    std::vector<std::string> out;
    auto l = rest->list(res::kPods, "default");
    if (!l.ok()) return out;
    for (const auto& p : (*l)["items"]) {
      if (p["metadata"]["labels"].value("app", "") != app || isTerminating(p)) continue;
      out.push_back(daemonPodNode(p) + "=" +
                    p["spec"]["containers"][0]["image"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<json> livePods(const std::string& app) {
    std::vector<json> out;
    auto l = rest->list(res::kPods, "default");
    for (const auto& p : (*l)["items"]) {
      if (p["metadata"]["labels"].value("app", "") == app && !isTerminating(p)) out.push_back(p);
    }
    return out;
  }
  void markReady(const std::string& app) {
    for (const auto& p : livePods(app)) {
      if (isPodReady(p)) continue;
      json st = {{"status",
                  {{"phase", "Running"},
                   {"conditions",
                    {{{"type", "Ready"},
                      {"status", "True"},
                      {"lastTransitionTime", "2020-01-01T00:00:00Z"}}}}}}};
      ASSERT_TRUE(
          rest->patch(res::kPods, "default", p["metadata"]["name"], st, "merge", "status").ok());
    }
  }
  json getDs(const std::string& name) { return *rest->get(kDaemonSets, "default", name); }

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
    ASSERT_TRUE(eventually([&] {
      return same(*daemonSets, kDaemonSets) && same(*pods, res::kPods) &&
             same(*nodes, res::kNodes) && same(*revisions, kControllerRevisions);
    }));
    Status s = controller->sync("default/" + name);
    ASSERT_TRUE(s.ok()) << s.toString();
  }
  std::vector<json> revisionsOf(const std::string& name) {
    std::vector<json> out;
    auto l = rest->list(kControllerRevisions, "default");
    for (const auto& r : (*l)["items"]) {
      if (r["metadata"]["name"].get<std::string>().rfind(name + "-", 0) == 0) out.push_back(r);
    }
    std::sort(out.begin(), out.end(),
              [](const json& a, const json& b) { return a["revision"] < b["revision"]; });
    return out;
  }

  testing::InProcessApiServer apiServer;
  testing::FakeClock clock;
  client::FakeEventRecorder events;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> daemonSets, pods, nodes, revisions;
  std::unique_ptr<DaemonSetController> controller;
};

TEST_F(DaemonSetControllerTest, OnePodPerEligibleNode) {
  createNode("n1", {{"disk", "ssd"}});
  createNode("n2", {{"disk", "ssd"}});
  createNode("n3", {{"disk", "hdd"}});
  createNode("n4", {{"disk", "ssd"}}, {{{"key", "dedicated"}, {"effect", "NoSchedule"}}});
  createDaemonSet("agent", json(), {{"nodeSelector", {{"disk", "ssd"}}}});
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:1", "n2=busybox:1"}));
  const json pod = livePods("agent")[0];
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
  EXPECT_FALSE(pod["metadata"]["labels"].value(kControllerRevisionHashLabel, "").empty());
  bool toleratesUnschedulable = false;
  for (const auto& t : pod["spec"]["tolerations"]) {
    toleratesUnschedulable |= t.value("key", "") == "node.kubernetes.io/unschedulable";
  }
  EXPECT_TRUE(toleratesUnschedulable) << pod["spec"].dump();
  auto revs = revisionsOf("agent");
  ASSERT_EQ(revs.size(), 1u);
  EXPECT_EQ(revs[0]["revision"], 1);
  EXPECT_EQ(revs[0]["data"]["spec"]["template"]["$patch"], "replace");
  EXPECT_EQ(revs[0]["metadata"]["labels"]["app"], "agent");  // kubectl finds them by selector

  markReady("agent");
  pass("agent");
  json st = getDs("agent")["status"];
  EXPECT_EQ(st["desiredNumberScheduled"], 2);
  EXPECT_EQ(st["currentNumberScheduled"], 2);
  EXPECT_EQ(st["numberReady"], 2);
  EXPECT_EQ(st["numberAvailable"], 2);
  EXPECT_EQ(st["updatedNumberScheduled"], 2);
  EXPECT_EQ(st["numberMisscheduled"], 0);
  EXPECT_FALSE(st.contains("numberUnavailable"));
  EXPECT_EQ(events.reasons(), (std::vector<std::string>{"SuccessfulCreate", "SuccessfulCreate"}));
}

TEST_F(DaemonSetControllerTest, NodesComeGoAndChange) {
  createNode("n1");
  createDaemonSet("agent");
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:1"}));
  createNode("n2");
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:1", "n2=busybox:1"}));
  ASSERT_TRUE(rest->remove(res::kNodes, "", "n1").ok());
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n2=busybox:1"}));
  // A NoExecute taint it does not tolerate takes the pod off n2.
  auto n2 = *rest->get(res::kNodes, "", "n2");
  n2["spec"]["taints"] = {{{"key", "maintenance"}, {"effect", "NoExecute"}}};
  ASSERT_TRUE(rest->update(res::kNodes, n2).ok());
  pass("agent");
  EXPECT_TRUE(placement("agent").empty());
}

TEST_F(DaemonSetControllerTest, AFailedPodIsReplaced) {
  createNode("n1");
  createDaemonSet("agent");
  pass("agent");
  auto pod = livePods("agent")[0];
  ASSERT_TRUE(rest->patch(res::kPods, "default", pod["metadata"]["name"],
                          {{"status", {{"phase", "Failed"}}}}, "merge", "status")
                  .ok());
  pass("agent");  // deletes the failed pod
  EXPECT_TRUE(events.find("FailedDaemonPod"));
  pass("agent");  // creates its replacement
  auto now = livePods("agent");
  ASSERT_EQ(now.size(), 1u);
  EXPECT_NE(now[0]["metadata"]["uid"], pod["metadata"]["uid"]);
}

TEST_F(DaemonSetControllerTest, RollingUpdateReplacesOneNodeAtATime) {
  for (const char* n : {"n1", "n2", "n3"}) createNode(n);
  createDaemonSet("agent");
  pass("agent");
  markReady("agent");
  pass("agent");
  setImage("agent", "busybox:2");
  pass("agent");
  // maxUnavailable 1: one old pod goes, the others keep serving.
  EXPECT_EQ(placement("agent").size(), 2u);
  EXPECT_EQ(revisionsOf("agent").size(), 2u);
  for (int round = 0; round < 6; ++round) {
    pass("agent");  // the node without a pod gets the new one
    markReady("agent");
    pass("agent");  // the next old pod goes
    const auto p = placement("agent");
    EXPECT_GE(p.size(), 2u) << "more than maxUnavailable down in round " << round;
  }
  pass("agent");
  markReady("agent");
  pass("agent");
  EXPECT_EQ(placement("agent"),
            (std::vector<std::string>{"n1=busybox:2", "n2=busybox:2", "n3=busybox:2"}));
  json st = getDs("agent")["status"];
  EXPECT_EQ(st["updatedNumberScheduled"], 3);
  EXPECT_EQ(st["numberAvailable"], 3);
  EXPECT_EQ(st["observedGeneration"], getDs("agent")["metadata"]["generation"]);
}

TEST_F(DaemonSetControllerTest, MaxSurgeStartsTheNewPodBesideTheOld) {
  createNode("n1");
  createDaemonSet("agent", {{"type", "RollingUpdate"},
                            {"rollingUpdate", {{"maxUnavailable", 0}, {"maxSurge", 1}}}});
  pass("agent");
  markReady("agent");
  pass("agent");
  setImage("agent", "busybox:2");
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:1", "n1=busybox:2"}));
  markReady("agent");
  pass("agent");  // the new one is available: the old one goes
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:2"}));
}

TEST_F(DaemonSetControllerTest, OnDeleteWaitsForSomeoneToDeleteTheOldPod) {
  createNode("n1");
  createDaemonSet("agent", {{"type", "OnDelete"}});
  pass("agent");
  setImage("agent", "busybox:2");
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:1"}));
  EXPECT_EQ(getDs("agent")["status"]["updatedNumberScheduled"], 0);
  ASSERT_TRUE(rest->remove(res::kPods, "default", livePods("agent")[0]["metadata"]["name"]).ok());
  pass("agent");
  EXPECT_EQ(placement("agent"), (std::vector<std::string>{"n1=busybox:2"}));
}

TEST_F(DaemonSetControllerTest, BadSpecsAreRefused) {
  json ds = json::parse(R"({"apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "bad"},
    "spec": {"selector": {"matchLabels": {"app": "x"}},
             "updateStrategy": {"type": "Sometimes"},
             "template": {"metadata": {"labels": {"app": "y"}},
                          "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})");
  auto r = rest->create(kDaemonSets, "default", ds);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 422);
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("spec.template.metadata.labels: Invalid value"), std::string::npos) << msg;
  EXPECT_NE(msg.find("spec.updateStrategy.type: Unsupported value: \"Sometimes\""),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace minik8s::controllers
