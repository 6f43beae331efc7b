// The controllers end to end against a real in-process API server on a temp SQLite file:
// ReplicaSet replicas/adoption/status, a Deployment rollout and the garbage collector (also of a
// deleted Node's CSINode).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "client/shared_informers.h"
#include "common/http.h"
#include "controllers/common/controller_utils.h"
#include "controllers/manager/controller_manager.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "storage/store.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class ControllersFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    manager = std::make_unique<ControllerManager>(*rest, ControllerManager::Options{});
    ASSERT_TRUE(manager->start().ok());
  }
  void TearDown() override {
    manager->stop();
    apiServer.stop();
  }

  static json podTemplate(const std::string& app, const std::string& image) {
    return {{"metadata", {{"labels", {{"app", app}}}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}};
  }
  json replicaSet(const std::string& name, int replicas) {
    return {{"apiVersion", "apps/v1"},
            {"kind", "ReplicaSet"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"replicas", replicas},
              {"selector", {{"matchLabels", {{"app", name}}}}},
              {"template", podTemplate(name, "busybox")}}}};
  }
  std::vector<json> pods(const std::string& selector) {
    client::ListParams p;
    p.labelSelector = selector;
    auto l = rest->list(res::kPods, "default", p);
    if (!l.ok()) return {};
    return (*l)["items"].get<std::vector<json>>();
  }
  void markReady(const json& pod) {
    json st = {{"status",
                {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
    rest->patch(res::kPods, "default", pod["metadata"]["name"], st, "merge", "status");
  }
  template <typename F>
  bool eventually(F f, int tries = 250) {
    for (int i = 0; i < tries; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<ControllerManager> manager;
};

TEST_F(ControllersFixture, ReplicaSetKeepsReplicasAndReportsStatus) {
  auto rs = rest->create(res::kReplicaSets, "default", replicaSet("web", 3));
  ASSERT_TRUE(rs.ok()) << rs.status().toString();
  ASSERT_TRUE(eventually([&] { return pods("app=web").size() == 3; }));
  std::this_thread::sleep_for(200ms);
  auto all = pods("app=web");
  ASSERT_EQ(all.size(), 3u);  // expectations: never over-created
  for (const auto& p : all) {
    const std::string name = p["metadata"]["name"];
    EXPECT_EQ(name.rfind("web-", 0), 0u);
    EXPECT_EQ(name.size(), 9u);
    auto ref = controllerRef(p);
    ASSERT_TRUE(ref);
    EXPECT_EQ((*ref)["uid"], (*rs)["metadata"]["uid"]);
  }
  // A deleted pod is replaced.
  ASSERT_TRUE(rest->remove(res::kPods, "default", all[0]["metadata"]["name"]).ok());
  ASSERT_TRUE(eventually([&] {
    auto now = pods("app=web");
    return now.size() == 3 && std::none_of(now.begin(), now.end(), [&](const json& p) {
             return p["metadata"]["name"] == all[0]["metadata"]["name"];
           });
  }));
  all = pods("app=web");
  markReady(all[1]);
  ASSERT_TRUE(eventually([&] {
    auto cur = rest->get(res::kReplicaSets, "default", "web");
    const json st = (*cur)["status"];
    return st.value("replicas", 0) == 3 && st.value("readyReplicas", 0) == 1 &&
           st.value("availableReplicas", 0) == 1 && st.value("fullyLabeledReplicas", 0) == 3 &&
           st.value("observedGeneration", 0) == 1;
  }));
  // Scale down to 1: the ready pod is the one kept.
  ASSERT_TRUE(rest->patch(res::kReplicaSets, "default", "web", {{"spec", {{"replicas", 1}}}}).ok());
  ASSERT_TRUE(eventually([&] { return pods("app=web").size() == 1; }));
  EXPECT_EQ(pods("app=web")[0]["metadata"]["name"], all[1]["metadata"]["name"]);
}

TEST_F(ControllersFixture, ReplicaSetAdoptsMatchingOrphans) {
  // The controllers start after both objects exist, so their first list holds both: with them
  // running, the ReplicaSet's event could overtake the pod's (two watches) and the controller
  // would create two pods, adopt the orphan late and delete one of the three, maybe the orphan.
  manager->stop();
  json orphan = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "stray"}, {"labels", {{"app", "adopt"}}}}},
                 {"spec", podTemplate("adopt", "busybox")["spec"]}};
  ASSERT_TRUE(rest->create(res::kPods, "default", orphan).ok());
  ASSERT_TRUE(rest->create(res::kReplicaSets, "default", replicaSet("adopt", 2)).ok());
  manager = std::make_unique<ControllerManager>(*rest, ControllerManager::Options{});
  ASSERT_TRUE(manager->start().ok());
  ASSERT_TRUE(eventually([&] {
    auto stray = rest->get(res::kPods, "default", "stray");
    return stray.ok() && controllerRef(*stray).has_value() && pods("app=adopt").size() == 2;
  }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(pods("app=adopt").size(), 2u);
}

TEST_F(ControllersFixture, DeploymentRollsOutAndGarbageCollectorCleansUp) {
  json d = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "app"}}},
      {"spec",
       {{"replicas", 2},
        {"selector", {{"matchLabels", {{"app", "app"}}}}},
        {"strategy",
         {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}}},
        {"template", podTemplate("app", "nginx:1")}}}};
  ASSERT_TRUE(rest->create(res::kDeployments, "default", d).ok());
  ASSERT_TRUE(eventually([&] { return pods("app=app").size() == 2; }));
  auto sets = rest->list(res::kReplicaSets, "default");
  ASSERT_EQ((*sets)["items"].size(), 1u);
  json rs1 = (*sets)["items"][0];
  const std::string hash = rs1["metadata"]["labels"][kPodTemplateHashLabel];
  EXPECT_EQ(rs1["metadata"]["name"], "app-" + hash);
  EXPECT_EQ(rs1["spec"]["selector"]["matchLabels"][kPodTemplateHashLabel], hash);
  EXPECT_EQ(rs1["metadata"]["annotations"][kRevisionAnnotation], "1");
  for (const auto& p : pods("app=app")) markReady(p);
  ASSERT_TRUE(eventually([&] {
    auto cur = rest->get(res::kDeployments, "default", "app");
    const json st = (*cur)["status"];
    bool done = false;
    for (const auto& c : st.value("conditions", json::array())) {
      if (c["type"] == "Progressing" && c["reason"] == "NewReplicaSetAvailable") done = true;
    }
    return done && st.value("availableReplicas", 0) == 2 && st.value("updatedReplicas", 0) == 2 &&
           (*cur)["metadata"]["annotations"][kRevisionAnnotation] == "1";
  }));

  // New image: a second ReplicaSet, surge of one, old pods go only as new ones become ready.
  ASSERT_TRUE(rest->patch(res::kDeployments, "default", "app",
                          {{"spec", {{"template", podTemplate("app", "nginx:2")}}}})
                  .ok());
  for (int round = 0; round < 100; ++round) {
    auto cur = rest->get(res::kDeployments, "default", "app");
    const json st = (*cur)["status"];
    if (st.value("updatedReplicas", 0) == 2 && st.value("availableReplicas", 0) == 2 &&
        st.value("replicas", 0) == 2 && st.value("observedGeneration", 0) == 2) {
      break;
    }
    int ready = 0;
    auto now = pods("app=app");
    EXPECT_LE(now.size(), 3u);  // replicas + maxSurge
    for (const auto& p : now) {
      if (isPodReady(p)) ++ready;
    }
    EXPECT_GE(ready, 2);  // maxUnavailable 0
    for (const auto& p : now) {
      if (!isPodReady(p)) markReady(p);
    }
    std::this_thread::sleep_for(50ms);
  }
  sets = rest->list(res::kReplicaSets, "default");
  ASSERT_EQ((*sets)["items"].size(), 2u);
  for (const auto& rs : (*sets)["items"]) {
    if (rs["metadata"]["name"] == rs1["metadata"]["name"]) {
      EXPECT_EQ(rs["spec"]["replicas"], 0);
    } else {
      EXPECT_EQ(rs["spec"]["replicas"], 2);
      EXPECT_EQ(rs["metadata"]["annotations"][kRevisionAnnotation], "2");
    }
  }
  EXPECT_TRUE(eventually([&] {
    auto cur = rest->get(res::kDeployments, "default", "app");
    return (*cur)["metadata"]["annotations"][kRevisionAnnotation] == "2";
  }));

  // Background deletion of the Deployment removes its ReplicaSets and their pods.
  ASSERT_TRUE(rest->remove(res::kDeployments, "default", "app").ok());
  EXPECT_TRUE(eventually([&] {
    auto l = rest->list(res::kReplicaSets, "default");
    return l.ok() && (*l)["items"].empty() && pods("app=app").empty();
  }));
}

