#include <gtest/gtest.h>

#include <algorithm>

#include "api/schema/definitions.h"
#include "api/scheme.h"

namespace minik8s::api {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SchemeTest, GroupsInDiscoveryOrderWithPreferredVersionFirst) {
  const auto& groups = Scheme::builtin().groups();
  std::vector<std::string> names;
  for (const auto& g : groups) names.push_back(g.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "", "apps", "autoscaling", "batch", "coordination.k8s.io", "discovery.k8s.io",
                "networking.k8s.io", "rbac.authorization.k8s.io", "authorization.k8s.io",
                "authentication.k8s.io", "certificates.k8s.io", "storage.k8s.io",
                "admissionregistration.k8s.io", "apiextensions.k8s.io", "minik8s.io"}));
  EXPECT_EQ(groups[2].versions, (std::vector<std::string>{"v2", "v1"}));
  EXPECT_EQ(groups[0].versions, (std::vector<std::string>{"v1"}));
}

TEST(SchemeTest, NoGroupVersionWithoutResources) {
  const auto& s = Scheme::builtin();
  for (const auto& g : s.groups()) {
    for (const auto& v : g.versions) EXPECT_FALSE(s.groupVersion(g.name, v).empty()) << g.name;
  }
  EXPECT_TRUE(s.groupVersion("policy", "v1").empty());
}

