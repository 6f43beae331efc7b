#include <gtest/gtest.h>

#include "in_process_api_server.h"
#include "kubelet/status_manager.h"

namespace minik8s::kubelet {
namespace {

json runningStatus() {
  return {{"phase", "Running"},
          {"podIP", "10.244.0.9"},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
}

class StatusManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    auto created =
        rest->create(client::resources::kPods, "default",
                     {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", "web"}}},
                      {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}});
    ASSERT_TRUE(created.ok()) << created.status().message();
    pod = *created;
  }
  void TearDown() override { apiServer.stop(); }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  json pod;
};

TEST_F(StatusManagerTest, WritesFromTheCallersCopy) {
  StatusManager statuses(*rest);
  ASSERT_TRUE(statuses.setPodStatus(pod, runningStatus()).ok());
  auto now = rest->get(client::resources::kPods, "default", "web");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["status"]["phase"], "Running");
  EXPECT_EQ((*now)["status"]["podIP"], "10.244.0.9");
}

// A copy older than the stored pod (someone else wrote meanwhile): the write is refused as a
// Conflict, the pod read again, and what the other writer set stays.
TEST_F(StatusManagerTest, AStaleCopyIsReadAgainAndOthersConditionsStay) {
  json other = pod;
  other["status"]["conditions"] = {{{"type", "example.com/gate"}, {"status", "True"}}};
  ASSERT_TRUE(rest->update(client::resources::kPods, other, "status").ok());

  StatusManager statuses(*rest);
  ASSERT_TRUE(statuses.setPodStatus(pod, runningStatus()).ok());
  auto now = rest->get(client::resources::kPods, "default", "web");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["status"]["phase"], "Running");
  std::set<std::string> types;
  for (const auto& c : (*now)["status"]["conditions"]) types.insert(c.value("type", ""));
  EXPECT_EQ(types, (std::set<std::string>{"Ready", "example.com/gate"}));
}

TEST_F(StatusManagerTest, APodReplacedUnderTheSameNameIsNotWritten) {
  ASSERT_TRUE(
      rest->remove(client::resources::kPods, "default", "web",
                   {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"gracePeriodSeconds", 0}})
          .ok());
  json again = pod;
  again["metadata"].erase("uid");
  again["metadata"].erase("resourceVersion");
  again["metadata"].erase("creationTimestamp");
  ASSERT_TRUE(rest->create(client::resources::kPods, "default", again).ok());

  StatusManager statuses(*rest);
  EXPECT_EQ(statuses.setPodStatus(pod, runningStatus()).code(), 404);
  auto now = rest->get(client::resources::kPods, "default", "web");
  ASSERT_TRUE(now.ok());
  EXPECT_NE(now->value("/status/phase"_json_pointer, std::string()), "Running");
}

}  // namespace
}  // namespace minik8s::kubelet
