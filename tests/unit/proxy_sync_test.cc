// ServiceProxy's sync loop against a fake Iptables and a real in-process API server: when it
// writes, how often, what it does on failure, at start and at cleanup.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "client/rest_client.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "proxy/iptables.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_proxy.h"
#include "proxy_test_objects.h"

namespace minik8s::proxy {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::serviceObject;
using testing::sliceObject;

struct FakeState {
  std::mutex mu;
  std::vector<std::pair<Clock::time_point, std::string>> restores;
  std::vector<std::string> calls;  // "ensure nat PREROUTING", "delete ...", "save nat"
  std::string natSave = "*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n";
  std::string filterSave = "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n";
  int failNextRestores = 0;
};

class FakeIptables : public Iptables {
 public:
  explicit FakeIptables(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}
  Status restore(const std::string& rules) override {
    std::lock_guard lock(s_->mu);
    if (s_->failNextRestores > 0) {
      --s_->failNextRestores;
      s_->calls.push_back("restore failed");
      return Status::Internal("iptables-restore: line 3 failed");
    }
    s_->restores.emplace_back(Clock::now(), rules);
    s_->calls.push_back("restore");
    return Status::Ok();
  }
  Result<std::string> save(const std::string& table) override {
    std::lock_guard lock(s_->mu);
    s_->calls.push_back("save " + table);
    return table == "nat" ? s_->natSave : s_->filterSave;
  }
  Status ensureRule(const std::string& table, const std::string& chain,
                    const std::vector<std::string>& rule) override {
    std::lock_guard lock(s_->mu);
    s_->calls.push_back("ensure " + table + " " + chain + " -j " + rule.back());
    return Status::Ok();
  }
  Status deleteRule(const std::string& table, const std::string& chain,
                    const std::vector<std::string>& rule) override {
    std::lock_guard lock(s_->mu);
    s_->calls.push_back("delete " + table + " " + chain + " -j " + rule.back());
    return Status::Ok();
  }

 private:
  std::shared_ptr<FakeState> s_;
};

using testing::eventually;

class ProxySyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    state = std::make_shared<FakeState>();
  }
  void TearDown() override {
    proxy.reset();
    api.stop();
  }
  void startProxy(std::chrono::milliseconds retry = 1s) {
    ProxyOptions o;
    o.nodeName = "n1";
    o.retryInterval = retry;
    proxy = std::make_unique<ServiceProxy>(*rest, o, std::make_unique<FakeIptables>(state));
    ASSERT_TRUE(proxy->start().ok());
  }
  size_t restoreCount() {
    std::lock_guard lock(state->mu);
    return state->restores.size();
  }
  std::string lastRestore() {
    std::lock_guard lock(state->mu);
    return state->restores.empty() ? "" : state->restores.back().second;
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(state->mu);
    return state->calls;
  }

  minik8s::testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::shared_ptr<FakeState> state;
  std::unique_ptr<ServiceProxy> proxy;
};

TEST_F(ProxySyncTest, StartCreatesChainsThenJumpsThenSyncs) {
  startProxy();
  ASSERT_TRUE(eventually([&] { return restoreCount() >= 2; }));
  auto c = calls();
  std::vector<std::string> expectedStart{
      "restore",  // the fixed chains exist before anything jumps to them
      "ensure nat PREROUTING -j KUBE-SERVICES",
      "ensure nat OUTPUT -j KUBE-SERVICES",
      "ensure nat POSTROUTING -j KUBE-POSTROUTING",
      "ensure filter INPUT -j KUBE-EXTERNAL-SERVICES",
      "ensure filter FORWARD -j KUBE-SERVICES",
      "ensure filter OUTPUT -j KUBE-SERVICES",
      "save nat",
      "restore"};
  ASSERT_GE(c.size(), expectedStart.size());
  EXPECT_EQ(std::vector<std::string>(c.begin(), c.begin() + expectedStart.size()), expectedStart);
}

TEST_F(ProxySyncTest, ChainsLeftByAPreviousRunAreDeletedByTheFirstSync) {
  state->natSave =
      "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-LEFTOVERLEFTOVER - [0:0]\n"
      ":KUBE-SEP-LEFTOVERLEFTOVER - [0:0]\nCOMMIT\n";
  startProxy();
  ASSERT_TRUE(eventually([&] { return restoreCount() >= 2; }));
  std::string doc = lastRestore();
  EXPECT_NE(doc.find("-X KUBE-SVC-LEFTOVERLEFTOVER\n"), std::string::npos);
  EXPECT_NE(doc.find("-X KUBE-SEP-LEFTOVERLEFTOVER\n"), std::string::npos);
  EXPECT_EQ(doc.find("-X KUBE-SERVICES"), std::string::npos);
}

