// ServiceRulesCache: a partial sync that regenerates only the changed services writes exactly what
// regenerating every service and diffing (changedRulesText) writes, and a full one exactly
// buildProxyRules' document.
#include <gtest/gtest.h>

#include "proxy/service_rules_cache.h"
#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using testing::serviceObject;
using testing::sliceObject;

const RuleOptions kOptions{"10.244.0.0/16"};

// A cluster as the informers hold it, by key; each step changes it and syncs a few keys.
class ServiceRulesCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // "ns/a-b" sorts between "ns/a" and "ns/a:x": the shared chains interleave services' ports.
    services["ns/a"] = serviceObject("ns", "a", "10.96.0.1", {{"x", 80}, {"y", 81}});
    services["ns/a-b"] = serviceObject("ns", "a-b", "10.96.0.2", {{"", 80}});
    services["ns/web"] =
        serviceObject("ns", "web", "10.96.0.3", {{"http", 80, "TCP", 30080}}, "NodePort");
    services["ns/dns"] = serviceObject("ns", "dns", "10.96.0.10", {{"dns", 53, "UDP"}});
    services["ns/sticky"] = serviceObject("ns", "sticky", "10.96.0.4", {{"", 80}});
    services["ns/sticky"]["spec"]["sessionAffinity"] = "ClientIP";
    services["ns/headless"] = serviceObject("ns", "headless", "None", {{"", 80}});
    services["ns/empty"] =
        serviceObject("ns", "empty", "10.96.0.5", {{"", 80, "TCP", 30090}}, "NodePort");
    slices["ns/a-1"] =
        sliceObject("ns", "a-1", "a", {{"10.244.1.1"}, {"10.244.1.2"}}, {{"x", 8080}, {"y", 8081}});
    slices["ns/a-b-1"] = sliceObject("ns", "a-b-1", "a-b", {{"10.244.2.1"}}, {{"", 80}});
    slices["ns/web-1"] = sliceObject("ns", "web-1", "web", {{"10.244.3.1"}}, {{"http", 8080}});
    slices["ns/web-2"] = sliceObject("ns", "web-2", "web", {{"10.244.3.2"}}, {{"http", 8080}});
    slices["ns/dns-1"] = sliceObject("ns", "dns-1", "dns", {{"10.0.0.1"}}, {{"dns", 53, "UDP"}});
    slices["ns/sticky-1"] = sliceObject("ns", "sticky-1", "sticky", {{"10.244.4.1"}}, {{"", 80}});
    applied = build();
    ProxyRules full = cache.prepareFull(list(services), list(slices), {});
    EXPECT_EQ(full.restoreText, applied.restoreText);
    EXPECT_EQ(cache.lastRegenerated(), 7);
    cache.commit();
  }

  static std::vector<json> list(const std::map<std::string, json>& objects) {
    std::vector<json> out;
    for (const auto& [key, obj] : objects) out.push_back(obj);
    return out;
  }
  ProxyRules build() { return buildProxyRules(list(services), list(slices), kOptions, {}); }

  // Syncs `keys` through the cache, checks its document against a whole regeneration's, and
  // returns it.
  std::string sync(const std::set<std::string>& keys) {
    std::map<std::string, ServiceInput> inputs;
    for (const std::string& key : keys) {
      ServiceInput& in = inputs[key];
      if (services.count(key)) in.service = services[key];
      for (const auto& [k, slice] : slices) {
        if (sliceServiceKey(slice) == key) in.slices.push_back(slice);
      }
    }
    std::string text = cache.preparePartial(inputs);
    ProxyRules now = build();
    EXPECT_EQ(text, changedRulesText(now, applied));
    EXPECT_EQ(cache.lastRegenerated(), static_cast<int>(keys.size()));
    cache.commit();
    applied = std::move(now);
    EXPECT_EQ(cache.servicePorts(), applied.servicePorts);
    EXPECT_EQ(cache.endpoints(), applied.endpoints);
    EXPECT_EQ(cache.chainNames(), applied.natChains);
    return text;
  }

  std::map<std::string, json> services, slices;
  ProxyRules applied;
  ServiceRulesCache cache{kOptions};
};

TEST_F(ServiceRulesCacheTest, AnEndpointChangeWritesOnlyThatServicesChains) {
  slices["ns/web-2"] = sliceObject("ns", "web-2", "web", {{"10.244.3.9"}}, {{"http", 8080}});
  std::string text = sync({"ns/web"});
  EXPECT_NE(text.find("10.244.3.9:8080"), std::string::npos);
  EXPECT_NE(text.find("-X " + endpointChainName("ns/web:http", "tcp", "10.244.3.2:8080")),
            std::string::npos);
  EXPECT_EQ(text.find("ns/a"), std::string::npos) << text;
  EXPECT_EQ(text.find(":KUBE-SERVICES"), std::string::npos) << text;
}

