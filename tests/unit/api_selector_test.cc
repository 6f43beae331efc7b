#include <gtest/gtest.h>

#include "api/field_selector.h"
#include "api/selector.h"

namespace minik8s::api {
namespace {

LabelSelector mustParseSelector(std::string_view s) {
  auto sel = LabelSelector::parse(s);
  EXPECT_TRUE(sel.ok()) << s << ": " << sel.status().message();
  return sel.ok() ? *sel : LabelSelector();
}

const json kWebLabels = {{"app", "web"}, {"tier", "a"}, {"version", "3"}};

TEST(LabelSelectorTest, ParsesEveryOperator) {
  EXPECT_TRUE(mustParseSelector("app=web").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("app==web").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("app=db").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("app!=db").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("app!=web").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("missing!=x").matches(kWebLabels));  // absent key satisfies !=
  EXPECT_TRUE(mustParseSelector("tier in (a,b)").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("tier in (b,c)").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("tier notin (b,c)").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("tier notin (a)").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("missing notin (a)").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("app").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("missing").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("!missing").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("!app").matches(kWebLabels));
  EXPECT_TRUE(mustParseSelector("version>2").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("version<3").matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("app>2").matches(kWebLabels));  // non-integer label never matches
}

TEST(LabelSelectorTest, CommaIsAndAndWhitespaceIsTolerated) {
  auto sel = mustParseSelector("  app = web ,  tier in ( a , b ) , !canary ");
  EXPECT_TRUE(sel.matches(kWebLabels));
  EXPECT_FALSE(sel.matches(json{{"app", "web"}, {"tier", "a"}, {"canary", "true"}}));
  EXPECT_FALSE(sel.matches(json{{"app", "web"}, {"tier", "c"}}));
  EXPECT_EQ(sel.toString(), "app=web,!canary,tier in (a,b)");
}

TEST(LabelSelectorTest, ToStringSortsByKeyAndValues) {
  EXPECT_EQ(mustParseSelector("tier in (b,a),app=web").toString(), "app=web,tier in (a,b)");
  EXPECT_EQ(mustParseSelector("x notin (z,y,y)").toString(), "x notin (y,z)");
  EXPECT_EQ(mustParseSelector("a==b,c!=d,e").toString(), "a==b,c!=d,e");
  EXPECT_EQ(mustParseSelector("").toString(), "");
}

TEST(LabelSelectorTest, EmptyValuesAreAllowed) {
  EXPECT_TRUE(mustParseSelector("app=").matches(json{{"app", ""}}));
  EXPECT_FALSE(mustParseSelector("app=").matches(json{{"app", "x"}}));
  EXPECT_TRUE(mustParseSelector("app in ()").matches(json{{"app", ""}}));
  EXPECT_TRUE(mustParseSelector("app in (a,)").matches(json{{"app", ""}}));
}

TEST(LabelSelectorTest, EmptyMatchesEverythingNullLabels) {
  auto sel = mustParseSelector("");
  EXPECT_TRUE(sel.empty());
  EXPECT_TRUE(sel.matches(nullptr));
  EXPECT_TRUE(sel.matches(kWebLabels));
  EXPECT_FALSE(mustParseSelector("app").matches(nullptr));
  EXPECT_TRUE(mustParseSelector("!app").matches(nullptr));
  EXPECT_TRUE(mustParseSelector("app!=web").matches(nullptr));
}

TEST(LabelSelectorTest, RejectsBadSyntaxAndBadKeys) {
  for (std::string_view bad : {"app=web,", ",app", "app in a", "app in (a", "app=a=b", "!",
                               "app web", "Foo!=x!", "app=(a)", "tier in (a b)"}) {
    auto sel = LabelSelector::parse(bad);
    EXPECT_FALSE(sel.ok()) << bad;
    EXPECT_EQ(sel.status().code(), 400) << bad;
  }
  EXPECT_TRUE(mustParseSelector("app==").matches(json{{"app", ""}}));
  auto badKey = LabelSelector::parse("-app=web");
  ASSERT_FALSE(badKey.ok());
  EXPECT_NE(badKey.status().message().find("key: Invalid value: \"-app\": name part must consist"),
            std::string::npos)
      << badKey.status().message();
  auto badValue = LabelSelector::parse("app=we b");
  EXPECT_FALSE(badValue.ok());
  auto badValue2 = LabelSelector::parse("app=-web");
  ASSERT_FALSE(badValue2.ok());
  EXPECT_NE(badValue2.status().message().find("values[0][app]: Invalid value: \"-web\""),
            std::string::npos)
      << badValue2.status().message();
  EXPECT_FALSE(LabelSelector::parse("version>abc").ok());
  EXPECT_FALSE(LabelSelector::parse(std::string(64, 'a') + "=x").ok());
  EXPECT_FALSE(LabelSelector::parse("Example.com/app=x").ok());  // prefix must be lowercase
  EXPECT_TRUE(LabelSelector::parse("example.com/app=x").ok());
  EXPECT_TRUE(LabelSelector::parse("app.kubernetes.io/name=web_1.x-y").ok());
}

TEST(LabelSelectorTest, FromJsonLabelSelector) {
  json obj = {{"matchLabels", {{"app", "web"}}},
              {"matchExpressions",
               {{{"key", "tier"}, {"operator", "In"}, {"values", {"b", "a"}}},
                {{"key", "canary"}, {"operator", "DoesNotExist"}},
                {{"key", "env"}, {"operator", "NotIn"}, {"values", {"prod"}}},
                {{"key", "app"}, {"operator", "Exists"}}}}};
  auto sel = LabelSelector::fromJson(obj);
  ASSERT_TRUE(sel.ok()) << sel.status().message();
  EXPECT_EQ(sel->toString(), "app=web,app,!canary,env notin (prod),tier in (a,b)");
  EXPECT_TRUE(sel->matches(kWebLabels));
  EXPECT_FALSE(sel->matches(json{{"app", "web"}, {"tier", "a"}, {"env", "prod"}}));

  auto everything = LabelSelector::fromJson(json::object());
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->empty());
  EXPECT_TRUE(everything->matches(kWebLabels));

