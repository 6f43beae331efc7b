// What a CustomResourceDefinition makes the server serve: resources per served version (in
// Kubernetes' version priority), CRD defaulting and validation, printer columns, and a scheme
// that gains and loses resources at run time.
#include <gtest/gtest.h>

#include "api/custom_resource.h"
#include "api/defaults.h"
#include "api/validation.h"
#include "common/time_util.h"

namespace minik8s::api {
namespace {

json crontabCrd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
      "group": "stable.example.com", "scope": "Namespaced",
      "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"], "categories": ["all"]},
      "versions": [
        {"name": "v1beta1", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": {"type": "object", "properties": {
           "spec": {"type": "object", "properties": {"cronSpec": {"type": "string"},
                    "replicas": {"type": "integer", "default": 1}}},
           "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                          "statusReplicasPath": ".status.replicas"}},
         "additionalPrinterColumns": [
           {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
           {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
           {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]},
        {"name": "v1alpha1", "served": false, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object"}}}
      ]
    }
  })");
}

const ResourceInfo& crdInfo() {
  return *Scheme::builtin().byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions");
}

TEST(CustomResourceTest, ResourcesPerServedVersionInPriorityOrder) {
  json crd = crontabCrd();
  defaultCustomResourceDefinition(crd);
  EXPECT_EQ(crd["spec"]["names"]["singular"], "crontab");
  EXPECT_EQ(crd["spec"]["names"]["listKind"], "CronTabList");
  EXPECT_EQ(crd["spec"]["conversion"]["strategy"], "None");
  auto resources = resourcesOfCrd(crd);
  ASSERT_TRUE(resources.ok()) << resources.status().message();
  ASSERT_EQ(resources->size(), 2u);
  const ResourceInfo& v1 = (*resources)[0];
  EXPECT_EQ(v1.version, "v1");
  EXPECT_EQ((*resources)[1].version, "v1beta1");
  EXPECT_EQ((*resources)[1].storageVersion, "v1");
  EXPECT_EQ(v1.kind, "CronTab");
  EXPECT_EQ(v1.listKind, "CronTabList");
  EXPECT_EQ(v1.shortNames, std::vector<std::string>{"ct"});
  EXPECT_EQ(v1.categories, std::vector<std::string>{"all"});
  EXPECT_TRUE(v1.namespaced);
  EXPECT_TRUE(v1.hasStatus());
  ASSERT_NE(v1.subresource("scale"), nullptr);
  EXPECT_EQ(v1.subresource("scale")->kind, "Scale");
  EXPECT_TRUE(v1.custom->hasScale());
  EXPECT_EQ(v1.custom->specReplicasPointer(), "/spec/replicas");
  EXPECT_FALSE((*resources)[1].hasStatus());
}

TEST(CustomResourceTest, PrinterColumnsAndCells) {
  json crd = crontabCrd();
  defaultCustomResourceDefinition(crd);
  auto resources = resourcesOfCrd(crd);
  ASSERT_TRUE(resources.ok());
  const auto& custom = *(*resources)[0].custom;
  auto columns = custom.columns();
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0].name, "Name");
  EXPECT_EQ(columns[0].format, "name");
  EXPECT_EQ(columns[2].type, "integer");
  const auto now = *parseRfc3339("2026-01-01T00:10:00Z");
  json obj = {{"metadata", {{"name", "a"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
              {"spec", {{"cronSpec", "* * * * */5"}, {"replicas", 2}}}};
  EXPECT_EQ(custom.cells(obj, now), json({"a", "* * * * */5", 2, "10m"}));
  obj["spec"].erase("cronSpec");
  EXPECT_EQ(custom.cells(obj, now)[1], nullptr);
  // Without printer columns: Name and Age.
  auto plain = (*resources)[1].custom->columns();
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[1].name, "Age");
}

TEST(CustomResourceTest, DefaultsPruningAndValidationGoThroughTheSchema) {
  json crd = crontabCrd();
  defaultCustomResourceDefinition(crd);
  auto resources = resourcesOfCrd(crd);
  ASSERT_TRUE(resources.ok());
  const ResourceInfo& v1 = (*resources)[0];
  json obj = {{"apiVersion", "stable.example.com/v1"},
              {"kind", "CronTab"},
              {"metadata", {{"name", "a"}, {"namespace", "default"}}},
              {"spec", {{"cronSpec", "x"}, {"colour", "blue"}}}};
  applyDefaults(v1, obj);
  EXPECT_EQ(obj["spec"], json({{"cronSpec", "x"}, {"replicas", 1}}));
  obj["spec"]["replicas"] = "many";
  auto causes = validate(v1, obj, nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "spec.replicas");
  obj["spec"]["replicas"] = 1;
  obj["metadata"]["name"] = "Not_A_Name";
  causes = validate(v1, obj, nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].field, "metadata.name");
}