TEST_F(ProxySyncTest, BurstsOfChangesAreCoalescedAndNeverCloserThanTheMinimumInterval) {
  startProxy();
  ASSERT_TRUE(eventually([&] { return restoreCount() >= 2; }));
  for (int i = 0; i < 40; ++i) {
    std::string name = "svc" + std::to_string(i);
    ASSERT_TRUE(
        rest->create(client::resources::kServices, "default",
                     serviceObject("default", name, "10.96.1." + std::to_string(i + 1), {{"", 80}}))
            .ok());
  }
  ASSERT_TRUE(eventually(
      [&] { return lastRestore().find("default/svc39 has no endpoints") != std::string::npos; }));
  std::lock_guard lock(state->mu);
  EXPECT_LT(state->restores.size(), 40u);
  for (size_t i = 2; i < state->restores.size(); ++i) {
    EXPECT_GE(state->restores[i].first - state->restores[i - 1].first, 95ms) << i;
  }
}

TEST_F(ProxySyncTest, UnchangedStateIsNotRewritten) {
  startProxy();
  ASSERT_TRUE(eventually([&] { return restoreCount() >= 2; }));
  size_t before = restoreCount();
  // A change that does not alter the rules (a label) wakes the loop but writes nothing.
  ASSERT_TRUE(
      rest->create(client::resources::kConfigMaps, "default",
                   {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}})
          .ok());
  ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                           serviceObject("default", "a", "None", {{"", 80}}))
                  .ok());
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(restoreCount(), before);
}

TEST_F(ProxySyncTest, AFailedRestoreIsRetriedAfterRepairingTheJumps) {
  startProxy(200ms);
  ASSERT_TRUE(eventually([&] { return restoreCount() >= 2; }));
  {
    std::lock_guard lock(state->mu);
    state->failNextRestores = 1;
    state->calls.clear();
  }
  ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                           serviceObject("default", "web", "10.96.0.9", {{"", 80}}))
                  .ok());
  ASSERT_TRUE(eventually(
      [&] { return lastRestore().find("default/web has no endpoints") != std::string::npos; }));
  auto c = calls();
  ASSERT_GE(c.size(), 9u);
  EXPECT_EQ(c[0], "restore failed");
  EXPECT_EQ(c[1], "ensure nat PREROUTING -j KUBE-SERVICES");
  EXPECT_EQ(c[7], "save nat");
  EXPECT_EQ(c[8], "restore");
  EXPECT_EQ(proxy->stats().failures, 1);
  // The state of the kernel is unknown after a failure: the retry is a full sync.
  EXPECT_NE(lastRestore().find("-A KUBE-POSTROUTING"), std::string::npos);
}

TEST_F(ProxySyncTest, AChangeIsWrittenByAPartialSyncOfOnlyTheChainsThatDiffer) {
  const auto& slices = client::resources::kEndpointSlices;
  for (std::string name : {"a", "b"}) {
    ASSERT_TRUE(rest->create(client::resources::kServices, "default",
                             serviceObject("default", name,
                                           name == "a" ? "10.96.0.11" : "10.96.0.12", {{"", 80}}))
                    .ok());
    ASSERT_TRUE(rest->create(slices, "default",
                             sliceObject("default", name + "-1", name,
                                         {{name == "a" ? "10.244.1.1" : "10.244.2.1"}}, {{"", 80}}))
                    .ok());
  }
  startProxy();
  ASSERT_TRUE(eventually([&] { return lastRestore().find("10.244.2.1:80") != std::string::npos; }));
  ASSERT_TRUE(eventually([&] { return proxy->stats().syncs >= 1; }));
  EXPECT_EQ(proxy->stats().fullSyncs, 1);
  EXPECT_TRUE(proxy->stats().lastFull);

  auto slice = rest->get(slices, "default", "a-1");
  ASSERT_TRUE(slice.ok());
  (*slice)["endpoints"][0]["addresses"][0] = "10.244.1.9";
  ASSERT_TRUE(rest->update(slices, *slice).ok());
  ASSERT_TRUE(eventually([&] { return lastRestore().find("10.244.1.9:80") != std::string::npos; }));
  std::string doc = lastRestore();
  EXPECT_EQ(doc.find("KUBE-POSTROUTING"), std::string::npos) << doc;
  EXPECT_EQ(doc.find("*filter"), std::string::npos) << doc;
  EXPECT_EQ(doc.find(serviceChainName("default/b", "tcp")), std::string::npos) << doc;
  EXPECT_NE(doc.find(":" + serviceChainName("default/a", "tcp") + " - [0:0]\n"), std::string::npos)
      << doc;
  EXPECT_NE(doc.find("-X " + endpointChainName("default/a", "tcp", "10.244.1.1:80") + "\n"),
            std::string::npos)
      << doc;
  ASSERT_TRUE(eventually([&] { return proxy->stats().syncs >= 2; }));
  EXPECT_EQ(proxy->stats().fullSyncs, 1);
  EXPECT_FALSE(proxy->stats().lastFull);
}