TEST(SchemeTest, PodsLikeKubernetes) {
  const auto* pods = Scheme::builtin().byResource("", "v1", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(pods->kind, "Pod");
  EXPECT_EQ(pods->listKind, "PodList");
  EXPECT_EQ(pods->singular, "pod");
  EXPECT_TRUE(pods->namespaced);
  EXPECT_EQ(pods->shortNames, (std::vector<std::string>{"po"}));
  EXPECT_EQ(pods->categories, (std::vector<std::string>{"all"}));
  EXPECT_EQ(pods->verbs.size(), 8u);
  for (const char* sub : {"status", "binding", "log", "exec", "attach", "portforward", "eviction",
                          "ephemeralcontainers"}) {
    EXPECT_NE(pods->subresource(sub), nullptr) << sub;
  }
  const auto* eviction = pods->subresource("eviction");
  EXPECT_EQ(eviction->group, "policy");
  EXPECT_EQ(eviction->version, "v1");
  EXPECT_EQ(eviction->kind, "Eviction");
  EXPECT_EQ(eviction->verbs, (std::vector<std::string>{"create"}));
  EXPECT_TRUE(pods->hasStatus());
  EXPECT_EQ(pods->apiVersion(), "v1");
  EXPECT_EQ(pods->qualifiedResource(), "pods");
}

TEST(SchemeTest, ScaleAndTokenSubresourcesUseTheirOwnKinds) {
  const auto& s = Scheme::builtin();
  const auto* deploy = s.byKind("apps", "v1", "Deployment");
  ASSERT_NE(deploy, nullptr);
  EXPECT_EQ(deploy->qualifiedResource(), "deployments.apps");
  const auto* scale = deploy->subresource("scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->group + "/" + scale->version + "/" + scale->kind, "autoscaling/v1/Scale");
  EXPECT_NE(s.byResource("apps", "v1", "replicasets")->subresource("scale"), nullptr);
  const auto* token = s.byResource("", "v1", "serviceaccounts")->subresource("token");
  ASSERT_NE(token, nullptr);
  EXPECT_EQ(token->group, "authentication.k8s.io");
  EXPECT_EQ(token->kind, "TokenRequest");
}

TEST(SchemeTest, ScopesVerbsAndNames) {
  const auto& s = Scheme::builtin();
  EXPECT_FALSE(s.byResource("", "v1", "nodes")->namespaced);
  EXPECT_FALSE(s.byResource("", "v1", "namespaces")->namespaced);
  EXPECT_FALSE(contains(s.byResource("", "v1", "namespaces")->verbs, "deletecollection"));
  EXPECT_NE(s.byResource("", "v1", "namespaces")->subresource("finalize"), nullptr);
  EXPECT_EQ(s.byResource("", "v1", "bindings")->verbs, (std::vector<std::string>{"create"}));
  EXPECT_EQ(s.byResource("", "v1", "services")->shortNames[0], "svc");
  EXPECT_NE(s.byResource("", "v1", "services")->subresource("proxy"), nullptr);
  EXPECT_EQ(s.byResource("", "v1", "endpoints")->singular, "endpoints");
  EXPECT_EQ(s.byResource("batch", "v1", "jobs")->categories, (std::vector<std::string>{"all"}));
  EXPECT_TRUE(s.byResource("batch", "v1", "jobs")->shortNames.empty());
  const auto* dns = s.byResource("minik8s.io", "v1", "dnses");
  ASSERT_NE(dns, nullptr);
  EXPECT_EQ(dns->kind, "Dns");
  EXPECT_EQ(dns->singular, "dns");
  EXPECT_TRUE(dns->hasStatus());
  EXPECT_EQ(s.byKind("coordination.k8s.io", "v1", "Lease")->plural, "leases");
  EXPECT_EQ(s.byKind("discovery.k8s.io", "v1", "EndpointSlice")->plural, "endpointslices");
  EXPECT_EQ(s.byKind("apps", "v1", "Pod"), nullptr);
}

TEST(SchemeTest, HpaServedInTwoVersionsStoredAsV2) {
  const auto& s = Scheme::builtin();
  const auto* v1 = s.byResource("autoscaling", "v1", "horizontalpodautoscalers");
  const auto* v2 = s.byResource("autoscaling", "v2", "horizontalpodautoscalers");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v1->storageVersion, "v2");
  EXPECT_EQ(v2->storageVersion, "v2");
  EXPECT_EQ(v1->shortNames, (std::vector<std::string>{"hpa"}));
  EXPECT_EQ(s.byResource("apps", "v1", "deployments")->storageVersion, "v1");
}

TEST(SchemeTest, GroupVersionIsSortedAndComplete) {
  auto core = Scheme::builtin().groupVersion("", "v1");
  std::vector<std::string> plurals;
  for (const auto* r : core) plurals.push_back(r->plural);
  EXPECT_EQ(plurals, (std::vector<std::string>{
                         "bindings", "configmaps", "endpoints", "events", "limitranges",
                         "namespaces", "nodes", "persistentvolumeclaims", "persistentvolumes",
                         "pods", "resourcequotas", "secrets", "serviceaccounts", "services"}));
}

TEST(SchemeTest, StorageResourcesLikeKubernetes) {
  const auto& s = Scheme::builtin();
  const auto* pv = s.byResource("", "v1", "persistentvolumes");
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ(pv->kind, "PersistentVolume");
  EXPECT_EQ(pv->singular, "persistentvolume");
  EXPECT_FALSE(pv->namespaced);
  EXPECT_EQ(pv->shortNames, (std::vector<std::string>{"pv"}));
  EXPECT_TRUE(pv->categories.empty());
  EXPECT_TRUE(pv->hasStatus());
  EXPECT_EQ(pv->verbs.size(), 8u);
  const auto* pvc = s.byResource("", "v1", "persistentvolumeclaims");
  ASSERT_NE(pvc, nullptr);
  EXPECT_EQ(pvc->kind, "PersistentVolumeClaim");
  EXPECT_EQ(pvc->listKind, "PersistentVolumeClaimList");
  EXPECT_TRUE(pvc->namespaced);
  EXPECT_EQ(pvc->shortNames, (std::vector<std::string>{"pvc"}));
  EXPECT_TRUE(pvc->hasStatus());
  const auto* sc = s.byResource("storage.k8s.io", "v1", "storageclasses");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->kind, "StorageClass");
  EXPECT_EQ(sc->singular, "storageclass");
  EXPECT_FALSE(sc->namespaced);
  EXPECT_EQ(sc->shortNames, (std::vector<std::string>{"sc"}));
  EXPECT_TRUE(sc->subresources.empty());
  EXPECT_EQ(sc->qualifiedResource(), "storageclasses.storage.k8s.io");
  const auto* csi = s.byKind("storage.k8s.io", "v1", "CSIDriver");
  ASSERT_NE(csi, nullptr);
  EXPECT_EQ(csi->plural, "csidrivers");
  EXPECT_FALSE(csi->namespaced);
  EXPECT_TRUE(csi->shortNames.empty());
  EXPECT_TRUE(csi->subresources.empty());
  EXPECT_EQ(definitionName(*csi), "io.k8s.api.storage.v1.CSIDriver");
}

TEST(SchemeTest, EveryResourceHasADefinitionWithItsGvk) {
  const json& defs = schemaDefinitions();
  for (const auto& r : Scheme::builtin().resources()) {
    std::string name = definitionName(r);
    ASSERT_TRUE(defs.contains(name)) << name;
    const json& def = defs[name];
    ASSERT_TRUE(def.contains("x-kubernetes-group-version-kind")) << name;
    json want = {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
    bool found = false;
    for (const auto& gvk : def["x-kubernetes-group-version-kind"]) found |= gvk == want;
    EXPECT_TRUE(found) << name;
    EXPECT_TRUE(def["properties"].contains("metadata")) << name;
    EXPECT_FALSE(def["description"].get<std::string>().empty()) << name;
  }
  EXPECT_EQ(definitionName(*Scheme::builtin().byKind("apps", "v1", "Deployment")),
            "io.k8s.api.apps.v1.Deployment");
  EXPECT_EQ(definitionName(*Scheme::builtin().byKind("", "v1", "Pod")), "io.k8s.api.core.v1.Pod");
  EXPECT_EQ(definitionName(*Scheme::builtin().byKind("minik8s.io", "v1", "Dns")),
            "io.minik8s.v1.Dns");
}

}  // namespace
}  // namespace minik8s::api
