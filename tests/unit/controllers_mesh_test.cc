// The mesh controller against a real in-process API server: a namespace labelled
// istio-injection=enabled gets the ClusterRoleBinding of the sidecars' read role for its own
// service accounts only; removing the label (or the namespace) removes it.
#include <gtest/gtest.h>

#include <thread>

#include "controllers/mesh/mesh_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;
const client::Resource kBindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};

class MeshControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    namespaces = std::make_unique<client::Informer>(*rest, res::kNamespaces);
    controller = std::make_unique<MeshController>(*rest, *namespaces);
    namespaces->start();
    ASSERT_TRUE(namespaces->waitForSync(5s));
  }
  void TearDown() override {
    namespaces->stop();
    controller.reset();
    apiServer.stop();
  }
  void waitForCache(const std::string& name, const std::string& label) {
    for (int i = 0; i < 200; ++i) {
      auto ns = namespaces->get(name);
      if (ns &&
          ns->value("/metadata/labels"_json_pointer, json::object()).value("istio-injection", "") ==
              label)
        return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "the informer never saw " << name << " with label '" << label << "'";
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> namespaces;
  std::unique_ptr<MeshController> controller;
};

TEST_F(MeshControllerTest, BindsTheReadRoleToAMeshedNamespacesServiceAccountsOnly) {
  ASSERT_TRUE(
      rest->create(res::kNamespaces, "",
                   {{"metadata", {{"name", "shop"}, {"labels", {{"istio-injection", "enabled"}}}}}})
          .ok());
  ASSERT_TRUE(rest->create(res::kNamespaces, "", {{"metadata", {{"name", "team"}}}}).ok());
  waitForCache("shop", "enabled");
  ASSERT_TRUE(controller->sync("shop").ok());
  ASSERT_TRUE(controller->sync("team").ok());
  auto binding = rest->get(kBindings, "", "minik8s:mesh-proxy:shop");
  ASSERT_TRUE(binding.ok()) << binding.status().toString();
  EXPECT_EQ((*binding)["roleRef"]["name"], "minik8s:mesh-proxy");
  EXPECT_EQ((*binding)["subjects"][0]["name"], "system:serviceaccounts:shop");
  EXPECT_EQ(rest->get(kBindings, "", "minik8s:mesh-proxy:team").status().code(), 404);

  // The label goes: so does the grant.
  ASSERT_TRUE(rest->patch(res::kNamespaces, "", "shop",
                          {{"metadata", {{"labels", {{"istio-injection", nullptr}}}}}})
                  .ok());
  waitForCache("shop", "");
  ASSERT_TRUE(controller->sync("shop").ok());
  EXPECT_EQ(rest->get(kBindings, "", "minik8s:mesh-proxy:shop").status().code(), 404);
  EXPECT_TRUE(controller->sync("gone").ok());  // a namespace the cache does not know
}

}  // namespace
}  // namespace minik8s::controllers

namespace minik8s::controllers {
namespace {

TEST(MeshNamespaceTest, TheServersMeshFlagMeshesEveryApplicationNamespace) {
  auto ns = [](const std::string& name, const std::string& label) {
    json o = {{"metadata", {{"name", name}}}};
    if (!label.empty()) o["metadata"]["labels"] = {{"istio-injection", label}};
    return o;
  };
  EXPECT_TRUE(namespaceIsMeshed(ns("shop", "enabled"), false));
  EXPECT_FALSE(namespaceIsMeshed(ns("shop", ""), false));
  EXPECT_TRUE(namespaceIsMeshed(ns("shop", ""), true));
  EXPECT_FALSE(namespaceIsMeshed(ns("shop", "disabled"), true));
  EXPECT_FALSE(namespaceIsMeshed(ns("kube-system", ""), true));
  EXPECT_FALSE(namespaceIsMeshed(ns("kube-node-lease", ""), true));
}

}  // namespace
}  // namespace minik8s::controllers