  auto nothing = LabelSelector::fromJson(nullptr);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->empty());
  EXPECT_FALSE(nothing->matches(kWebLabels));
}

TEST(LabelSelectorTest, FromJsonRejectsBadExpressions) {
  auto badOp = LabelSelector::fromJson(
      json{{"matchExpressions", {{{"key", "a"}, {"operator", "Equals"}, {"values", {"x"}}}}}});
  ASSERT_FALSE(badOp.ok());
  EXPECT_EQ(badOp.status().message(), "\"Equals\" is not a valid label selector operator");
  EXPECT_FALSE(
      LabelSelector::fromJson(json{{"matchExpressions", {{{"key", "a"}, {"operator", "In"}}}}})
          .ok());
  EXPECT_FALSE(
      LabelSelector::fromJson(
          json{{"matchExpressions", {{{"key", "a"}, {"operator", "Exists"}, {"values", {"x"}}}}}})
          .ok());
  EXPECT_FALSE(LabelSelector::fromJson(json{{"matchLabels", {{"a", "b c"}}}}).ok());
}

// ---- field selectors ----

const json kPod = {{"metadata", {{"name", "web-1"}, {"namespace", "default"}}},
                   {"spec", {{"nodeName", "node-1"}, {"restartPolicy", "Always"}}},
                   {"status", {{"phase", "Running"}, {"podIPs", {{{"ip", "10.244.1.5"}}}}}}};

bool podMatches(std::string_view selector, const json& pod = kPod) {
  auto sel = FieldSelector::parse(selector);
  EXPECT_TRUE(sel.ok()) << selector << ": " << sel.status().message();
  auto m = sel->matches("Pod", pod);
  EXPECT_TRUE(m.ok()) << selector << ": " << m.status().message();
  return m.ok() && *m;
}

TEST(FieldSelectorTest, MatchesPodFields) {
  EXPECT_TRUE(podMatches("spec.nodeName=node-1"));
  EXPECT_TRUE(podMatches("spec.nodeName==node-1"));
  EXPECT_FALSE(podMatches("spec.nodeName=node-2"));
  EXPECT_TRUE(podMatches("spec.nodeName!=node-2"));
  EXPECT_TRUE(podMatches("metadata.name=web-1,metadata.namespace=default"));
  EXPECT_FALSE(podMatches("metadata.name=web-1,status.phase!=Running"));
  EXPECT_TRUE(podMatches("status.podIP=10.244.1.5"));
  EXPECT_TRUE(podMatches("spec.schedulerName="));  // missing compares as ""
  EXPECT_FALSE(podMatches("spec.nodeName="));
  EXPECT_TRUE(podMatches("spec.nodeName=", json{{"spec", json::object()}}));
  EXPECT_TRUE(podMatches(""));
}

