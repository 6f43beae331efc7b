// The built-in resources' registrations (api/resource_type.h): every entry complete and
// consistent, and the dispatchers (scheme, defaults, validation, tables, strategy) reading them.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "api/defaults.h"
#include "api/resource_type.h"
#include "api/scheme.h"
#include "api/strategy.h"
#include "api/table.h"
#include "api/validation.h"

namespace minik8s::api {
namespace {

bool createOnly(const ResourceInfo& r) { return r.verbs == std::vector<std::string>{"create"}; }

TEST(ResourceTypeTest, EveryEntryIsCompleteAndUnique) {
  std::set<std::string> seen;
  for (const auto& t : builtinResourceTypes()) {
    const ResourceInfo& r = t.info;
    SCOPED_TRACE(r.apiVersion() + " " + r.kind);
    EXPECT_TRUE(seen.insert(r.group + "/" + r.version + "/" + r.plural).second);
    EXPECT_FALSE(r.kind.empty());
    EXPECT_EQ(r.listKind, r.kind + "List");
    EXPECT_FALSE(r.plural.empty());
    EXPECT_FALSE(r.singular.empty());
    EXPECT_FALSE(r.verbs.empty());
    EXPECT_FALSE(r.storageVersion.empty());
    // Stored kinds with rules of their own register a validator; create-only reviews and the
    // few kinds that are metadata only (as in Kubernetes) need none.
    static const std::set<std::string> kMetadataOnly = {"ServiceAccount", "CSINode"};
    if (!createOnly(r) && !kMetadataOnly.count(r.kind)) {
      EXPECT_NE(t.validate, nullptr);
    }
    // A printer's cells line up with its columns, whatever the object holds.
    if (t.cells) {
      json row = t.cells(json::object(), json::object(), std::chrono::system_clock::now());
      ASSERT_TRUE(row.is_array());
      EXPECT_EQ(row.size(), t.columns.size());
    }
  }
}

TEST(ResourceTypeTest, TheSchemeIsTheRegistrationsInOrder) {
  const auto resources = Scheme::builtin().resources();
  const auto& types = builtinResourceTypes();
  ASSERT_EQ(resources.size(), types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(resources[i].kind, types[i].info.kind);
    EXPECT_EQ(resources[i].apiVersion(), types[i].info.apiVersion());
  }
  EXPECT_EQ(resources.front().kind, "Binding");  // core first, as kubectl lists it
}

TEST(ResourceTypeTest, LookupByGroupVersionKind) {
  const ResourceType* v1 = builtinResourceType("autoscaling", "v1", "HorizontalPodAutoscaler");
  const ResourceType* v2 = builtinResourceType("autoscaling", "v2", "HorizontalPodAutoscaler");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  EXPECT_NE(v1, v2);
  EXPECT_EQ(builtinResourceType("apps", "v1", "Pod"), nullptr);
  EXPECT_EQ(builtinResourceType("", "v1", "Deployment"), nullptr);
  EXPECT_EQ(builtinResourceType(*Scheme::builtin().byKind("", "v1", "Pod"))->info.plural, "pods");

  // Each version keeps its own defaults: v2 gets the 80 % CPU metric, v1 does not.
  json hpa = {{"spec", {{"maxReplicas", 3}}}};
  json v1obj = hpa, v2obj = hpa;
  applyDefaults(*Scheme::builtin().byKind("autoscaling", "v1", "HorizontalPodAutoscaler"), v1obj);
  applyDefaults(*Scheme::builtin().byKind("autoscaling", "v2", "HorizontalPodAutoscaler"), v2obj);
  EXPECT_FALSE(v1obj["spec"].contains("metrics"));
  EXPECT_TRUE(v2obj["spec"].contains("metrics"));
}

TEST(ResourceTypeTest, KindStrategiesRunThroughTheRegistrations) {
  const Scheme& s = Scheme::builtin();
  json pod = {{"metadata", {{"name", "p"}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "i"}}})}}},
              {"status", {{"phase", "Running"}}}};
  strategy::prepareForCreate(*s.byKind("", "v1", "Pod"), pod);
  EXPECT_EQ(pod["status"], json({{"phase", "Pending"}, {"qosClass", "BestEffort"}}));

  json node = {{"metadata", {{"name", "n"}}}, {"status", {{"capacity", {{"cpu", "2"}}}}}};
  strategy::prepareForCreate(*s.byKind("", "v1", "Node"), node);
  EXPECT_EQ(node["status"]["capacity"]["cpu"], "2");  // the agent registers with a status

  json secret = {{"metadata", {{"name", "s"}}}, {"stringData", {{"a", "b"}}}};
  strategy::prepareForCreate(*s.byKind("", "v1", "Secret"), secret);
  EXPECT_FALSE(secret.contains("stringData"));
  EXPECT_EQ(secret["data"]["a"], "Yg==");

  json deployment = {
      {"metadata", {{"name", "d"}}}, {"spec", json::object()}, {"status", {{"replicas", 3}}}};
  strategy::prepareForCreate(*s.byKind("apps", "v1", "Deployment"), deployment);
  EXPECT_EQ(deployment["status"], json::object());  // the generic status reset

  json oldNs = {{"metadata", {{"name", "n"}, {"generation", 1}}},
                {"spec", {{"finalizers", json::array({"kubernetes"})}}}};
  json newNs = {{"metadata", {{"name", "n"}}}, {"spec", {{"finalizers", json::array()}}}};
  strategy::prepareForUpdate(*s.byKind("", "v1", "Namespace"), newNs, oldNs, "");
  EXPECT_EQ(newNs["spec"], oldNs["spec"]);  // only /finalize changes a namespace's spec
}

TEST(ResourceTypeTest, ValidationAndTablesDispatchThroughTheRegistrations) {
  const Scheme& s = Scheme::builtin();
  json lease = {{"metadata", {{"name", "l"}, {"namespace", "default"}}},
                {"spec", {{"leaseDurationSeconds", -1}}}};
  auto causes = validate(*s.byKind("coordination.k8s.io", "v1", "Lease"), lease, nullptr);
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(causes[0].field, "spec.leaseDurationSeconds");

  EXPECT_EQ(tableColumns("Lease").size(), 3u);
  EXPECT_EQ(tableColumns("Lease")[1].name, "Holder");
  EXPECT_EQ(tableColumns("NoSuchKind").size(), 2u);  // Name and Age
}

}  // namespace
}  // namespace minik8s::api