TEST_F(ServiceRulesCacheTest, UnchangedServicesWriteNothing) {
  EXPECT_EQ(sync({"ns/a", "ns/dns"}), "");
  EXPECT_EQ(sync({"ns/not-there"}), "");
}

TEST_F(ServiceRulesCacheTest, ADeletedServiceLosesItsChainsAndItsSharedRules) {
  services.erase("ns/a");
  std::string text = sync({"ns/a"});
  EXPECT_NE(text.find("-X " + serviceChainName("ns/a:x", "tcp") + "\n"), std::string::npos);
  EXPECT_NE(text.find("-X " + serviceChainName("ns/a:y", "tcp") + "\n"), std::string::npos);
  EXPECT_NE(text.find(":KUBE-SERVICES - [0:0]\n"), std::string::npos);
  EXPECT_EQ(cache.chainNames().count(serviceChainName("ns/a:x", "tcp")), 0u);
  // Its slices going afterwards changes nothing more.
  slices.erase("ns/a-1");
  EXPECT_EQ(sync({"ns/a"}), "");
}

TEST_F(ServiceRulesCacheTest, SharedChainsKeepTheDocumentsOrderAcrossInterleavedServices) {
  // a's ports lose their endpoints (rejects), come back, a-b's ClusterIP moves, a port is renamed.
  slices.erase("ns/a-1");
  sync({"ns/a"});
  slices["ns/a-1"] = sliceObject("ns", "a-1", "a", {{"10.244.1.1"}}, {{"x", 8080}, {"y", 8081}});
  sync({"ns/a"});
  services["ns/a-b"]["spec"]["clusterIP"] = "10.96.0.22";
  services["ns/a"]["spec"]["ports"][1]["name"] = "z";
  slices["ns/a-1"]["ports"][1]["name"] = "z";
  sync({"ns/a", "ns/a-b"});
  services["ns/empty"]["spec"]["ports"][0]["nodePort"] = 30091;
  services["ns/web"]["spec"]["ports"][0]["nodePort"] = 30081;
  sync({"ns/empty", "ns/web"});
}

TEST_F(ServiceRulesCacheTest, NewServicesAndSlicesMovingBetweenServices) {
  services["ns/new"] = serviceObject("ns", "new", "10.96.0.9", {{"", 80}});
  sync({"ns/new"});
  // web-2 is relabelled to the new service: both services change.
  slices["ns/web-2"] = sliceObject("ns", "web-2", "new", {{"10.244.3.2"}}, {{"", 80}});
  sync({"ns/web", "ns/new"});
  services["ns/sticky"]["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] = 60;
  sync({"ns/sticky"});
}

TEST_F(ServiceRulesCacheTest, ADiscardedSyncLeavesTheAppliedRules) {
  services.erase("ns/web");
  std::map<std::string, ServiceInput> gone{{"ns/web", {}}};
  EXPECT_NE(cache.preparePartial(gone), "");
  cache.discard();
  EXPECT_EQ(cache.chainNames(), applied.natChains);
  // The same change again is still written (against the rules the kernel still has).
  std::string text = sync({"ns/web"});
  EXPECT_NE(text.find("-X " + externalChainName("ns/web:http", "tcp")), std::string::npos);
}

TEST_F(ServiceRulesCacheTest, AFullSyncReplacesEveryServiceAndDeletesStaleChains) {
  services.erase("ns/dns");
  std::set<std::string> existing = applied.natChains;
  existing.insert("KUBE-SVC-LEFTOVERLEFTOVER");
  ProxyRules full = cache.prepareFull(list(services), list(slices), existing);
  EXPECT_EQ(full.restoreText,
            buildProxyRules(list(services), list(slices), kOptions, existing).restoreText);
  EXPECT_NE(full.restoreText.find("-X KUBE-SVC-LEFTOVERLEFTOVER\n"), std::string::npos);
  cache.commit();
  applied = build();
  EXPECT_EQ(cache.chainNames(), applied.natChains);
  slices["ns/web-1"] = sliceObject("ns", "web-1", "web", {}, {{"http", 8080}});
  sync({"ns/web"});
}

}  // namespace
}  // namespace minik8s::proxy
