#include "apiserver/registry.h"

#include <gtest/gtest.h>

#include "fake_store.h"

namespace minik8s::apiserver {
namespace {

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}};
    ASSERT_TRUE(registry.create(res("", "v1", "namespaces"), "", ns).ok());
  }
  const api::ResourceInfo& res(const std::string& g, const std::string& v, const std::string& p) {
    return *api::Scheme::builtin().byResource(g, v, p);
  }
  json deployment(const std::string& name, int replicas) {
    return {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"replicas", replicas},
              {"selector", {{"matchLabels", {{"app", name}}}}},
              {"template",
               {{"metadata", {{"labels", {{"app", name}}}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
  }
  json pod(const std::string& name, const std::string& node = "") {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    if (!node.empty()) p["spec"]["nodeName"] = node;
    return p;
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
};

TEST_F(RegistryTest, CreateSetsServerOwnedMetadataAndDefaults) {
  auto& deploy = res("apps", "v1", "deployments");
  json in = deployment("web", 2);
  in["metadata"]["uid"] = "client-chosen";
  in["status"] = {{"replicas", 7}};
  auto out = registry.create(deploy, "default", in);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  const json& m = (*out)["metadata"];
  EXPECT_NE(m["uid"], "client-chosen");
  EXPECT_EQ(m["generation"], 1);
  EXPECT_EQ(m["namespace"], "default");
  EXPECT_TRUE(m.contains("creationTimestamp"));
  EXPECT_EQ(m["resourceVersion"], "2");
  EXPECT_EQ((*out)["status"], json::object());  // a client cannot set status on create
  EXPECT_EQ((*out)["spec"]["strategy"]["type"], "RollingUpdate");
  auto again = registry.create(deploy, "default", deployment("web", 1));
  EXPECT_EQ(again.status().reason(), "AlreadyExists");
  EXPECT_EQ(again.status().message(), "deployments.apps \"web\" already exists");
}

TEST_F(RegistryTest, GenerateNameAndMissingNamespace) {
  auto& cms = res("", "v1", "configmaps");
  json cm = {{"metadata", {{"generateName", "cfg-"}}}, {"data", {{"a", "b"}}}};
  auto out = registry.create(cms, "default", cm);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  std::string name = (*out)["metadata"]["name"];
  EXPECT_EQ(name.rfind("cfg-", 0), 0u);
  EXPECT_EQ(name.size(), 9u);
  auto missing = registry.create(cms, "nowhere", {{"metadata", {{"name", "x"}}}});
  EXPECT_EQ(missing.status().code(), 404);
  EXPECT_EQ(missing.status().message(), "namespaces \"nowhere\" not found");
}

TEST_F(RegistryTest, CreatesCheckTheirNamespaceThroughTheNamespaceReaderWhenSet) {
  auto& cms = res("", "v1", "configmaps");
  json cm = {{"metadata", {{"name", "x"}}}};
  std::vector<std::string> asked;
  json terminating = {{"metadata", {{"name", "default"}}}, {"status", {{"phase", "Terminating"}}}};
  registry.setNamespaceReader([&](const std::string& ns) -> Result<std::shared_ptr<const json>> {
    asked.push_back(ns);
    if (ns == "gone") return Status::NotFound("namespaces", ns);
    return std::make_shared<const json>(terminating);  // the store still says Active
  });
  auto refused = registry.create(cms, "default", cm);
  EXPECT_EQ(refused.status().code(), 403);
  EXPECT_EQ(refused.status().message(),
            "configmaps \"default\" is forbidden: unable to create new content in namespace "
            "default because it is being terminated");
  EXPECT_EQ(registry.create(cms, "gone", cm).status().message(), "namespaces \"gone\" not found");
  EXPECT_TRUE(
      registry.create(res("", "v1", "namespaces"), "", {{"metadata", {{"name", "n2"}}}}).ok())
      << "cluster-scoped objects have no namespace to check";
  EXPECT_EQ(asked, (std::vector<std::string>{"default", "gone"}));
  registry.setNamespaceReader(nullptr);  // back to the store
  EXPECT_TRUE(registry.create(cms, "default", cm).ok());
}

TEST_F(RegistryTest, InvalidObjectIs422WithFieldPaths) {
  auto out = registry.create(res("apps", "v1", "deployments"), "default", deployment("bad", -1));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), 422);
  ASSERT_FALSE(out.status().causes().empty());
  EXPECT_EQ(out.status().causes()[0].field, "spec.replicas");
  EXPECT_TRUE(store.list("/registry/apps/", 0, 0, "")->items.empty());  // nothing written
}

TEST_F(RegistryTest, UpdateChecksResourceVersionAndBumpsGenerationOnSpecOnly) {
  auto& deploy = res("apps", "v1", "deployments");
  auto created = registry.create(deploy, "default", deployment("web", 1));
  ASSERT_TRUE(created.ok());
  json stale = *created;
  json labelled = *created;
  labelled["metadata"]["labels"] = {{"tier", "front"}};
  auto u1 = registry.update(deploy, "default", "web", labelled);
  ASSERT_TRUE(u1.ok()) << u1.status().toString();
  EXPECT_EQ((*u1)["metadata"]["generation"], 1);
  stale["spec"]["replicas"] = 5;
  auto conflict = registry.update(deploy, "default", "web", stale);
  EXPECT_EQ(conflict.status().reason(), "Conflict");
  json scaled = *u1;
  scaled["spec"]["replicas"] = 5;
  auto u2 = registry.update(deploy, "default", "web", scaled);
  ASSERT_TRUE(u2.ok());
  EXPECT_EQ((*u2)["metadata"]["generation"], 2);
  EXPECT_EQ((*u2)["metadata"]["uid"], (*created)["metadata"]["uid"]);
}

TEST_F(RegistryTest, StatusIsOnlyChangedThroughTheStatusSubresource) {
  auto& deploy = res("apps", "v1", "deployments");
  auto created = registry.create(deploy, "default", deployment("web", 1));
  json withStatus = *created;
  withStatus["status"] = {{"replicas", 1}, {"observedGeneration", 1}};
  withStatus["spec"]["replicas"] = 9;  // ignored by a status update
  auto st = registry.update(deploy, "default", "web", withStatus, "status");
  ASSERT_TRUE(st.ok()) << st.status().toString();
  EXPECT_EQ((*st)["status"]["replicas"], 1);
  EXPECT_EQ((*st)["spec"]["replicas"], 1);
  json main = *st;
  main["status"] = {{"replicas", 42}};  // ignored by a main-resource update
  auto mu = registry.update(deploy, "default", "web", main);
  ASSERT_TRUE(mu.ok());
  EXPECT_EQ((*mu)["status"]["replicas"], 1);
}

TEST_F(RegistryTest, FinalizersDelayDeletionUntilRemoved) {
  auto& cms = res("", "v1", "configmaps");
  json cm = {{"metadata", {{"name", "c"}, {"finalizers", {"example.com/keep"}}}}};
  ASSERT_TRUE(registry.create(cms, "default", cm).ok());
  auto del = registry.remove(cms, "default", "c", {});
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(del->deleted);
  EXPECT_TRUE(del->object["metadata"].contains("deletionTimestamp"));
  json cur = *registry.get(cms, "default", "c");
  cur["metadata"]["finalizers"] = json::array();
  ASSERT_TRUE(registry.update(cms, "default", "c", cur).ok());
  EXPECT_EQ(registry.get(cms, "default", "c").status().code(), 404);
}

TEST_F(RegistryTest, ScheduledPodsAreDeletedGracefullyUnscheduledAtOnce) {
  auto& pods = res("", "v1", "pods");
  ASSERT_TRUE(registry.create(pods, "default", pod("bound", "node-1")).ok());
  ASSERT_TRUE(registry.create(pods, "default", pod("pending")).ok());
  auto graceful = registry.remove(pods, "default", "bound", {});
  ASSERT_TRUE(graceful.ok());
  EXPECT_FALSE(graceful->deleted);
  EXPECT_EQ(graceful->object["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_TRUE(registry.get(pods, "default", "bound").ok());
  DeleteOptions force;
  force.gracePeriodSeconds = 0;
  auto forced = registry.remove(pods, "default", "bound", force);
  ASSERT_TRUE(forced.ok());
  EXPECT_TRUE(forced->deleted);
  auto now = registry.remove(pods, "default", "pending", {});
  ASSERT_TRUE(now.ok());
  EXPECT_TRUE(now->deleted);
}

TEST_F(RegistryTest, PodCreateStartsPendingWithQosClass) {
  json p = pod("q");
  p["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "500m"}, {"memory", "64Mi"}}}};
  p["status"] = {{"phase", "Running"}};
  auto out = registry.create(res("", "v1", "pods"), "default", p);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ((*out)["status"]["phase"], "Pending");
  EXPECT_EQ((*out)["status"]["qosClass"], "Guaranteed");
}

TEST_F(RegistryTest, SecretStringDataIsMergedIntoData) {
  json s = {{"metadata", {{"name", "s"}}}, {"stringData", {{"user", "admin"}}}};
  auto out = registry.create(res("", "v1", "secrets"), "default", s);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ((*out)["data"]["user"], "YWRtaW4=");
  EXPECT_FALSE(out->contains("stringData"));
}

// Continue tokens are padded base64 whatever their length (names of 1 to 6 characters give
// tokens of every length modulo 3); each must be read back.
TEST_F(RegistryTest, ContinueTokensOfEveryLengthAreAccepted) {
  auto& cms = res("", "v1", "configmaps");
  std::vector<std::string> created;
  for (int len = 1; len <= 6; ++len) {
    created.push_back(std::string(static_cast<size_t>(len), static_cast<char>('a' + len)));
    ASSERT_TRUE(
        registry.create(cms, "default", json{{"metadata", {{"name", created.back()}}}}).ok());
  }
  ListOptions opts;
  opts.limit = 1;
  std::vector<std::string> names;
  bool padded = false;
  do {
    auto page = registry.list(cms, "default", opts);
    ASSERT_TRUE(page.ok()) << page.status().toString();
    for (auto& o : page->items) names.push_back(o["metadata"]["name"]);
    opts.continueToken = page->continueToken;
    padded = padded || opts.continueToken.ends_with("=");
  } while (!opts.continueToken.empty());
  EXPECT_TRUE(padded);
  EXPECT_EQ(names, created);
  opts.continueToken = "not a token";
  EXPECT_EQ(registry.list(cms, "default", opts).status().code(), 400);
}

TEST_F(RegistryTest, ListPaginatesWithContinueAndFiltersBySelectors) {
  auto& cms = res("", "v1", "configmaps");
  for (int i = 0; i < 5; ++i) {
    json cm = {{"metadata",
                {{"name", "cm-" + std::to_string(i)},
                 {"labels", {{"even", i % 2 == 0 ? "yes" : "no"}}}}}};
    ASSERT_TRUE(registry.create(cms, "default", cm).ok());
  }
  ListOptions opts;
  opts.limit = 2;
  std::vector<std::string> names;
  do {
    auto page = registry.list(cms, "default", opts);
    ASSERT_TRUE(page.ok()) << page.status().toString();
    for (auto& o : page->items) names.push_back(o["metadata"]["name"]);
    opts.continueToken = page->continueToken;
  } while (!opts.continueToken.empty());
  EXPECT_EQ(names, (std::vector<std::string>{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"}));
  ListOptions sel;
  sel.labelSelector = "even=yes";
  sel.fieldSelector = "metadata.name!=cm-0";
  auto filtered = registry.list(cms, "default", sel);
  ASSERT_TRUE(filtered.ok());
  ASSERT_EQ(filtered->items.size(), 2u);
  EXPECT_EQ(filtered->items[0]["metadata"]["name"], "cm-2");
  ListOptions bad;
  bad.fieldSelector = "spec.nodeName=x";
  EXPECT_EQ(registry.list(cms, "default", bad).status().code(), 400);
}

}  // namespace
}  // namespace minik8s::apiserver