std::vector<std::string> crdErrors(const json& crd) {
  json copy = crd;
  applyDefaults(crdInfo(), copy);
  std::vector<std::string> out;
  for (const auto& c : validate(crdInfo(), copy, nullptr))
    out.push_back(c.field + ": " + c.message);
  return out;
}

TEST(CustomResourceTest, CrdValidation) {
  EXPECT_EQ(crdErrors(crontabCrd()), std::vector<std::string>{});
  json bad = crontabCrd();
  bad["metadata"]["name"] = "wrong.example.com";
  bad["spec"]["scope"] = "Galaxy";
  bad["spec"]["names"]["kind"] = "Cron_Tab";
  bad["spec"]["names"]["singular"] = "crontab";
  bad["spec"]["versions"][0]["storage"] = true;
  bad["spec"]["versions"][1].erase("schema");
  bad["spec"]["versions"][1]["additionalPrinterColumns"][0]["type"] = "float";
  bad["spec"]["versions"][1]["subresources"]["scale"]["specReplicasPath"] = ".status.x";
  std::vector<std::string> want = {
      "spec.names.kind: Invalid value: \"Cron_Tab\": may have mixed case, but should otherwise "
      "match: ^[a-z]([-a-z0-9]*[a-z0-9])?",
      "metadata.name: Invalid value: \"wrong.example.com\": must be "
      "spec.names.plural+\".\"+spec.group",
      "spec.scope: Unsupported value: \"Galaxy\": supported values: \"Cluster\", \"Namespaced\"",
      "spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required",
      "spec.versions[1].additionalPrinterColumns[0].type: Unsupported value: \"float\": supported "
      "values: \"integer\", \"number\", \"string\", \"boolean\", \"date\"",
      "spec.versions[1].subresources.scale.specReplicasPath: Invalid value: \".status.x\": should "
      "be a json path under .spec",
      "spec.versions: Invalid value: \"null\": must have exactly one version marked as storage "
      "version"};
  auto got = crdErrors(bad);
  // The last message shows the versions array; compare its prefix.
  ASSERT_EQ(got.size(), want.size()) << ::testing::PrintToString(got);
  for (size_t i = 0; i + 1 < want.size(); ++i) EXPECT_EQ(got[i], want[i]);
  EXPECT_EQ(got.back().rfind("spec.versions: Invalid value: ", 0), 0u);
  EXPECT_NE(got.back().find("must have exactly one version marked as storage version"),
            std::string::npos);

  json webhook = crontabCrd();
  webhook["spec"]["conversion"] = {{"strategy", "Webhook"}};
  auto errs = crdErrors(webhook);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].rfind("spec.conversion.strategy: Forbidden: conversion webhooks are not "
                          "supported",
                          0),
            0u);
}

TEST(CustomResourceTest, SchemeGainsAndLosesResourcesWithStablePointers) {
  Scheme scheme(Scheme::builtin().resources());
  const uint64_t before = scheme.generation();
  json crd = crontabCrd();
  defaultCustomResourceDefinition(crd);
  auto resources = resourcesOfCrd(crd);
  ASSERT_TRUE(resources.ok());
  scheme.setCustomResources("stable.example.com", "crontabs", *resources);
  const ResourceInfo* r = scheme.byResource("stable.example.com", "v1", "crontabs");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(scheme.byKind("stable.example.com", "v1beta1", "CronTab")->plural, "crontabs");
  EXPECT_GT(scheme.generation(), before);
  bool listed = false;
  for (const auto& g : scheme.groups()) {
    if (g.name == "stable.example.com") {
      listed = true;
      EXPECT_EQ(g.versions, (std::vector<std::string>{"v1", "v1beta1"}));
    }
  }
  EXPECT_TRUE(listed);
  scheme.setCustomResources("stable.example.com", "crontabs", {});
  EXPECT_EQ(scheme.byResource("stable.example.com", "v1", "crontabs"), nullptr);
  EXPECT_EQ(r->kind, "CronTab");  // still valid: retired, not freed
  // Built-in resources are never replaced by a CRD's name.
  scheme.setCustomResources("", "pods", {});
  EXPECT_NE(scheme.byResource("", "v1", "pods"), nullptr);
}

}  // namespace
}  // namespace minik8s::api
