// The Events the workload controllers write through the controller manager's recorders, as
// `kubectl describe rs/deploy` lists them: SuccessfulCreate / SuccessfulDelete from
// replicaset-controller, ScalingReplicaSet from deployment-controller.
#include <gtest/gtest.h>

#include <thread>

#include "controllers/manager/controller_manager.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class WorkloadEventsTest : public ::testing::Test {
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
  // Events about `kind`/`name` with this reason.
  std::vector<json> events(const std::string& kind, const std::string& name,
                           const std::string& reason) {
    std::vector<json> out;
    auto l = rest->list(res::kEvents, "default");
    if (!l.ok()) return out;
    for (const auto& e : (*l)["items"]) {
      if (e["involvedObject"]["kind"] == kind && e["involvedObject"]["name"] == name &&
          e["reason"] == reason) {
        out.push_back(e);
      }
    }
    return out;
  }
  template <typename F>
  bool eventually(F f) {
    for (int i = 0; i < 300; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  static json templ(const std::string& app) {
    return {{"metadata", {{"labels", {{"app", app}}}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<ControllerManager> manager;
};

TEST_F(WorkloadEventsTest, ReplicaSetCreatesAndDeletesPodsWithEvents) {
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web"}}},
             {"spec",
              {{"replicas", 2},
               {"selector", {{"matchLabels", {{"app", "web"}}}}},
               {"template", templ("web")}}}};
  ASSERT_TRUE(rest->create(res::kReplicaSets, "default", rs).ok());
  ASSERT_TRUE(
      eventually([&] { return events("ReplicaSet", "web", "SuccessfulCreate").size() == 2; }));
  json e = events("ReplicaSet", "web", "SuccessfulCreate")[0];
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["source"]["component"], "replicaset-controller");
  EXPECT_EQ(e["involvedObject"]["apiVersion"], "apps/v1");
  EXPECT_EQ(e["message"].get<std::string>().rfind("Created pod: web-", 0), 0u);
  ASSERT_TRUE(rest->patch(res::kReplicaSets, "default", "web", {{"spec", {{"replicas", 1}}}}).ok());
  ASSERT_TRUE(
      eventually([&] { return events("ReplicaSet", "web", "SuccessfulDelete").size() == 1; }));
  EXPECT_EQ(events("ReplicaSet", "web", "SuccessfulDelete")[0]["message"].get<std::string>().rfind(
                "Deleted pod: web-", 0),
            0u);
}

TEST_F(WorkloadEventsTest, FailedCreatesBecomeTheReplicaFailureCondition) {
  // A name so long that its pods' generated names (name, "-", 5 characters) are invalid: every
  // create is refused with 422, as a Pod Security or quota refusal would be.
  const std::string name(250, 'r');
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", name}}},
             {"spec",
              {{"replicas", 1},
               {"selector", {{"matchLabels", {{"app", "long"}}}}},
               {"template", templ("long")}}}};
  ASSERT_TRUE(rest->create(res::kReplicaSets, "default", rs).ok());
  json condition;
  ASSERT_TRUE(eventually([&] {
    auto got = rest->get(res::kReplicaSets, "default", name);
    if (!got.ok()) return false;
    for (const auto& c : got->value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "ReplicaFailure") condition = c;
    }
    return !condition.is_null();
  }));
  EXPECT_EQ(condition["status"], "True");
  EXPECT_EQ(condition["reason"], "FailedCreate");
  EXPECT_NE(condition["message"].get<std::string>().find("is invalid"), std::string::npos)
      << condition.dump();
  // Scaled to zero nothing fails any more: the condition goes.
  ASSERT_TRUE(rest->patch(res::kReplicaSets, "default", name, {{"spec", {{"replicas", 0}}}}).ok());
  EXPECT_TRUE(eventually([&] {
    auto got = rest->get(res::kReplicaSets, "default", name);
    return got.ok() && !got->contains("/status/conditions"_json_pointer);
  }));
}

TEST_F(WorkloadEventsTest, DeploymentScalesItsReplicaSetWithAnEvent) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "app"}}},
            {"spec",
             {{"replicas", 2},
              {"selector", {{"matchLabels", {{"app", "app"}}}}},
              {"template", templ("app")}}}};
  ASSERT_TRUE(rest->create(res::kDeployments, "default", d).ok());
  ASSERT_TRUE(eventually([&] {
    auto l = rest->list(res::kReplicaSets, "default");
    return l.ok() && (*l)["items"].size() == 1;
  }));
  ASSERT_TRUE(rest->patch(res::kDeployments, "default", "app", {{"spec", {{"replicas", 4}}}}).ok());
  std::vector<json> scaled;
  ASSERT_TRUE(eventually([&] {
    scaled = events("Deployment", "app", "ScalingReplicaSet");
    for (const auto& e : scaled) {
      const std::string m = e["message"];
      if (m.rfind("Scaled up replica set app-", 0) == 0 && m.ends_with(" from 2 to 4")) return true;
    }
    return false;
  }));
  EXPECT_EQ(scaled[0]["source"]["component"], "deployment-controller");
}

}  // namespace
}  // namespace minik8s::controllers