TEST_F(ProxySyncTest, AChangeRegeneratesOnlyItsServiceAndADeletionRemovesItsChains) {
  const auto& svcs = client::resources::kServices;
  const auto& slices = client::resources::kEndpointSlices;
  for (int i = 1; i <= 3; ++i) {
    std::string name = "s" + std::to_string(i), ip = "10.244.7." + std::to_string(i);
    ASSERT_TRUE(
        rest->create(svcs, "default",
                     serviceObject("default", name, "10.96.7." + std::to_string(i), {{"", 80}}))
            .ok());
    ASSERT_TRUE(rest->create(slices, "default",
                             sliceObject("default", name + "-1", name, {{ip}}, {{"", 80}}))
                    .ok());
  }
  startProxy();
  ASSERT_TRUE(eventually([&] { return proxy->stats().syncs >= 1; }));
  // Every service (with the API server's own "kubernetes" one) at start.
  const int servicePorts = proxy->stats().servicePorts;
  EXPECT_GE(servicePorts, 3);
  EXPECT_EQ(proxy->stats().lastRegenerated, servicePorts);

  // One slice changes: only its service is read and rebuilt.
  auto slice = rest->get(slices, "default", "s2-1");
  ASSERT_TRUE(slice.ok());
  (*slice)["endpoints"][0]["addresses"][0] = "10.244.7.22";
  ASSERT_TRUE(rest->update(slices, *slice).ok());
  ASSERT_TRUE(eventually([&] { return proxy->stats().syncs >= 2; }));
  EXPECT_FALSE(proxy->stats().lastFull);
  EXPECT_EQ(proxy->stats().lastRegenerated, 1);
  EXPECT_NE(lastRestore().find("10.244.7.22:80"), std::string::npos);

  // A Service goes (its slice stays): its chains and its KUBE-SERVICES rule go with it.
  ASSERT_TRUE(rest->remove(svcs, "default", "s3").ok());
  ASSERT_TRUE(eventually([&] { return proxy->stats().syncs >= 3; }));
  EXPECT_EQ(proxy->stats().lastRegenerated, 1);
  EXPECT_EQ(proxy->stats().servicePorts, servicePorts - 1);
  std::string doc = lastRestore();
  EXPECT_NE(doc.find("-X " + serviceChainName("default/s3", "tcp") + "\n"), std::string::npos)
      << doc;
  EXPECT_NE(doc.find("-X " + endpointChainName("default/s3", "tcp", "10.244.7.3:80") + "\n"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find(":KUBE-SERVICES - [0:0]\n"), std::string::npos) << doc;
  EXPECT_EQ(doc.find("10.96.7.3"), std::string::npos) << doc;
  // s1's chains are reused, not written.
  EXPECT_EQ(doc.find(":" + serviceChainName("default/s1", "tcp") + " "), std::string::npos) << doc;
}

TEST_F(ProxySyncTest, CleanupRemovesJumpsThenEveryOwnedChain) {
  state->natSave =
      "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n"
      ":KUBE-POSTROUTING - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-SVC-AAAA - [0:0]\n"
      ":MINE - [0:0]\nCOMMIT\n";
  state->filterSave = "*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\nCOMMIT\n";
  FakeIptables ipt(state);
  ASSERT_TRUE(cleanupProxyRules(ipt).ok());
  auto c = calls();
  ASSERT_EQ(c.size(), 9u);
  EXPECT_EQ(c[0], "delete nat PREROUTING -j KUBE-SERVICES");
  EXPECT_EQ(c[5], "delete filter OUTPUT -j KUBE-SERVICES");
  std::string doc = lastRestore();
  EXPECT_EQ(doc,
            "*filter\n:KUBE-EXTERNAL-SERVICES - [0:0]\n:KUBE-SERVICES - [0:0]\n"
            "-X KUBE-EXTERNAL-SERVICES\n-X KUBE-SERVICES\nCOMMIT\n"
            "*nat\n:KUBE-MARK-MASQ - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n"
            ":KUBE-SERVICES - [0:0]\n:KUBE-SVC-AAAA - [0:0]\n-X KUBE-MARK-MASQ\n"
            "-X KUBE-NODEPORTS\n-X KUBE-POSTROUTING\n-X KUBE-SERVICES\n-X KUBE-SVC-AAAA\nCOMMIT\n");
}

}  // namespace
}  // namespace minik8s::proxy
