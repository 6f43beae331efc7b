// api/object_meta.h: the one set of object accessors.
#include <gtest/gtest.h>

#include "api/object_meta.h"

namespace minik8s::api {
namespace {

TEST(ObjectMetaTest, ReadsTheCommonFields) {
  json pod = {{"metadata",
               {{"name", "web-1"},
                {"namespace", "shop"},
                {"uid", "u-1"},
                {"labels", {{"app", "web"}, {"app.kubernetes.io/name", "shop"}}}}},
              {"spec", {{"nodeName", "node-2"}}}};
  EXPECT_EQ(nameOf(pod), "web-1");
  EXPECT_EQ(namespaceOf(pod), "shop");
  EXPECT_EQ(uidOf(pod), "u-1");
  EXPECT_EQ(nodeNameOf(pod), "node-2");
  EXPECT_EQ(labelValue(pod, "app"), "web");
  EXPECT_EQ(labelValue(pod, "app.kubernetes.io/name"), "shop");  // '/' in a key is escaped
  EXPECT_EQ(labelValue(pod, "tier"), "");
}

TEST(ObjectMetaTest, AbsentWrongTypedOrUnreachableFieldsAreEmpty) {
  EXPECT_EQ(nameOf(json::object()), "");
  EXPECT_EQ(nameOf(json{{"metadata", {{"name", 3}}}}), "");
  EXPECT_EQ(nameOf(json{{"metadata", "not an object"}}), "");
  EXPECT_EQ(nameOf(json::array()), "");
  EXPECT_EQ(nameOf(json("text")), "");
  EXPECT_EQ(nodeNameOf(json{{"spec", nullptr}}), "");
  EXPECT_EQ(stringAt(json{{"a", json::array({"x", "y"})}}, "/a/1"_json_pointer), "y");
  EXPECT_EQ(stringAt(json{{"a", json::array({"x"})}}, "/a/7"_json_pointer), "");
  EXPECT_EQ(stringAt(json{{"a", json::array({"x"})}}, "/a/b"_json_pointer), "");
}

TEST(ObjectMetaTest, PointerAsTextAndMembers) {
  const json binding = {{"roleRef", {{"kind", "ClusterRole"}, {"name", "view"}}}};
  EXPECT_EQ(stringAt(binding, "/roleRef/name"), "view");
  EXPECT_EQ(stringAt(binding, "/roleRef/apiGroup"), "");
  EXPECT_EQ(stringAt(binding, "roleRef"), "");  // malformed pointer: no leading '/'
  EXPECT_EQ(stringAt(json("text"), "/roleRef/name"), "");
  EXPECT_EQ(member(binding, "roleRef").value("kind", ""), "ClusterRole");
  EXPECT_TRUE(member(binding, "subjects").is_null());
  EXPECT_TRUE(member(json::array(), "roleRef").is_null());
  EXPECT_EQ(stringMember(member(binding, "roleRef"), "kind"), "ClusterRole");
  EXPECT_EQ(stringMember(binding, "roleRef"), "");  // not a string
}

}  // namespace
}  // namespace minik8s::api