TEST_F(ControllersFixture, GarbageCollectorOrphanAndForegroundFinalizers) {
  // The API server turns propagationPolicy into these finalizers; set them directly here.
  json orphanRs = replicaSet("keep", 1);
  orphanRs["metadata"]["finalizers"] = {"orphan"};
  ASSERT_TRUE(rest->create(res::kReplicaSets, "default", orphanRs).ok());
  json fgRs = replicaSet("fg", 2);
  fgRs["metadata"]["finalizers"] = {"foregroundDeletion"};
  ASSERT_TRUE(rest->create(res::kReplicaSets, "default", fgRs).ok());
  ASSERT_TRUE(
      eventually([&] { return pods("app=keep").size() == 1 && pods("app=fg").size() == 2; }));

  ASSERT_TRUE(rest->remove(res::kReplicaSets, "default", "keep").ok());
  ASSERT_TRUE(eventually([&] {
    auto rs = rest->get(res::kReplicaSets, "default", "keep");
    auto left = pods("app=keep");
    return rs.status().code() == 404 && left.size() == 1 &&
           left[0]["metadata"].value("ownerReferences", json::array()).empty();
  }));

  ASSERT_TRUE(rest->remove(res::kReplicaSets, "default", "fg").ok());
  ASSERT_TRUE(eventually([&] {
    auto rs = rest->get(res::kReplicaSets, "default", "fg");
    return rs.status().code() == 404 && pods("app=fg").empty();
  }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(pods("app=keep").size(), 1u);  // the orphan stays
}

TEST_F(ControllersFixture, GarbageCollectorRemovesTheCsiNodeOfADeletedNode) {
  const client::Resource csiNodes{"storage.k8s.io", "v1", "csinodes", false};
  auto node = rest->create(
      res::kNodes, "", {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}});
  ASSERT_TRUE(node.ok()) << node.status().toString();
  json csiNode = {{"apiVersion", "storage.k8s.io/v1"},
                  {"kind", "CSINode"},
                  {"metadata",
                   {{"name", "n1"},
                    {"ownerReferences",
                     {{{"apiVersion", "v1"},
                       {"kind", "Node"},
                       {"name", "n1"},
                       {"uid", (*node)["metadata"]["uid"]}}}}}},
                  {"spec", {{"drivers", json::array()}}}};
  ASSERT_TRUE(rest->create(csiNodes, "", csiNode).ok());
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(rest->get(csiNodes, "", "n1").ok());  // its node is there
  ASSERT_TRUE(rest->remove(res::kNodes, "", "n1").ok());
  EXPECT_TRUE(eventually([&] { return rest->get(csiNodes, "", "n1").status().code() == 404; }));
}

TEST_F(ControllersFixture, RecreateScalesOldToZeroBeforeCreatingNew) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "rc"}}},
            {"spec",
             {{"replicas", 2},
              {"selector", {{"matchLabels", {{"app", "rc"}}}}},
              {"strategy", {{"type", "Recreate"}}},
              {"template", podTemplate("rc", "nginx:1")}}}};
  ASSERT_TRUE(rest->create(res::kDeployments, "default", d).ok());
  ASSERT_TRUE(eventually([&] { return pods("app=rc").size() == 2; }));
  ASSERT_TRUE(rest->patch(res::kDeployments, "default", "rc",
                          {{"spec", {{"template", podTemplate("rc", "nginx:2")}}}})
                  .ok());
  bool mixed = false;
  ASSERT_TRUE(eventually([&] {
    auto now = pods("app=rc");
    std::set<std::string> images;
    for (const auto& p : now) images.insert(p["spec"]["containers"][0]["image"]);
    if (images.size() > 1) mixed = true;
    return now.size() == 2 && images == std::set<std::string>{"nginx:2"};
  }));
  EXPECT_FALSE(mixed);  // never old and new pods at once
}

