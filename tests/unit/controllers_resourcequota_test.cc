// ResourceQuotaController against an in-process API server: status.hard follows spec.hard and
// status.used is recomputed from the objects when quotas appear or change, when objects are
// deleted and when pods turn terminal.
#include <gtest/gtest.h>

#include <thread>

#include "controllers/resourcequota/resource_quota_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class ResourceQuotaControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    quotas = std::make_unique<client::Informer>(*rest, kResourceQuotas);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    configMaps = std::make_unique<client::Informer>(*rest, res::kConfigMaps);
    controller = std::make_unique<ResourceQuotaController>(
        *rest, *quotas,
        std::vector<QuotaMonitor>{{res::kPods, pods.get()}, {res::kConfigMaps, configMaps.get()}});
    for (auto* inf : {quotas.get(), pods.get(), configMaps.get()}) inf->start();
    for (auto* inf : {quotas.get(), pods.get(), configMaps.get()}) {
      ASSERT_TRUE(inf->waitForSync(5s));
    }
    controller->start();
  }
  void TearDown() override {
    controller->stop();
    for (auto* inf : {quotas.get(), pods.get(), configMaps.get()}) inf->stop();
    api.stop();
  }
  bool eventually(const std::function<bool()>& check) {
    for (int i = 0; i < 100; ++i) {
      if (check()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return check();
  }
  void createPod(const std::string& name, const std::string& cpu) {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"containers", json::array({{{"name", "c"},
                                             {"image", "busybox"},
                                             {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}};
    auto r = rest->create(res::kPods, "default", p);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  json status() {
    auto q = rest->get(kResourceQuotas, "default", "compute");
    return q.ok() ? q->value("status", json::object()) : json();
  }

  testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> quotas, pods, configMaps;
  std::unique_ptr<ResourceQuotaController> controller;
};

TEST_F(ResourceQuotaControllerTest, RecalculatesUsedFromTheObjects) {
  createPod("a", "500m");
  createPod("b", "250m");
  createPod("done", "1");
  auto done = rest->get(res::kPods, "default", "done");
  ASSERT_TRUE(done.ok());
  (*done)["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(rest->update(res::kPods, *done, "status").ok());
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}};
  ASSERT_TRUE(rest->create(res::kConfigMaps, "default", cm).ok());

  json quota = {{"apiVersion", "v1"},
                {"kind", "ResourceQuota"},
                {"metadata", {{"name", "compute"}}},
                {"spec",
                 {{"hard",
                   {{"pods", "10"},
                    {"requests.cpu", "4"},
                    {"count/pods", "20"},
                    {"configmaps", "5"},
                    {"count/deployments.apps", "2"}}}}}};
  ASSERT_TRUE(rest->create(kResourceQuotas, "default", quota).ok());
  const json expected = {{"pods", "2"},
                         {"requests.cpu", "750m"},
                         {"count/pods", "3"},
                         {"configmaps", "1"},
                         {"count/deployments.apps", "0"}};
  EXPECT_TRUE(eventually([&] { return status().value("used", json()) == expected; }))
      << status().dump();
  EXPECT_EQ(status()["hard"]["requests.cpu"], "4");

  // A deleted pod gives its share back; so does a pod that finishes.
  ASSERT_TRUE(rest->remove(res::kPods, "default", "a", {{"gracePeriodSeconds", 0}}).ok());
  EXPECT_TRUE(eventually([&] { return status()["used"]["requests.cpu"] == "250m"; }))
      << status().dump();
  auto b = rest->get(res::kPods, "default", "b");
  ASSERT_TRUE(b.ok());
  (*b)["status"]["phase"] = "Failed";
  ASSERT_TRUE(rest->update(res::kPods, *b, "status").ok());
  EXPECT_TRUE(eventually([&] { return status()["used"]["pods"] == "0"; })) << status().dump();
  EXPECT_EQ(status()["used"]["count/pods"], "2");

  // A new hard limit shows in status.hard, with its usage.
  auto q = rest->get(kResourceQuotas, "default", "compute");
  ASSERT_TRUE(q.ok());
  (*q)["spec"]["hard"]["services"] = "3";
  ASSERT_TRUE(rest->update(kResourceQuotas, *q).ok());
  EXPECT_TRUE(eventually([&] { return status()["hard"].contains("services"); })) << status().dump();
  EXPECT_TRUE(status()["used"].contains("services"));
  EXPECT_EQ(status()["hard"]["services"], "3");
}

TEST_F(ResourceQuotaControllerTest, CountsBuiltInAndCustomResourcesByList) {
  const client::Resource crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "crontabs.stable.example.com"}}},
      {"spec",
       {{"group", "stable.example.com"},
        {"scope", "Namespaced"},
        {"names", {{"plural", "crontabs"}, {"singular", "crontab"}, {"kind", "CronTab"}}},
        {"versions", json::array({{{"name", "v1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  ASSERT_TRUE(rest->create(crds, "", crd).ok());
  const client::Resource crontabs{"stable.example.com", "v1", "crontabs", true};
  json ct = {{"apiVersion", "stable.example.com/v1"},
             {"kind", "CronTab"},
             {"metadata", {{"name", "nightly"}}}};
  ASSERT_TRUE(eventually([&] { return rest->create(crontabs, "default", ct).ok(); }));
  json quota = {{"apiVersion", "v1"},
                {"kind", "ResourceQuota"},
                {"metadata", {{"name", "compute"}}},
                {"spec",
                 {{"hard",
                   {{"count/crontabs.stable.example.com", "5"},
                    {"count/deployments.apps", "5"},
                    {"count/widgets.example.org", "5"}}}}}};
  ASSERT_TRUE(rest->create(kResourceQuotas, "default", quota).ok());
  const json expected = {{"count/crontabs.stable.example.com", "1"},
                         {"count/deployments.apps", "0"},
                         {"count/widgets.example.org", "0"}};
  EXPECT_TRUE(eventually([&] { return status().value("used", json()) == expected; }))
      << status().dump();
}

}  // namespace
}  // namespace minik8s::controllers
