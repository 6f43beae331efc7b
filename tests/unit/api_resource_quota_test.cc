// Quota arithmetic (api/resource_quota.h), the ResourceQuota and LimitRange kinds' defaults,
// validation and table rows.
#include <gtest/gtest.h>

#include "api/defaults.h"
#include "api/resource_quota.h"
#include "api/scheme.h"
#include "api/table.h"
#include "api/validation.h"
#include "test_times.h"
#include "validation_messages.h"

namespace minik8s::api {
namespace {

using testing::kStartedAt;

Quantity q(const char* text) { return *Quantity::parse(text); }

json container(const std::string& name, json requests, json limits = json::object()) {
  json c = {{"name", name}, {"image", "busybox"}};
  if (!requests.empty()) c["resources"]["requests"] = requests;
  if (!limits.empty()) c["resources"]["limits"] = limits;
  return c;
}

json pod(json containers, json initContainers = json::array()) {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", "p"}, {"namespace", "ns"}}},
            {"spec", {{"containers", containers}}}};
  if (!initContainers.empty()) p["spec"]["initContainers"] = initContainers;
  return p;
}

TEST(QuotaListsTest, AddSubtractCompareAndPrint) {
  ResourceList a = {{"requests.cpu", q("500m")}, {"requests.memory", q("128Mi")}};
  ResourceList b = {{"requests.cpu", q("700m")}, {"pods", q("1")}};
  ResourceList sum = addLists(a, b);
  EXPECT_EQ(prettyPrint(sum), "pods=1,requests.cpu=1200m,requests.memory=128Mi");
  EXPECT_EQ(prettyPrint(addLists({{"requests.memory", q("0")}}, {{"requests.memory", q("64Mi")}})),
            "requests.memory=64Mi");
  EXPECT_EQ(prettyPrint(addLists({{"requests.cpu", q("500m")}}, {{"requests.cpu", q("500m")}})),
            "requests.cpu=1");
  EXPECT_EQ(prettyPrint(subtractNonNegative(a, b)), "requests.cpu=0,requests.memory=128Mi");
  std::vector<std::string> exceeded;
  EXPECT_FALSE(lessThanOrEqual(sum, {{"requests.cpu", q("1")}, {"pods", q("5")}}, &exceeded));
  EXPECT_EQ(exceeded, (std::vector<std::string>{"requests.cpu"}));
  EXPECT_TRUE(lessThanOrEqual(a, {{"limits.cpu", q("1")}}));
  EXPECT_EQ(prettyPrint(maskList(sum, {"pods", "limits.cpu"})), "pods=1");
  EXPECT_EQ(toJson(sum)["requests.memory"], "128Mi");
}

TEST(QuotaUsageTest, PodRequestsLimitsAndInitContainers) {
  json p = pod(json::array({container("a", {{"cpu", "250m"}, {"memory", "64Mi"}},
                                      {{"cpu", "500m"}, {"memory", "128Mi"}}),
                            container("b", json::object(), {{"cpu", "1"}})}),
               json::array({container("init", {{"cpu", "2"}})}));
  ResourceList usage = objectUsage("", "pods", p, kStartedAt);
  EXPECT_EQ(prettyPrint(usage),
            "count/pods=1,cpu=2,limits.cpu=1500m,limits.memory=128Mi,memory=64Mi,pods=1,"
            "requests.cpu=2,requests.memory=64Mi");
  // A sidecar (restartPolicy Always) adds to the containers.
  json sidecar = container("proxy", {{"cpu", "100m"}});
  sidecar["restartPolicy"] = "Always";
  json s = pod(json::array({container("a", {{"cpu", "250m"}})}), json::array({sidecar}));
  EXPECT_EQ(podRequests(s).at("cpu").toString(), "350m");
}

TEST(QuotaUsageTest, TerminalPodsOnlyCountAsObjects) {
  json p = pod(json::array({container("a", {{"cpu", "1"}})}));
  p["status"]["phase"] = "Succeeded";
  EXPECT_EQ(prettyPrint(objectUsage("", "pods", p, kStartedAt)), "count/pods=1");
  p["status"]["phase"] = "Running";
  EXPECT_TRUE(podCountsForQuota(p, kStartedAt));
  p["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z";
  p["metadata"]["deletionGracePeriodSeconds"] = 30;
  EXPECT_FALSE(podCountsForQuota(p, kStartedAt));  // stuck terminating
}

TEST(QuotaUsageTest, ServicesClaimsAndObjectCounts) {
  json svc = {
      {"spec", {{"type", "NodePort"}, {"ports", json::array({{{"port", 80}}, {{"port", 443}}})}}}};
  EXPECT_EQ(prettyPrint(objectUsage("", "services", svc, kStartedAt)),
            "count/services=1,services=1,services.nodeports=2");
  svc["spec"]["type"] = "LoadBalancer";
  EXPECT_EQ(objectUsage("", "services", svc, kStartedAt).at("services.loadbalancers").toString(),
            "1");
  json pvc = {
      {"spec",
       {{"storageClassName", "fast"}, {"resources", {{"requests", {{"storage", "2Gi"}}}}}}}};
  EXPECT_EQ(prettyPrint(objectUsage("", "persistentvolumeclaims", pvc, kStartedAt)),
            "count/persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/"
            "persistentvolumeclaims=1,fast.storageclass.storage.k8s.io/requests.storage=2Gi,"
            "persistentvolumeclaims=1,requests.storage=2Gi");
  EXPECT_EQ(prettyPrint(objectUsage("apps", "deployments", json::object(), kStartedAt)),
            "count/deployments.apps=1");
  EXPECT_EQ(prettyPrint(objectUsage("", "configmaps", json::object(), kStartedAt)),
            "configmaps=1,count/configmaps=1");
  EXPECT_TRUE(quotaTracks("", "pods", "requests.cpu"));
  EXPECT_TRUE(quotaTracks("", "pods", "count/pods"));
  EXPECT_FALSE(quotaTracks("", "pods", "requests.storage"));
  EXPECT_TRUE(quotaTracks("", "persistentvolumeclaims", "requests.storage"));
  EXPECT_TRUE(quotaTracks("apps", "deployments", "count/deployments.apps"));
  EXPECT_FALSE(quotaTracks("apps", "deployments", "pods"));
  EXPECT_EQ(countedResource("count/deployments.apps"),
            (std::pair<std::string, std::string>{"apps", "deployments"}));
  EXPECT_EQ(countedResource("count/pods"), (std::pair<std::string, std::string>{"", "pods"}));
}

TEST(QuotaUsageTest, PodConstraintsNameTheContainers) {
  json p = pod(json::array({container("a", {{"cpu", "1"}}), container("b", json::object())}));
  EXPECT_EQ(podQuotaConstraints({"pods"}, p), "");
  EXPECT_EQ(podQuotaConstraints({"requests.cpu", "limits.cpu", "limits.memory"}, p),
            "must specify limits.cpu for: a,b; limits.memory for: a,b; requests.cpu for: b");
}

TEST(QuotaUsageTest, Scopes) {
  json quota = {{"spec", {{"scopes", {"BestEffort"}}}}};
  json bestEffort = pod(json::array({container("a", json::object())}));
  json burstable = pod(json::array({container("a", {{"cpu", "1"}})}));
  EXPECT_TRUE(quotaScopesMatch(quota, "", "pods", bestEffort));
  EXPECT_FALSE(quotaScopesMatch(quota, "", "pods", burstable));
  EXPECT_FALSE(quotaScopesMatch(quota, "", "services", json::object()));
  json pc = {{"spec",
              {{"scopeSelector",
                {{"matchExpressions", json::array({{{"scopeName", "PriorityClass"},
                                                    {"operator", "In"},
                                                    {"values", {"high"}}}})}}}}}};
  burstable["spec"]["priorityClassName"] = "high";
  EXPECT_TRUE(quotaScopesMatch(pc, "", "pods", burstable));
  EXPECT_FALSE(quotaScopesMatch(pc, "", "pods", bestEffort));
  EXPECT_TRUE(quotaScopesMatch(json::object(), "", "services", json::object()));
}

const ResourceInfo& info(const char* plural) {
  return *Scheme::builtin().byResource("", "v1", plural);
}

using testing::messages;

TEST(QuotaKindsTest, SchemeNamesAsKubernetes) {
  EXPECT_EQ(info("resourcequotas").shortNames, (std::vector<std::string>{"quota"}));
  EXPECT_TRUE(info("resourcequotas").hasStatus());
  EXPECT_EQ(info("limitranges").shortNames, (std::vector<std::string>{"limits"}));
  EXPECT_EQ(info("limitranges").kind, "LimitRange");
}

TEST(QuotaKindsTest, ResourceQuotaValidation) {
  json quota = {
      {"apiVersion", "v1"},
      {"kind", "ResourceQuota"},
      {"metadata", {{"name", "compute"}, {"namespace", "ns"}}},
      {"spec",
       {{"hard", {{"pods", "2"}, {"requests.cpu", "1"}, {"count/deployments.apps", "3"}}}}}};
  EXPECT_TRUE(validate(info("resourcequotas"), quota, nullptr).empty());
  quota["spec"]["hard"]["bogus"] = "1";
  quota["spec"]["hard"]["limits.memory"] = "-1";
  quota["spec"]["hard"]["pods"] = "1500m";
  quota["spec"]["scopes"] = {"Sometimes"};
  EXPECT_EQ(messages(validate(info("resourcequotas"), quota, nullptr)),
            "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource for quota\n"
            "spec.hard[limits.memory]: Invalid value: \"-1\": must be greater than or equal to 0\n"
            "spec.hard[pods]: Invalid value: \"1500m\": must be an integer\n"
            "spec.scopes[0]: Unsupported value: \"Sometimes\": supported values: "
            "\"Terminating\", \"NotTerminating\", \"BestEffort\", \"NotBestEffort\", "
            "\"PriorityClass\", \"CrossNamespacePodAffinity\"\n");
}

TEST(QuotaKindsTest, LimitRangeDefaultsAndValidation) {
  json lr = {{"apiVersion", "v1"},
             {"kind", "LimitRange"},
             {"metadata", {{"name", "limits"}, {"namespace", "ns"}}},
             {"spec",
              {{"limits", json::array({{{"type", "Container"},
                                        {"max", {{"cpu", "1"}}},
                                        {"min", {{"memory", "32Mi"}}},
                                        {"default", {{"memory", "256Mi"}}}}})}}}};
  applyDefaults(info("limitranges"), lr);
  const json& item = lr["spec"]["limits"][0];
  EXPECT_EQ(item["default"], (json{{"cpu", "1"}, {"memory", "256Mi"}}));
  EXPECT_EQ(item["defaultRequest"], (json{{"cpu", "1"}, {"memory", "256Mi"}}));
  EXPECT_TRUE(validate(info("limitranges"), lr, nullptr).empty());
  lr["spec"]["limits"][0]["defaultRequest"]["cpu"] = "2";
  lr["spec"]["limits"][0]["min"]["cpu"] = "3";
  lr["spec"]["limits"].push_back({{"type", "Pod"}, {"default", {{"cpu", "1"}}}});
  lr["spec"]["limits"].push_back({{"type", "Pod"}, {"maxLimitRequestRatio", {{"cpu", "500m"}}}});
  EXPECT_EQ(
      messages(validate(info("limitranges"), lr, nullptr)),
      "spec.limits[0].min[cpu]: Invalid value: \"3\": min value 3 is greater than max value 1\n"
      "spec.limits[0].defaultRequest[cpu]: Invalid value: \"2\": min value 3 is greater than "
      "default request value 2\n"
      "spec.limits[0].defaultRequest[cpu]: Invalid value: \"2\": default request value 2 is "
      "greater than max value 1\n"
      "spec.limits[0].defaultRequest[cpu]: Invalid value: \"2\": default request value 2 is "
      "greater than default limit value 1\n"
      "spec.limits[0].default[cpu]: Invalid value: \"1\": min value 3 is greater than "
      "default value 1\n"
      "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'\n"
      "spec.limits[2].type: Duplicate value: \"Pod\"\n"
      "spec.limits[2].maxLimitRequestRatio[cpu]: Invalid value: \"500m\": ratio 500m is less "
      "than 1\n");
}

TEST(QuotaKindsTest, TableRowsAsKubectl) {
  json quota = {{"metadata", {{"name", "compute"}, {"creationTimestamp", "2020-01-01T00:00:00Z"}}},
                {"status",
                 {{"hard", {{"pods", "2"}, {"requests.cpu", "1200m"}, {"limits.memory", "1Gi"}}},
                  {"used", {{"pods", "1"}, {"requests.cpu", "0.5"}}}}}};
  json cells = tableCells("ResourceQuota", quota, kStartedAt);
  EXPECT_EQ(cells[0], "compute");
  EXPECT_EQ(cells[2], "pods: 1/2, requests.cpu: 500m/1200m");
  EXPECT_EQ(cells[3], "limits.memory: 0/1Gi");
  std::vector<std::string> columns;
  for (const auto& c : tableColumns("ResourceQuota")) columns.push_back(c.name);
  EXPECT_EQ(columns, (std::vector<std::string>{"Name", "Age", "Request", "Limit"}));
  columns.clear();
  for (const auto& c : tableColumns("LimitRange")) columns.push_back(c.name);
  EXPECT_EQ(columns, (std::vector<std::string>{"Name", "Created At"}));
  json lr = {{"metadata", {{"name", "limits"}, {"creationTimestamp", "2020-01-01T00:00:00Z"}}}};
  EXPECT_EQ(tableCells("LimitRange", lr, kStartedAt),
            json::array({"limits", "2020-01-01T00:00:00Z"}));
}

}  // namespace
}  // namespace minik8s::api
