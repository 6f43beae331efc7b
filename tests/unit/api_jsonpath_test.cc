// The JSONPath subset of CRD printer columns and scale paths.
#include <gtest/gtest.h>

#include "api/jsonpath.h"

namespace minik8s::api {
namespace {

const json kObj = json::parse(R"({
  "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "web"}},
  "spec": {"replicas": 3, "containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}]},
  "status": {"conditions": [{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "False"}]}
})");

json eval(const std::string& expr) {
  auto p = JsonPath::parse(expr);
  EXPECT_TRUE(p.ok()) << expr << ": " << p.status().message();
  return p.ok() ? json(p->evaluate(kObj)) : json();
}

TEST(JsonPathTest, FieldsIndexesWildcardsAndFilters) {
  EXPECT_EQ(eval(".spec.replicas"), json({3}));
  EXPECT_EQ(eval("{.spec.replicas}"), json({3}));
  EXPECT_EQ(eval(".spec.containers[1].image"), json({"i2"}));
  EXPECT_EQ(eval(".spec.containers[-1].name"), json({"c2"}));
  EXPECT_EQ(eval(".spec.containers[*].name"), json({"c1", "c2"}));
  EXPECT_EQ(eval(".spec.containers.*.image"), json({"i1", "i2"}));
  EXPECT_EQ(eval(".metadata.labels['app.kubernetes.io/name']"), json({"web"}));
  EXPECT_EQ(eval(".status.conditions[?(@.type==\"Ready\")].status"), json({"False"}));
  EXPECT_EQ(eval(".status.conditions[?(@.type=='Synced')].status"), json({"True"}));
  EXPECT_EQ(eval(".status.conditions[?(@.type!='Synced')].type"), json({"Ready"}));
  EXPECT_EQ(eval(".spec.missing"), json::array());
  EXPECT_EQ(eval(".spec.replicas.deeper"), json::array());
}

TEST(JsonPathTest, FirstAndPointer) {
  auto p = JsonPath::parse(".spec.replicas");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first(kObj), 3);
  EXPECT_EQ(p->pointer(), "/spec/replicas");
  EXPECT_EQ(JsonPath::parse(".spec.containers[0]")->pointer(), "");
  EXPECT_TRUE(JsonPath::parse(".spec.nothing")->first(kObj).is_null());
}

TEST(JsonPathTest, RefusesWhatItDoesNotSupport) {
  for (const char* bad : {"spec.replicas", "..name", ".a[1:2]", ".a[?(@.x>1)]", ".a[", ""}) {
    auto p = JsonPath::parse(bad);
    EXPECT_FALSE(p.ok()) << bad;
  }
}

}  // namespace
}  // namespace minik8s::api
