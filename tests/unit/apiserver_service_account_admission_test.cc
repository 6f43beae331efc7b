#include <gtest/gtest.h>

#include "apiserver/auth/service_account_admission.h"
#include "fake_store.h"

namespace minik8s::apiserver::auth {
namespace {

class ServiceAccountAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    create("namespaces", "", {{"metadata", {{"name", "team"}}}});
    create("serviceaccounts", "team", {{"metadata", {{"name", "default"}}}});
  }
  const api::ResourceInfo& res(const std::string& plural) {
    return *api::Scheme::builtin().byResource("", "v1", plural);
  }
  void create(const std::string& plural, const std::string& ns, json obj) {
    auto r = registry.create(res(plural), ns, std::move(obj));
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  static json pod(json spec) {
    if (!spec.contains("containers")) {
      spec["containers"] = {{{"name", "app"}, {"image", "busybox"}}};
    }
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", "web"}, {"namespace", "team"}}},
            {"spec", spec}};
  }
  Status admit(json& obj, const std::string& operation = "CREATE",
               const std::string& resource = "pods") {
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = "create";
    ri.version = "v1";
    ri.namespaceName = "team";
    ri.resource = resource;
    UserInfo user{"alice", "", {}, {}};
    AdmissionRequest req{user, ri, operation, nullptr, &obj, false};
    return plugin.admit(req);
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  ServiceAccountAdmission plugin{registry, std::chrono::milliseconds(0),
                                 [] { return std::string("x7k2q"); }};
};

TEST_F(ServiceAccountAdmissionTest, DefaultsAccountAndMountsApiAccessVolume) {
  json p = pod({{"initContainers", {{{"name", "init"}, {"image", "busybox"}}}}});
  ASSERT_TRUE(admit(p).ok());
  EXPECT_EQ(p["spec"]["serviceAccountName"], "default");
  EXPECT_EQ(p["spec"]["serviceAccount"], "default");
  json wantVolume = json::parse(R"({
    "name": "kube-api-access-x7k2q",
    "projected": {
      "defaultMode": 420,
      "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1",
                                                 "fieldPath": "metadata.namespace"}}]}}
      ]
    }})");
  EXPECT_EQ(p["spec"]["volumes"], json::array({wantVolume}));
  json wantMount = {{"name", "kube-api-access-x7k2q"},
                    {"readOnly", true},
                    {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}};
  EXPECT_EQ(p["spec"]["containers"][0]["volumeMounts"], json::array({wantMount}));
  EXPECT_EQ(p["spec"]["initContainers"][0]["volumeMounts"], json::array({wantMount}));
  // The admitted pod passes the registry's validation.
  auto stored = registry.create(res("pods"), "team", p);
  EXPECT_TRUE(stored.ok()) << stored.status().toString();
}

TEST_F(ServiceAccountAdmissionTest, MissingAccountIsForbidden) {
  json p = pod({{"serviceAccountName", "robot"}});
  Status s = admit(p);
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.reason(), "Forbidden");
  EXPECT_EQ(s.message(),
            "pods \"web\" is forbidden: error looking up service account team/robot: "
            "serviceaccount \"robot\" not found");
  // The deprecated field is honoured.
  json q = pod({{"serviceAccount", "robot"}});
  EXPECT_EQ(admit(q).code(), 403);
  create("serviceaccounts", "team", {{"metadata", {{"name", "robot"}}}});
  ASSERT_TRUE(admit(q).ok());
  EXPECT_EQ(q["spec"]["serviceAccountName"], "robot");
}

TEST_F(ServiceAccountAdmissionTest, MissingDefaultAccountIsForbiddenToo) {
  create("namespaces", "", {{"metadata", {{"name", "fresh"}}}});
  json p = pod({});
  p["metadata"]["namespace"] = "fresh";
  RequestInfo ri;
  ri.resource = "pods";
  ri.namespaceName = "fresh";
  UserInfo user;
  AdmissionRequest req{user, ri, "CREATE", nullptr, &p, false};
  EXPECT_EQ(plugin.admit(req).code(), 403);
}

