// LimitRanger and ResourceQuota admission (apiserver/admission/limit_ranger.h,
// resource_quota_admission.h) on a registry over a fake store: defaults, Kubernetes' refusal
// texts, charging status.used, and concurrent creates racing for the last unit of quota.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "apiserver/admission/limit_ranger.h"
#include "apiserver/admission/resource_quota_admission.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/rbac_escalation.h"
#include "fake_store.h"

namespace minik8s::apiserver::admission {
namespace {

const api::ResourceInfo& core(const char* plural) {
  return *api::Scheme::builtin().byResource("", "v1", plural);
}

json container(const std::string& name, json requests = json::object(),
               json limits = json::object()) {
  json c = {{"name", name}, {"image", "busybox"}};
  if (!requests.empty()) c["resources"]["requests"] = requests;
  if (!limits.empty()) c["resources"]["limits"] = limits;
  return c;
}

json podWithContainers(const std::string& name, json containers) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"spec", {{"containers", containers}}}};
}

class QuotaAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns"}}}};
    ASSERT_TRUE(registry.create(core("namespaces"), "", ns).ok());
  }
  Status admit(auth::AdmissionPlugin& plugin, json& obj, const std::string& resource = "pods",
               const std::string& operation = "CREATE", const json* old = nullptr) {
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = operation == "CREATE" ? "create" : "update";
    ri.version = "v1";
    ri.namespaceName = "ns";
    ri.resource = resource;
    ri.info = &core(resource.c_str());
    auth::UserInfo user{"alice", "", {}, {}};
    auth::AdmissionRequest req{user, ri, operation, old, &obj, false};
    return plugin.admit(req);
  }
  void addLimitRange(json limits) {
    json lr = {{"apiVersion", "v1"},
               {"kind", "LimitRange"},
               {"metadata", {{"name", "limits"}, {"namespace", "ns"}}},
               {"spec", {{"limits", limits}}}};
    auto r = registry.create(core("limitranges"), "ns", lr);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  // A quota as the controller leaves it: status.hard = spec.hard, status.used as given.
  void addQuota(const std::string& name, json hard, json used) {
    json quota = {{"apiVersion", "v1"},
                  {"kind", "ResourceQuota"},
                  {"metadata", {{"name", name}, {"namespace", "ns"}}},
                  {"spec", {{"hard", hard}}}};
    auto r = registry.create(core("resourcequotas"), "ns", quota);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    (*r)["status"] = {{"hard", hard}, {"used", used}};
    auto s = registry.update(core("resourcequotas"), "ns", name, *r, "status");
    ASSERT_TRUE(s.ok()) << s.status().toString();
  }
  json used(const std::string& name) {
    auto q = registry.get(core("resourcequotas"), "ns", name);
    return q.ok() ? (*q)["status"]["used"] : json();
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  LimitRanger limitRanger{registry};
  ResourceQuotaAdmission quota{registry};
};

TEST_F(QuotaAdmissionTest, LimitRangerGivesContainersDefaults) {
  addLimitRange(json::array({{{"type", "Container"},
                              {"default", {{"cpu", "500m"}, {"memory", "128Mi"}}},
                              {"defaultRequest", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}));
  json p = podWithContainers(
      "web", json::array({container("app"), container("side", json::object(), {{"cpu", "200m"}})}));
  ASSERT_TRUE(admit(limitRanger, p).ok());
  const json& app = p["spec"]["containers"][0]["resources"];
  EXPECT_EQ(app["requests"], (json{{"cpu", "100m"}, {"memory", "64Mi"}}));
  EXPECT_EQ(app["limits"], (json{{"cpu", "500m"}, {"memory", "128Mi"}}));
  // A limit alone is also the request, as the API defaults it.
  const json& side = p["spec"]["containers"][1]["resources"];
  EXPECT_EQ(side["requests"], (json{{"cpu", "200m"}, {"memory", "64Mi"}}));
  EXPECT_EQ(side["limits"], (json{{"cpu", "200m"}, {"memory", "128Mi"}}));
  EXPECT_EQ(p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for "
            "container app; memory request for container side; memory limit for container side");
}

TEST_F(QuotaAdmissionTest, LimitRangerRefusesWithKubernetesWords) {
  addLimitRange(json::array({{{"type", "Container"},
                              {"max", {{"cpu", "500m"}}},
                              {"min", {{"memory", "16Mi"}}},
                              {"maxLimitRequestRatio", {{"memory", "2"}}}},
                             {{"type", "Pod"}, {"max", {{"memory", "1Gi"}}}}}));
  json big = podWithContainers(
      "x", json::array({container("c", {{"memory", "32Mi"}}, {{"cpu", "1"}, {"memory", "64Mi"}})}));
  Status s = admit(limitRanger, big);
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.message(),
            "pods \"x\" is forbidden: maximum cpu usage per Container is 500m, but "
            "limit is 1");
  json ratio =
      podWithContainers("y", json::array({container("c", {{"cpu", "100m"}, {"memory", "16Mi"}},
                                                    {{"cpu", "200m"}, {"memory", "64Mi"}})}));
  EXPECT_EQ(admit(limitRanger, ratio).message(),
            "pods \"y\" is forbidden: memory max limit to request ratio per Container is 2, but "
            "provided ratio is 4.000000");
  json ok =
      podWithContainers("fine", json::array({container("c", {{"cpu", "100m"}, {"memory", "32Mi"}},
                                                       {{"cpu", "200m"}, {"memory", "64Mi"}})}));
  EXPECT_TRUE(admit(limitRanger, ok).ok());
}

TEST_F(QuotaAdmissionTest, LimitRangerChecksClaimStorage) {
  addLimitRange(json::array({{{"type", "PersistentVolumeClaim"}, {"max", {{"storage", "2Gi"}}}}}));
  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", "data"}, {"namespace", "ns"}}},
              {"spec", {{"resources", {{"requests", {{"storage", "5Gi"}}}}}}}};
  EXPECT_EQ(admit(limitRanger, pvc, "persistentvolumeclaims").message(),
            "persistentvolumeclaims \"data\" is forbidden: maximum storage usage per "
            "PersistentVolumeClaim is 2Gi, but limit is 5Gi");
}

TEST_F(QuotaAdmissionTest, QuotaRefusesBeyondHardAndChargesWhatItAdmits) {
  addQuota("compute", {{"pods", "2"}, {"requests.cpu", "1200m"}},
           {{"pods", "0"}, {"requests.cpu", "0"}});
  json a = podWithContainers("a", json::array({container("c", {{"cpu", "500m"}})}));
  ASSERT_TRUE(admit(quota, a).ok());
  EXPECT_EQ(used("compute"), (json{{"pods", "1"}, {"requests.cpu", "500m"}}));
  json b = podWithContainers("b", json::array({container("c", {{"cpu", "500m"}})}));
  ASSERT_TRUE(admit(quota, b).ok());
  EXPECT_EQ(used("compute"), (json{{"pods", "2"}, {"requests.cpu", "1"}}));
  json c = podWithContainers("c", json::array({container("c", {{"cpu", "500m"}})}));
  Status s = admit(quota, c);
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(
      s.message(),
      "pods \"c\" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, "
      "used: pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1200m");
  EXPECT_EQ(used("compute"), (json{{"pods", "2"}, {"requests.cpu", "1"}}));
}

TEST_F(QuotaAdmissionTest, QuotaNeedsRequestsItTracksAndKnownStatus) {
  addQuota("compute", {{"limits.cpu", "2"}, {"requests.memory", "1Gi"}},
           {{"limits.cpu", "0"}, {"requests.memory", "0"}});
  json p = podWithContainers("x", json::array({container("c", {{"cpu", "1"}})}));
  EXPECT_EQ(admit(quota, p).message(),
            "pods \"x\" is forbidden: failed quota: compute: must specify limits.cpu for: c; "
            "requests.memory for: c");
  json cm = {{"metadata", {{"name", "cfg"}, {"namespace", "ns"}}}};
  EXPECT_TRUE(admit(quota, cm, "configmaps").ok());  // not tracked by this quota
  addQuota("objects", {{"configmaps", "1"}}, json::object());
  EXPECT_EQ(admit(quota, cm, "configmaps").message(),
            "configmaps \"cfg\" is forbidden: status unknown for quota: objects, resources: "
            "configmaps");
}

TEST_F(QuotaAdmissionTest, QuotaCountsObjectsAndServiceUpdates) {
  addQuota("objects", {{"count/configmaps", "1"}, {"services.nodeports", "1"}, {"services", "5"}},
           {{"count/configmaps", "0"}, {"services.nodeports", "0"}, {"services", "0"}});
  json cm = {{"metadata", {{"name", "one"}, {"namespace", "ns"}}}};
  ASSERT_TRUE(admit(quota, cm, "configmaps").ok());
  cm["metadata"]["name"] = "two";
  EXPECT_EQ(admit(quota, cm, "configmaps").message(),
            "configmaps \"two\" is forbidden: exceeded quota: objects, requested: "
            "count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1");
  json svc = {{"metadata", {{"name", "web"}, {"namespace", "ns"}, {"resourceVersion", "5"}}},
              {"spec", {{"type", "ClusterIP"}, {"ports", json::array({{{"port", 80}}})}}}};
  json nodePort = svc;
  nodePort["spec"]["type"] = "NodePort";
  nodePort["spec"]["ports"].push_back({{"port", 443}});
  EXPECT_EQ(admit(quota, nodePort, "services", "UPDATE", &svc).message(),
            "services \"web\" is forbidden: exceeded quota: objects, requested: "
            "services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1");
  json other = svc;
  other["spec"]["selector"] = {{"app", "web"}};
  EXPECT_TRUE(admit(quota, other, "services", "UPDATE", &svc).ok());  // nothing grows
  EXPECT_EQ(used("objects")["services"], "0");
}

TEST_F(QuotaAdmissionTest, TerminalPodsAndScopes) {
  addQuota("best-effort", {{"pods", "1"}}, {{"pods", "0"}});
  auto r = registry.get(core("resourcequotas"), "ns", "best-effort");
  ASSERT_TRUE(r.ok());
  (*r)["spec"]["scopes"] = {"BestEffort"};
  ASSERT_TRUE(registry.update(core("resourcequotas"), "ns", "best-effort", *r).ok());
  json burstable = podWithContainers("b", json::array({container("c", {{"cpu", "1"}})}));
  ASSERT_TRUE(admit(quota, burstable).ok());  // not selected
  EXPECT_EQ(used("best-effort"), (json{{"pods", "0"}}));
  json be = podWithContainers("e", json::array({container("c")}));
  ASSERT_TRUE(admit(quota, be).ok());
  EXPECT_EQ(used("best-effort"), (json{{"pods", "1"}}));
}

TEST_F(QuotaAdmissionTest, WritesTheRegistryWillRefuseAreNotCharged) {
  addQuota("pods", {{"pods", "5"}}, {{"pods", "0"}});
  json invalid = podWithContainers("bad", json::array({{{"name", "c"}}}));  // no image
  EXPECT_TRUE(admit(quota, invalid).ok());
  EXPECT_EQ(used("pods"), (json{{"pods", "0"}}));
  json p = podWithContainers("exists", json::array({container("c")}));
  ASSERT_TRUE(registry.create(core("pods"), "ns", p).ok());
  EXPECT_TRUE(admit(quota, p).ok());  // the registry answers AlreadyExists
  EXPECT_EQ(used("pods"), (json{{"pods", "0"}}));
  json generated = podWithContainers("", json::array({container("c")}));
  generated["metadata"].erase("name");
  generated["metadata"].erase("namespace");  // from the URL
  generated["metadata"]["generateName"] = "web-";
  EXPECT_TRUE(admit(quota, generated).ok());
  EXPECT_EQ(used("pods"), (json{{"pods", "1"}}));
}

TEST_F(QuotaAdmissionTest, ConcurrentCreatesNeverBothTakeTheLastUnit) {
  addQuota("pods", {{"pods", "5"}}, {{"pods", "0"}});
  std::atomic<int> admitted{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) {
        json p = podWithContainers("p" + std::to_string(t) + "-" + std::to_string(i),
                                   json::array({container("c")}));
        Status s = admit(quota, p);
        (s.ok() ? admitted : refused)++;
        if (!s.ok()) {
          EXPECT_NE(s.message().find("exceeded quota: pods"), std::string::npos) << s.message();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 5);
  EXPECT_EQ(refused.load(), 19);
  EXPECT_EQ(used("pods"), (json{{"pods", "5"}}));
}

TEST(ChargeQuotasTest, NoQuotaStatusLimitsNothing) {
  json quota = {{"metadata", {{"name", "q"}}}, {"spec", {{"hard", {{"pods", "0"}}}}}};
  auto charge =
      chargeQuotas({quota}, "", "pods", podWithContainers("p", json::array({container("c")})),
                   nullptr, std::chrono::system_clock::now());
  EXPECT_EQ(charge.refusal, "");
  EXPECT_TRUE(charge.quotas.empty());
}

}  // namespace
}  // namespace minik8s::apiserver::admission

namespace minik8s::apiserver::auth {
namespace {

// Whether the bootstrap ClusterRole `role` allows `verb` on core `resource`.
bool allows(const std::string& role, const std::string& verb, const std::string& resource) {
  for (const auto& r : bootstrapClusterRoles()) {
    if (r["metadata"]["name"] != role) continue;
    for (const auto& rule : r.value("rules", json::array())) {
      PolicyRule want =
          PolicyRule::fromJson({{"verbs", {verb}}, {"apiGroups", {""}}, {"resources", {resource}}});
      if (ruleCovers(PolicyRule::fromJson(rule), want)) return true;
    }
  }
  return false;
}

TEST(QuotaPolicyTest, NamespaceRolesReadButNeverWriteQuotasAndLimitRanges) {
  for (const char* role : {"view", "edit", "admin"}) {
    for (const char* resource : {"resourcequotas", "resourcequotas/status", "limitranges"}) {
      EXPECT_TRUE(allows(role, "list", resource)) << role << " " << resource;
      EXPECT_FALSE(allows(role, "update", resource)) << role << " " << resource;
      EXPECT_FALSE(allows(role, "create", resource)) << role << " " << resource;
    }
  }
}

}  // namespace
}  // namespace minik8s::apiserver::auth
