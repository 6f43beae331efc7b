// The node authorizer's graph: a node reads a Secret or ConfigMap only when a pod bound to it
// references it, and mints tokens only for its pods' service accounts; the graph follows pods
// as they come, move and go, and a miss is checked against the registry.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "api/pod_references.h"
#include "api/scheme.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/auth/node_graph.h"
#include "apiserver/registry.h"
#include "apiserver/watch_cache.h"
#include "eventually.h"
#include "fake_store.h"

namespace minik8s::apiserver::auth {
namespace {

const api::ResourceInfo& info(const std::string& group, const std::string& resource) {
  return *api::Scheme::builtin().byResource(group, "v1", resource);
}

UserInfo nodeUser(const std::string& node) {
  UserInfo u;
  u.name = "system:node:" + node;
  u.groups = {"system:nodes", "system:authenticated"};
  return u;
}

Attributes request(const std::string& node, const std::string& verb, const std::string& res,
                   const std::string& name, const std::string& sub = "") {
  Attributes a;
  a.user = nodeUser(node);
  a.verb = verb;
  a.resourceRequest = true;
  a.apiVersion = "v1";
  a.resource = res;
  a.subresource = sub;
  a.namespaceName = "team";
  a.name = name;
  return a;
}

json pod(const std::string& name, const std::string& node, const json& spec) {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "team"}}},
            {"spec", spec}};
  p["spec"]["nodeName"] = node;
  if (!p["spec"].contains("containers"))
    p["spec"]["containers"] = {{{"name", "c"}, {"image", "busybox"}}};
  return p;
}

using testing::eventually;

TEST(PodReferencesTest, VolumesEnvPullSecretsAndServiceAccount) {
  json p = pod("p", "n1", R"({
    "serviceAccountName": "builder",
    "imagePullSecrets": [{"name": "pull"}],
    "volumes": [
      {"name": "a", "secret": {"secretName": "vol-secret"}},
      {"name": "b", "configMap": {"name": "vol-cm"}},
      {"name": "c", "projected": {"sources": [{"secret": {"name": "proj-secret"}},
                                              {"configMap": {"name": "kube-root-ca.crt"}},
                                              {"serviceAccountToken": {"path": "token"}}]}},
      {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
      {"name": "e", "csi": {"driver": "x", "nodePublishSecretRef": {"name": "csi-secret"}}},
      {"name": "f", "emptyDir": {}}],
    "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "init-cm"}}]}],
    "containers": [{"name": "c", "env": [
      {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}},
      {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}},
      {"name": "C", "value": "plain"}],
      "envFrom": [{"secretRef": {"name": "from-secret"}}]}]})"_json);
  auto refs = api::podReferences(p);
  EXPECT_EQ(refs.secrets, (std::set<std::string>{"csi-secret", "env-secret", "from-secret",
                                                 "proj-secret", "pull", "vol-secret"}));
  EXPECT_EQ(refs.configMaps,
            (std::set<std::string>{"env-cm", "init-cm", "kube-root-ca.crt", "vol-cm"}));
  EXPECT_EQ(refs.claims, (std::set<std::string>{"data"}));
  EXPECT_EQ(refs.serviceAccount, "builder");
  EXPECT_EQ(api::podReferences(pod("q", "n1", json::object())).serviceAccount, "default");
  // Malformed parts are skipped.
  auto odd = api::podReferences(
      R"({"spec": {"volumes": [7, {"secret": "x"}], "containers": {"env": 1}}})"_json);
  EXPECT_TRUE(odd.secrets.empty());
  EXPECT_TRUE(api::podReferences(json("text")).secrets.empty());
}

class NodeGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        registry
            .create(info("", "namespaces"), "",
                    {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}})
            .ok());
    add(pod("web", "n1", R"({"serviceAccountName": "builder",
      "volumes": [{"name": "cfg", "configMap": {"name": "web-config"}}],
      "containers": [{"name": "c", "image": "busybox", "env": [
        {"name": "P", "valueFrom": {"secretKeyRef": {"name": "db-password", "key": "p"}}}]}]})"_json));
    add(pod("batch", "n2",
            R"({"volumes": [{"name": "s", "secret": {"secretName": "batch-key"}}]})"_json));
  }
  void add(const json& p) {
    auto r = registry.create(info("", "pods"), "team", p);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
};

TEST_F(NodeGraphTest, ANodeReadsOnlyWhatItsPodsReference) {
  NodeAuthorizer nodes(&registry);  // no graph: every answer from the registry
  EXPECT_TRUE(nodes.authorize(request("n1", "get", "secrets", "db-password")).allowed());
  EXPECT_TRUE(nodes.authorize(request("n1", "get", "configmaps", "web-config")).allowed());
  EXPECT_TRUE(nodes.authorize(request("n2", "get", "secrets", "batch-key")).allowed());
  auto denied = nodes.authorize(request("n1", "get", "secrets", "batch-key"));
  EXPECT_FALSE(denied.allowed());
  EXPECT_EQ(denied.reason, "no relationship found between node 'n1' and this object");
  EXPECT_FALSE(nodes.authorize(request("n2", "get", "secrets", "db-password")).allowed());
  // Only one by name: no list or watch of Secrets or ConfigMaps, no writes.
  EXPECT_FALSE(nodes.authorize(request("n1", "list", "secrets", "")).allowed());
  EXPECT_FALSE(nodes.authorize(request("n1", "watch", "configmaps", "")).allowed());
  EXPECT_FALSE(nodes.authorize(request("n1", "update", "secrets", "db-password")).allowed());
  // Tokens for its pods' service accounts only.
  EXPECT_TRUE(
      nodes.authorize(request("n1", "create", "serviceaccounts", "builder", "token")).allowed());
  EXPECT_FALSE(
      nodes.authorize(request("n2", "create", "serviceaccounts", "builder", "token")).allowed());
  EXPECT_TRUE(
      nodes.authorize(request("n2", "create", "serviceaccounts", "default", "token")).allowed());
}