TEST(FieldSelectorTest, UnsupportedFieldIsBadRequest) {
  auto sel = FieldSelector::parse("spec.containers=x");
  ASSERT_TRUE(sel.ok());
  auto m = sel->matches("Pod", kPod);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), 400);
  EXPECT_EQ(m.status().message(), "field label not supported: spec.containers");
  Status v = FieldSelector::validate("Service", *FieldSelector::parse("spec.nodeName=a"));
  EXPECT_EQ(v.message(), "field label not supported: spec.nodeName");
  EXPECT_TRUE(FieldSelector::validate("Service", *FieldSelector::parse("metadata.name=a")).ok());
  EXPECT_TRUE(FieldSelector::validate("Pod", *FieldSelector::parse("status.phase=a")).ok());
  EXPECT_FALSE(FieldSelector::validate("Node", *FieldSelector::parse("status.phase=a")).ok());
}

TEST(FieldSelectorTest, NonStringFieldsUseGoZeroValues) {
  auto sel = FieldSelector::parse("spec.unschedulable=false");
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(*sel->matches("Node", json{{"metadata", {{"name", "n"}}}}));
  EXPECT_FALSE(*sel->matches("Node", json{{"spec", {{"unschedulable", true}}}}));
  auto replicas = FieldSelector::parse("status.replicas=0");
  EXPECT_TRUE(*replicas->matches("ReplicaSet", json::object()));
  EXPECT_FALSE(*replicas->matches("ReplicaSet", json{{"status", {{"replicas", 3}}}}));
  EXPECT_TRUE(*FieldSelector::parse("status.replicas=3")
                   ->matches("ReplicaSet", json{{"status", {{"replicas", 3}}}}));
}

TEST(FieldSelectorTest, EventAndSecretFields) {
  json event = {{"involvedObject", {{"kind", "Pod"}, {"name", "web-1"}, {"uid", "u1"}}},
                {"reason", "Scheduled"},
                {"type", "Normal"},
                {"reportingComponent", "default-scheduler"}};
  auto sel = FieldSelector::parse(
      "involvedObject.kind=Pod,involvedObject.name=web-1,type=Normal,"
      "source=default-scheduler,reportingComponent=default-scheduler");
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(*sel->matches("Event", event));
  EXPECT_TRUE(*FieldSelector::parse("type=kubernetes.io/tls")
                   ->matches("Secret", json{{"type", "kubernetes.io/tls"}}));
  EXPECT_TRUE(*FieldSelector::parse("status.phase=Active")
                   ->matches("Namespace", json{{"status", {{"phase", "Active"}}}}));
}

TEST(FieldSelectorTest, EscapesAndToString) {
  auto sel = FieldSelector::parse("metadata.name=a\\,b\\=c\\\\d,spec.nodeName!=");
  ASSERT_TRUE(sel.ok()) << sel.status().message();
  ASSERT_EQ(sel->terms().size(), 2u);
  EXPECT_EQ(sel->terms()[0].value, "a,b=c\\d");
  EXPECT_TRUE(sel->terms()[1].notEquals);
  EXPECT_EQ(sel->terms()[1].value, "");
  EXPECT_EQ(sel->toString(), "metadata.name=a\\,b\\=c\\\\d,spec.nodeName!=");
  EXPECT_EQ(FieldSelector::parse("status.phase=Running,metadata.name==x")->toString(),
            "metadata.name=x,status.phase=Running");
  ASSERT_NE(sel->requiredValue("metadata.name"), nullptr);
  EXPECT_EQ(*sel->requiredValue("metadata.name"), "a,b=c\\d");
  EXPECT_EQ(sel->requiredValue("spec.nodeName"), nullptr);
}

TEST(FieldSelectorTest, RejectsBadSyntax) {
  for (std::string_view bad : {"metadata.name", "a=b=c", "a=b\\x", "a=b\\"}) {
    auto sel = FieldSelector::parse(bad);
    EXPECT_FALSE(sel.ok()) << bad;
    EXPECT_EQ(sel.status().code(), 400);
  }
}

}  // namespace
}  // namespace minik8s::api