TEST_F(ServiceAccountAdmissionTest, AutomountFalseOnPodOrAccount) {
  json p = pod({{"automountServiceAccountToken", false}});
  ASSERT_TRUE(admit(p).ok());
  EXPECT_FALSE(p["spec"].contains("volumes"));
  EXPECT_FALSE(p["spec"]["containers"][0].contains("volumeMounts"));

  create("serviceaccounts", "team",
         {{"metadata", {{"name", "quiet"}}}, {"automountServiceAccountToken", false}});
  json q = pod({{"serviceAccountName", "quiet"}});
  ASSERT_TRUE(admit(q).ok());
  EXPECT_FALSE(q["spec"].contains("volumes"));
  // The pod's true wins over the account's false.
  json r = pod({{"serviceAccountName", "quiet"}, {"automountServiceAccountToken", true}});
  ASSERT_TRUE(admit(r).ok());
  EXPECT_EQ(r["spec"]["volumes"].size(), 1u);
}

TEST_F(ServiceAccountAdmissionTest, ContainersWithTheirOwnMountAreLeftAlone) {
  json own = {{"name", "mine"}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}};
  json p = pod({{"containers",
                 {{{"name", "a"}, {"image", "busybox"}, {"volumeMounts", {own}}},
                  {{"name", "b"}, {"image", "busybox"}}}},
                {"volumes", {{{"name", "mine"}, {"emptyDir", json::object()}}}}});
  ASSERT_TRUE(admit(p).ok());
  EXPECT_EQ(p["spec"]["containers"][0]["volumeMounts"], json::array({own}));
  ASSERT_EQ(p["spec"]["containers"][1]["volumeMounts"].size(), 1u);
  EXPECT_EQ(p["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(p["spec"]["volumes"][1]["name"], "kube-api-access-x7k2q");

  // Every container has its own: no volume added.
  json q = pod({{"containers", {{{"name", "a"}, {"image", "busybox"}, {"volumeMounts", {own}}}}},
                {"volumes", {{{"name", "mine"}, {"emptyDir", json::object()}}}}});
  ASSERT_TRUE(admit(q).ok());
  EXPECT_EQ(q["spec"]["volumes"].size(), 1u);
}

TEST_F(ServiceAccountAdmissionTest, OtherRequestsPassUntouched) {
  json p = pod({{"serviceAccountName", "robot"}});
  const json before = p;
  EXPECT_TRUE(admit(p, "UPDATE").ok());
  EXPECT_TRUE(admit(p, "CREATE", "configmaps").ok());
  EXPECT_EQ(p, before);
  json mirror = pod({});
  mirror["metadata"]["annotations"] = {{"kubernetes.io/config.mirror", "x"}};
  const json mirrorBefore = mirror;
  EXPECT_TRUE(admit(mirror).ok());
  EXPECT_EQ(mirror, mirrorBefore);
}

TEST_F(ServiceAccountAdmissionTest, VolumeNameUsesRandomLowercaseSuffix) {
  ServiceAccountAdmission random(registry, std::chrono::milliseconds(0));
  json p = pod({});
  RequestInfo ri;
  ri.resource = "pods";
  ri.namespaceName = "team";
  UserInfo user;
  AdmissionRequest req{user, ri, "CREATE", nullptr, &p, false};
  ASSERT_TRUE(random.admit(req).ok());
  std::string name = p["spec"]["volumes"][0]["name"];
  ASSERT_EQ(name.size(), std::string("kube-api-access-").size() + 5);
  for (char c : name.substr(16)) EXPECT_TRUE(std::islower(c) || std::isdigit(c)) << name;
}

}  // namespace
}  // namespace minik8s::apiserver::auth
