// Registered subresources (ApiServer::registerSubresource): the built-in ones route as before, a
// room can serve one of its own, and a declared subresource nobody serves answers 503.
#include <gtest/gtest.h>

#include "client/rest_client.h"
#include "in_process_api_server.h"

namespace minik8s::apiserver {
namespace {

class SubresourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().ok());
    rest_ = std::make_unique<client::RestClient>(server_.url());
    json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                {"spec", {{"ports", {{{"port", 80}}}}}}};
    ASSERT_TRUE(rest_->request("POST", "/api/v1/namespaces/default/services", svc.dump()).ok());
  }
  void TearDown() override { server_.stop(); }

  testing::InProcessApiServer server_;
  std::unique_ptr<client::RestClient> rest_;
};

TEST_F(SubresourcesTest, ARoomServesASubresourceOfItsOwn) {
  const std::string path = "/api/v1/namespaces/default/services/web/proxy";
  // Declared in the scheme, served by nobody yet.
  auto before = rest_->request("GET", path, "");
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), 503);
  EXPECT_NE(before.status().message().find("services/proxy subresource is not available"),
            std::string::npos);

  int calls = 0;
  server_.api().registerSubresource(
      "", "services", "proxy", {"get"},
      [&calls](const http::Request&, http::ResponseWriter& w, const RequestInfo& ri,
               const auth::UserInfo&) {
        ++calls;
        w.send(http::Response::json(200, {{"proxiedTo", ri.name}, {"verb", ri.verb}}));
      });
  auto served = rest_->request("GET", path, "");
  ASSERT_TRUE(served.ok()) << served.status().message();
  EXPECT_EQ((*served)["proxiedTo"], "web");
  EXPECT_EQ(calls, 1);

  // Another verb than the registered ones is not served; an undeclared subresource is 404.
  auto post = rest_->request("POST", path, "{}");
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.status().code(), 503);
  auto undeclared = rest_->request("GET", "/api/v1/namespaces/default/services/web/nothing", "");
  ASSERT_FALSE(undeclared.ok());
  EXPECT_EQ(undeclared.status().code(), 404);
  EXPECT_EQ(calls, 1);
}

TEST_F(SubresourcesTest, BuiltInSubresourcesRouteAsRegistered) {
  // status: generic get/update/patch of every resource that declares it.
  auto status = rest_->request("GET", "/api/v1/namespaces/default/services/web/status", "");
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ((*status)["metadata"]["name"], "web");
  auto deleteStatus =
      rest_->request("DELETE", "/api/v1/namespaces/default/services/web/status", "");
  ASSERT_FALSE(deleteStatus.ok());
  EXPECT_EQ(deleteStatus.status().code(), 405);

  // pods/binding is create-only: a GET is not served.
  auto binding = rest_->request("GET", "/api/v1/namespaces/default/pods/p/binding", "");
  ASSERT_FALSE(binding.ok());
  EXPECT_EQ(binding.status().code(), 503);

  // A later registration replaces the built-in one.
  server_.api().registerSubresource(
      "*", "*", "status", {"get"},
      [](const http::Request&, http::ResponseWriter& w, const RequestInfo&, const auth::UserInfo&) {
        w.send(http::Response::json(200, {{"replaced", true}}));
      });
  auto replaced = rest_->request("GET", "/api/v1/namespaces/default/services/web/status", "");
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ((*replaced)["replaced"], true);
}

// pods/binding sets the node and the PodScheduled condition in one write (one watch event, as
// upstream), keeps the rest of the pod, and refuses a pod that already has a node.
TEST_F(SubresourcesTest, BindingSetsTheNodeAndItsConditionInOneWrite) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", {{"app", "a"}}}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  auto created = rest_->request("POST", "/api/v1/namespaces/default/pods", pod.dump());
  ASSERT_TRUE(created.ok()) << created.status().message();
  const std::string before = (*created)["metadata"]["resourceVersion"];
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "p"}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "node-1"}}}};
  const std::string path = "/api/v1/namespaces/default/pods/p/binding";
  auto bound = rest_->request("POST", path, binding.dump());
  ASSERT_TRUE(bound.ok()) << bound.status().message();

  auto got = rest_->request("GET", "/api/v1/namespaces/default/pods/p", "");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["spec"]["nodeName"], "node-1");
  EXPECT_EQ(std::stoll((*got)["metadata"]["resourceVersion"].get<std::string>()),
            std::stoll(before) + 1);
  EXPECT_EQ((*got)["metadata"]["labels"]["app"], "a");
  EXPECT_EQ((*got)["spec"]["containers"][0]["image"], "busybox");
  EXPECT_EQ((*got)["status"]["phase"], "Pending");
  int scheduled = 0;
  for (const auto& c : (*got)["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") {
      ++scheduled;
      EXPECT_EQ(c["status"], "True");
    }
  }
  EXPECT_EQ(scheduled, 1);

  auto again = rest_->request("POST", path, binding.dump());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), 409);
  EXPECT_NE(again.status().message().find("already assigned to node \"node-1\""), std::string::npos)
      << again.status().message();
}

}  // namespace
}  // namespace minik8s::apiserver