TEST_F(NodeGraphTest, TheGraphFollowsPodsAndAMissIsCheckedAgainstTheRegistry) {
  auto graph = std::make_shared<NodeGraph>(registry);
  graph->start();
  ASSERT_TRUE(eventually([&] { return graph->synced(); }));
  using K = NodeGraph::Kind;
  EXPECT_TRUE(graph->references("n1", K::kSecret, "team", "db-password"));
  EXPECT_TRUE(graph->references("n1", K::kConfigMap, "team", "web-config"));
  EXPECT_TRUE(graph->references("n1", K::kServiceAccount, "team", "builder"));
  EXPECT_FALSE(graph->references("n2", K::kSecret, "team", "db-password"));
  EXPECT_FALSE(graph->references("n1", K::kSecret, "other", "db-password"));

  // A second pod on n2 with the same secret: both nodes; the first goes: only n2.
  add(pod("web-2", "n2", registry.get(info("", "pods"), "team", "web")->at("spec")));
  EXPECT_TRUE(
      eventually([&] { return graph->references("n2", K::kSecret, "team", "db-password"); }));
  // Terminating, it still holds its references (its containers may still read them) ...
  ASSERT_TRUE(registry.remove(info("", "pods"), "team", "web", {}).ok());
  EXPECT_TRUE(eventually([&] {
    return registry.get(info("", "pods"), "team", "web")
        ->contains("/metadata/deletionTimestamp"_json_pointer);
  }));
  EXPECT_TRUE(graph->references("n1", K::kSecret, "team", "db-password"));
  // ... until it is gone.
  DeleteOptions now;
  now.gracePeriodSeconds = 0;
  ASSERT_TRUE(registry.remove(info("", "pods"), "team", "web", now).ok());
  EXPECT_TRUE(
      eventually([&] { return !graph->references("n1", K::kSecret, "team", "db-password"); }));
  EXPECT_TRUE(graph->references("n2", K::kSecret, "team", "db-password"));

  // A finished pod references nothing any more.
  json job =
      pod("job", "n5", R"({"volumes": [{"name": "s", "secret": {"secretName": "k"}}]})"_json);
  graph->setPod("/registry/pods/team/job", job);
  EXPECT_TRUE(graph->references("n5", K::kSecret, "team", "k"));
  job["status"]["phase"] = "Succeeded";
  graph->setPod("/registry/pods/team/job", job);
  EXPECT_FALSE(graph->references("n5", K::kSecret, "team", "k"));

  // Created unbound (read without decoding: no edges), then bound by the scheduler.
  json unbound =
      pod("queued", "", R"({"volumes": [{"name": "s", "secret": {"secretName": "q"}}]})"_json);
  unbound["spec"].erase("nodeName");
  add(unbound);
  auto bound = registry.get(info("", "pods"), "team", "queued");
  ASSERT_TRUE(bound.ok());
  (*bound)["spec"]["nodeName"] = "n4";
  ASSERT_TRUE(registry.update(info("", "pods"), "team", "queued", *bound).ok());
  EXPECT_TRUE(eventually([&] { return graph->references("n4", K::kSecret, "team", "q"); }));

  // The authorizer asks the graph first and the registry on a miss.
  NodeAuthorizer nodes(&registry, graph);
  EXPECT_TRUE(nodes.authorize(request("n2", "get", "secrets", "db-password")).allowed());
  EXPECT_FALSE(nodes.authorize(request("n1", "get", "secrets", "db-password")).allowed());
  graph->stop();
  add(pod("late", "n3", R"({"volumes": [{"name": "s", "secret": {"secretName": "late"}}]})"_json));
  EXPECT_FALSE(graph->references("n3", K::kSecret, "team", "late"));  // stopped: not seen
  EXPECT_TRUE(nodes.authorize(request("n3", "get", "secrets", "late")).allowed());
}

// In the server the graph follows the pods through the watch cache (no store watch of its own).
TEST_F(NodeGraphTest, TheGraphFollowsPodsThroughTheWatchCache) {
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto graph = std::make_shared<NodeGraph>(registry);
  graph->start(&cache);
  ASSERT_TRUE(eventually([&] { return graph->synced(); }));
  using K = NodeGraph::Kind;
  EXPECT_TRUE(graph->references("n1", K::kSecret, "team", "db-password"));
  EXPECT_TRUE(graph->references("n2", K::kSecret, "team", "batch-key"));

  add(pod("web-2", "n3", registry.get(info("", "pods"), "team", "web")->at("spec")));
  EXPECT_TRUE(
      eventually([&] { return graph->references("n3", K::kSecret, "team", "db-password"); }));
  DeleteOptions now;
  now.gracePeriodSeconds = 0;
  ASSERT_TRUE(registry.remove(info("", "pods"), "team", "web-2", now).ok());
  EXPECT_TRUE(
      eventually([&] { return !graph->references("n3", K::kSecret, "team", "db-password"); }));
  EXPECT_TRUE(graph->references("n1", K::kSecret, "team", "db-password"));

  // Stopped before the cache it follows, as the server stops them.
  graph->stop();
  cache.stop();
}

}  // namespace
}  // namespace minik8s::apiserver::auth