TEST(ControllerSelectionTest, KubeControllerManagerSyntax) {
  auto all = selectControllers({"*"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), knownControllers().size());
  EXPECT_EQ(all->front(), "endpoint");
  auto some = selectControllers({"*", "-garbagecollector", "-endpoint"});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->size(), knownControllers().size() - 2);
  EXPECT_EQ(std::count(some->begin(), some->end(), "garbagecollector"), 0);
  auto only = selectControllers({"replicaset", "deployment"});
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(*only, (std::vector<std::string>{"replicaset", "deployment"}));
  auto unknown = selectControllers({"*", "-replicationcontroller"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown controller \"replicationcontroller\""),
            std::string::npos);
}

TEST(ControllerSelectionTest, OnlyTheSelectedControllersRun) {
  testing::InProcessApiServer apiServer;
  ASSERT_TRUE(apiServer.start().ok());
  client::RestClient rest(apiServer.url());
  ControllerManager::Options options;
  options.controllers = {"*", "-deployment"};
  ControllerManager manager(rest, options);
  ASSERT_TRUE(manager.start().ok());
  auto running = manager.running();
  EXPECT_EQ(std::count(running.begin(), running.end(), "deployment"), 0);
  EXPECT_EQ(std::count(running.begin(), running.end(), "replicaset"), 1);
  // No root CA and no signing CA given: those two are skipped.
  EXPECT_EQ(std::count(running.begin(), running.end(), "csrsigning"), 0);
  // A Deployment gets no ReplicaSet while its controller is off.
  json d = {{"metadata", {{"name", "off"}}},
            {"spec",
             {{"replicas", 1},
              {"selector", {{"matchLabels", {{"app", "off"}}}}},
              {"template",
               {{"metadata", {{"labels", {{"app", "off"}}}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}}}}}};
  ASSERT_TRUE(rest.create(res::kDeployments, "default", d).ok());
  std::this_thread::sleep_for(300ms);
  auto rs = rest.list(res::kReplicaSets, "default");
  ASSERT_TRUE(rs.ok());
  EXPECT_TRUE((*rs)["items"].empty());
  manager.stop();
  apiServer.stop();
  ControllerManager::Options bad;
  bad.controllers = {"nope"};
  ControllerManager broken(rest, bad);
  EXPECT_EQ(broken.start().code(), 400);
}

// As in `minik8s server`: the manager reads informers shared with other components (here a
// pods handle standing for the scheduler). A manager that stops (its Lease lost) reacts to
// nothing more while the shared watch goes on; the next one starts from the shared caches.
TEST(ControllerManagerSharedInformersTest, AStoppedManagerHandsTheSharedCachesOn) {
  testing::InProcessApiServer apiServer;
  ASSERT_TRUE(apiServer.start().ok());
  client::RestClient rest(apiServer.url());
  client::SharedInformers informers(rest);
  auto schedulerPods = informers.informer(res::kPods);
  schedulerPods->start();
  ControllerManager::Options options;
  options.controllers = {"replicaset"};
  auto replicaSet = [](const std::string& name, int replicas) {
    return json{{"metadata", {{"name", name}}},
                {"spec",
                 {{"replicas", replicas},
                  {"selector", {{"matchLabels", {{"app", name}}}}},
                  {"template",
                   {{"metadata", {{"labels", {{"app", name}}}}},
                    {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}}}}}};
  };
  auto podsOf = [&](const std::string& app) {
    client::ListParams p;
    p.labelSelector = "app=" + app;
    auto l = rest.list(res::kPods, "default", p);
    return l.ok() ? (*l)["items"].size() : 0u;
  };
  auto leader = std::make_unique<ControllerManager>(rest, options, &informers);
  ASSERT_TRUE(leader->start().ok());
  ASSERT_TRUE(rest.create(res::kReplicaSets, "default", replicaSet("web", 2)).ok());
  ASSERT_TRUE(testing::eventually([&] { return podsOf("web") == 2; }));
  leader->stop();
  leader.reset();
  EXPECT_EQ(informers.size(), 1u);  // the pods watch lives on for its other reader

  ASSERT_TRUE(rest.create(res::kReplicaSets, "default", replicaSet("later", 1)).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(podsOf("later"), 0u);  // nobody reconciles
  EXPECT_EQ(schedulerPods->list().size(), 2u);

  auto next = std::make_unique<ControllerManager>(rest, options, &informers);
  ASSERT_TRUE(next->start().ok());
  ASSERT_TRUE(testing::eventually([&] { return podsOf("later") == 1; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(podsOf("web"), 2u);  // the replayed cache held its pods: none created twice
  next->stop();
  next.reset();
  schedulerPods.reset();
  EXPECT_EQ(informers.size(), 0u);
  apiServer.stop();
}

}  // namespace
}  // namespace minik8s::controllers
