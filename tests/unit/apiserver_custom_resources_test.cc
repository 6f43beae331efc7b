// CustomResourceDefinitions in a real API server (SQLite, HTTP): a CRD is served as soon as its
// create returns, its objects go through the generic storage (defaults, pruning, validation,
// status and scale subresources, tables, discovery, OpenAPI), and deleting the CRD deletes them.
#include <gtest/gtest.h>

#include "client/rest_client.h"
#include "in_process_api_server.h"

namespace minik8s::apiserver {
namespace {

const client::Resource kCrds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
const client::Resource kWidgets{"example.com", "v1", "widgets", true};

json widgetCrd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
      "group": "example.com", "scope": "Namespaced",
      "names": {"plural": "widgets", "kind": "Widget"},
      "versions": [{"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
          "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "maximum": 5, "default": 2},
            "selector": {"type": "string"}}},
          "status": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
        "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
          "statusReplicasPath": ".status.size", "labelSelectorPath": ".spec.selector"}},
        "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}]
    }
  })");
}

json widget(const std::string& name) {
  return {{"apiVersion", "example.com/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", name}}},
          {"spec", {{"selector", "app=w"}, {"colour", "red"}}}};
}

class CustomResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().ok());
    rest_ = std::make_unique<client::RestClient>(server_.url());
  }
  void TearDown() override { server_.stop(); }

  testing::InProcessApiServer server_;
  std::unique_ptr<client::RestClient> rest_;
};

TEST_F(CustomResourcesTest, ServedOnCreateWithSchemaBehaviour) {
  auto before = rest_->create(kWidgets, "default", widget("w1"));
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.status().code(), 404);

  auto crd = rest_->create(kCrds, "", widgetCrd());
  ASSERT_TRUE(crd.ok()) << crd.status().message();
  auto created = rest_->create(kWidgets, "default", widget("w1"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ((*created)["spec"], json({{"selector", "app=w"}, {"size", 2}}));  // pruned, defaulted
  EXPECT_EQ((*created)["metadata"]["generation"], 1);

  auto status = rest_->get(kCrds, "", "widgets.example.com");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["status"]["acceptedNames"]["kind"], "Widget");
  EXPECT_EQ((*status)["status"]["storedVersions"], json({"v1"}));
  bool established = false;
  for (const auto& c : (*status)["status"]["conditions"]) {
    if (c["type"] == "Established") established = c["status"] == "True";
  }
  EXPECT_TRUE(established);

  json tooBig = widget("w2");
  tooBig["spec"]["size"] = 9;
  auto invalid = rest_->create(kWidgets, "default", tooBig);
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().code(), 422);
  EXPECT_NE(invalid.status().message().find(
                "spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5"),
            std::string::npos)
      << invalid.status().message();

  // Status subresource: status writes go through it only.
  json withStatus = *created;
  withStatus["status"] = {{"size", 3}};
  auto written = rest_->update(kWidgets, withStatus, "status");
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ((*written)["status"]["size"], 3);
  EXPECT_EQ((*written)["metadata"]["generation"], 1);

  // Scale subresource on the CRD's paths.
  auto scale = rest_->request("GET", kWidgets.path("default", "w1", "scale"), "");
  ASSERT_TRUE(scale.ok()) << scale.status().message();
  EXPECT_EQ((*scale)["spec"]["replicas"], 2);
  EXPECT_EQ((*scale)["status"]["replicas"], 3);
  EXPECT_EQ((*scale)["status"]["selector"], "app=w");
  auto scaled = rest_->patch(kWidgets, "default", "w1", {{"spec", {{"size", 4}}}});
  ASSERT_TRUE(scaled.ok()) << scaled.status().message();
  EXPECT_EQ((*scaled)["metadata"]["generation"], 2);

  // Discovery and OpenAPI know the group.
  auto group = rest_->request("GET", "/apis/example.com/v1", "");
  ASSERT_TRUE(group.ok());
  EXPECT_EQ((*group)["resources"][0]["name"], "widgets");
  auto openapi = rest_->request("GET", "/openapi/v3/apis/example.com/v1", "");
  ASSERT_TRUE(openapi.ok());
  EXPECT_TRUE((*openapi)["components"]["schemas"].contains("com.example.v1.Widget"));
}

TEST_F(CustomResourcesTest, DeletingTheCrdDeletesItsObjects) {
  ASSERT_TRUE(rest_->create(kCrds, "", widgetCrd()).ok());
  ASSERT_TRUE(rest_->create(kWidgets, "default", widget("a")).ok());
  ASSERT_TRUE(rest_->create(kWidgets, "kube-system", widget("b")).ok());
  ASSERT_TRUE(rest_->remove(kCrds, "", "widgets.example.com").ok());
  auto gone = rest_->get(kCrds, "", "widgets.example.com");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), 404);
  EXPECT_EQ(rest_->list(kWidgets, "").status().code(), 404);
  // A new CRD of the same name starts empty.
  ASSERT_TRUE(rest_->create(kCrds, "", widgetCrd()).ok());
  auto list = rest_->list(kWidgets, "");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_TRUE((*list)["items"].empty());
}

TEST_F(CustomResourcesTest, NameConflictsAreNotServed) {
  ASSERT_TRUE(rest_->create(kCrds, "", widgetCrd()).ok());
  json clash = widgetCrd();
  clash["metadata"]["name"] = "gadgets.example.com";
  clash["spec"]["names"] = {{"plural", "gadgets"}, {"kind", "Widget"}};
  ASSERT_TRUE(rest_->create(kCrds, "", clash).ok());
  auto crd = rest_->get(kCrds, "", "gadgets.example.com");
  ASSERT_TRUE(crd.ok());
  bool conflict = false;
  for (const auto& c : (*crd)["status"]["conditions"]) {
    if (c["type"] == "NamesAccepted")
      conflict = c["status"] == "False" && c["reason"] == "NameConflict";
  }
  EXPECT_TRUE(conflict);
  const client::Resource gadgets{"example.com", "v1", "gadgets", true};
  EXPECT_EQ(rest_->list(gadgets, "").status().code(), 404);
  EXPECT_TRUE(rest_->list(kWidgets, "").ok());
}

}  // namespace
}  // namespace minik8s::apiserver
