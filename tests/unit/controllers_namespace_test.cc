// NamespaceController against an in-process API server: a deleted namespace's content goes (pods
// on a missing node forced), it waits for objects held by finalizers, then finalizes the
// namespace so the server deletes it; discovery lists only what can be listed and deleted.
#include <gtest/gtest.h>

#include "controllers/namespace/namespace_controller.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;
using testing::eventually;

TEST(NamespaceDiscovery, OnlyNamespacedListableDeletableResources) {
  json list = {{"resources",
                {{{"name", "pods"}, {"namespaced", true}, {"verbs", {"list", "delete", "get"}}},
                 {{"name", "pods/log"}, {"namespaced", true}, {"verbs", {"get"}}},
                 {{"name", "pods/status"}, {"namespaced", true}, {"verbs", {"list", "delete"}}},
                 {{"name", "nodes"}, {"namespaced", false}, {"verbs", {"list", "delete"}}},
                 {{"name", "bindings"}, {"namespaced", true}, {"verbs", {"create"}}},
                 {{"name", "events"}, {"namespaced", true}, {"verbs", {"list", "delete"}}}}}};
  auto got = deletableNamespacedResources(list, "", "v1");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].plural, "pods");
  EXPECT_EQ(got[1].plural, "events");
  EXPECT_TRUE(deletableNamespacedResources(json::object(), "apps", "v1").empty());
}

class NamespaceControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    namespaces = std::make_unique<client::Informer>(*rest, res::kNamespaces);
    NamespaceControllerOptions o;
    o.recheck = 50ms;
    controller = std::make_unique<NamespaceController>(*rest, *namespaces, o);
    namespaces->start();
    ASSERT_TRUE(namespaces->waitForSync(5s));
    controller->start();
  }
  void TearDown() override {
    controller->stop();
    namespaces->stop();
    api.stop();
  }
  void create(const client::Resource& r, const std::string& ns, const json& obj) {
    auto created = rest->create(r, ns, obj);
    ASSERT_TRUE(created.ok()) << created.status().toString();
  }
  bool gone(const client::Resource& r, const std::string& ns, const std::string& name) {
    auto got = rest->get(r, ns, name);
    return !got.ok() && got.status().code() == 404;
  }

  testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> namespaces;
  std::unique_ptr<NamespaceController> controller;
};

TEST_F(NamespaceControllerTest, EmptiesADeletedNamespaceThenFinalizesIt) {
  create(res::kNamespaces, "", {{"metadata", {{"name", "team"}}}});
  create(res::kConfigMaps, "team", {{"metadata", {{"name", "settings"}}}});
  create(res::kConfigMaps, "team",
         {{"metadata", {{"name", "held"}, {"finalizers", {"example.com/hold"}}}}});
  create(res::kSecrets, "team", {{"metadata", {{"name", "token"}}}});
  // Bound to a node that does not exist: nobody would confirm a graceful deletion.
  create(
      res::kPods, "team",
      {{"metadata", {{"name", "orphan"}}},
       {"spec", {{"nodeName", "ghost"}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}});
  create(res::kConfigMaps, "default", {{"metadata", {{"name", "untouched"}}}});

  ASSERT_TRUE(rest->remove(res::kNamespaces, "", "team").ok());
  ASSERT_TRUE(eventually([&] {
    return gone(res::kConfigMaps, "team", "settings") && gone(res::kSecrets, "team", "token") &&
           gone(res::kPods, "team", "orphan");
  }));
  // The held object is marked, not gone, and keeps the namespace.
  auto held = rest->get(res::kConfigMaps, "team", "held");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(held->contains("metadata") && (*held)["metadata"].contains("deletionTimestamp"));
  auto ns = rest->get(res::kNamespaces, "", "team");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)["status"]["phase"], "Terminating");
  EXPECT_EQ((*ns)["spec"]["finalizers"], json::array({"kubernetes"}));

  // Releasing it lets the controller finish: the namespace is finalized and deleted.
  json release = *held;
  release["metadata"]["finalizers"] = json::array();
  ASSERT_TRUE(rest->update(res::kConfigMaps, release).ok());
  EXPECT_TRUE(eventually([&] { return gone(res::kNamespaces, "", "team"); }));
  EXPECT_TRUE(rest->get(res::kConfigMaps, "default", "untouched").ok());
}

}  // namespace
}  // namespace minik8s::controllers
