// NetworkPolicyAgent against a fake Iptables and a real in-process API server: the chain before
// the jumps at start, a policy / pod label / namespace label change reaching iptables-restore
// within the sync interval, and cleanup.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "client/rest_client.h"
#include "in_process_api_server.h"
#include "netpol/network_policy_agent.h"
#include "proxy/iptables.h"

namespace minik8s::netpol {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct FakeState {
  std::mutex mu;
  std::vector<std::pair<Clock::time_point, std::string>> restores;
  std::vector<std::string> calls;
  std::string filterSave = "*filter\n:INPUT ACCEPT [0:0]\n:MINIK8S-NPI-LEFTOVER - [0:0]\nCOMMIT\n";
};

class FakeIptables : public proxy::Iptables {
 public:
  explicit FakeIptables(std::shared_ptr<FakeState> s) : s_(std::move(s)) {}
  Status restore(const std::string& rules) override {
    std::lock_guard lock(s_->mu);
    s_->restores.emplace_back(Clock::now(), rules);
    s_->calls.push_back("restore");
    return Status::Ok();
  }
  Result<std::string> save(const std::string& table) override {
    std::lock_guard lock(s_->mu);
    s_->calls.push_back("save " + table);
    return s_->filterSave;
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

class NetworkPolicyAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    state = std::make_shared<FakeState>();
    for (const char* ns : {"a", "b"}) {
      ASSERT_TRUE(
          rest->create(client::resources::kNamespaces, "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
              .ok());
    }
    createPod("a", "web", "n1", "10.244.1.5", {{"app", "web"}});
    createPod("b", "client", "n2", "10.244.2.7", {{"role", "client"}});
  }
  void TearDown() override {
    agent.reset();
    api.stop();
  }
  void createPod(const std::string& ns, const std::string& name, const std::string& node,
                 const std::string& ip, json labels) {
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
        {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    auto created = rest->create(client::resources::kPods, ns, pod);
    ASSERT_TRUE(created.ok()) << created.status().message();
    json withStatus = *created;
    withStatus["status"] = {{"phase", "Running"}, {"podIP", ip}};
    ASSERT_TRUE(rest->update(client::resources::kPods, withStatus, "status").ok());
  }
  void startAgent() {
    NetworkPolicyOptions o;
    o.nodeName = "n1";
    agent = std::make_unique<NetworkPolicyAgent>(*rest, o, std::make_unique<FakeIptables>(state));
    ASSERT_TRUE(agent->start().ok());
  }
  std::string lastRestore() {
    std::lock_guard lock(state->mu);
    return state->restores.empty() ? "" : state->restores.back().second;
  }
  // Waits until the last document contains (or, with present = false, lacks) `text`; returns
  // how long after `since` the restore that made it so ran.
  std::optional<std::chrono::milliseconds> restoredWithin(const std::string& text, bool present,
                                                          Clock::time_point since) {
    for (auto end = Clock::now() + 3s; Clock::now() < end; std::this_thread::sleep_for(5ms)) {
      std::lock_guard lock(state->mu);
      if (state->restores.empty()) continue;
      const auto& [when, doc] = state->restores.back();
      if ((doc.find(text) != std::string::npos) == present) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(when - since);
      }
    }
    return std::nullopt;
  }

  minik8s::testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::shared_ptr<FakeState> state;
  std::unique_ptr<NetworkPolicyAgent> agent;
};

TEST_F(NetworkPolicyAgentTest, FollowsPoliciesPodLabelsAndNamespaceLabelsWithinTheSyncInterval) {
  startAgent();
  {
    std::lock_guard lock(state->mu);
    // The main chain exists (and the leftover of an earlier run goes) before the jumps.
    ASSERT_GE(state->calls.size(), 4u);
    EXPECT_EQ(std::vector<std::string>(state->calls.begin(), state->calls.begin() + 4),
              (std::vector<std::string>{"save filter", "restore",
                                        "ensure filter FORWARD -j MINIK8S-NETPOL",
                                        "ensure filter INPUT -j MINIK8S-NETPOL"}));
    EXPECT_NE(state->restores[0].second.find("-X MINIK8S-NPI-LEFTOVER"), std::string::npos);
  }
  // A policy: a/web accepts only role=client pods of namespaces team=blue.
  auto t = Clock::now();
  json policy = {{"apiVersion", "networking.k8s.io/v1"},
                 {"kind", "NetworkPolicy"},
                 {"metadata", {{"name", "from-blue"}, {"namespace", "a"}}},
                 {"spec", json::parse(R"({"podSelector": {"matchLabels": {"app": "web"}},
                    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "blue"}},
                                           "podSelector": {"matchLabels": {"role": "client"}}}]}]})")}};
  ASSERT_TRUE(rest->create(kNetworkPolicies, "a", policy).ok());
  auto created = restoredWithin("-d 10.244.1.5/32", true, t);
  ASSERT_TRUE(created);
  EXPECT_EQ(lastRestore().find("-s 10.244.2.7/32"), std::string::npos);
  // The peer's namespace gets the label: its client is allowed.
  t = Clock::now();
  ASSERT_TRUE(rest->patch(client::resources::kNamespaces, "", "b",
                          {{"metadata", {{"labels", {{"team", "blue"}}}}}})
                  .ok());
  auto namespaceLabel = restoredWithin("-s 10.244.2.7/32 -j RETURN", true, t);
  ASSERT_TRUE(namespaceLabel);
  // The peer pod loses its role: allowed no more.
  t = Clock::now();
  ASSERT_TRUE(rest->patch(client::resources::kPods, "b", "client",
                          {{"metadata", {{"labels", {{"role", "other"}}}}}})
                  .ok());
  auto podLabel = restoredWithin("-s 10.244.2.7/32 -j RETURN", false, t);
  ASSERT_TRUE(podLabel);
  // The policy goes: nothing is isolated.
  t = Clock::now();
  ASSERT_TRUE(rest->remove(kNetworkPolicies, "a", "from-blue").ok());
  auto deleted = restoredWithin("-d 10.244.1.5/32", false, t);
  ASSERT_TRUE(deleted);
  for (auto d : {*created, *namespaceLabel, *podLabel, *deleted}) EXPECT_LT(d, 1000ms);
  std::printf(
      "API write -> iptables-restore: policy created %lld ms, namespace label %lld ms, "
      "pod label %lld ms, policy deleted %lld ms\n",
      static_cast<long long>(created->count()), static_cast<long long>(namespaceLabel->count()),
      static_cast<long long>(podLabel->count()), static_cast<long long>(deleted->count()));
  EXPECT_GE(agent->stats().syncs, 5);
}

TEST_F(NetworkPolicyAgentTest, CleanupRemovesJumpsAndChains) {
  startAgent();
  agent->stop();
  {
    std::lock_guard lock(state->mu);
    state->filterSave = "*filter\n:MINIK8S-NETPOL - [0:0]\n:MINIK8S-NPI-X - [0:0]\nCOMMIT\n";
  }
  ASSERT_TRUE(agent->cleanup().ok());
  std::lock_guard lock(state->mu);
  std::vector<std::string> tail(state->calls.end() - 4, state->calls.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"delete filter FORWARD -j MINIK8S-NETPOL",
                                            "delete filter INPUT -j MINIK8S-NETPOL", "save filter",
                                            "restore"}));
  EXPECT_EQ(state->restores.back().second,
            "*filter\n:MINIK8S-NETPOL - [0:0]\n:MINIK8S-NPI-X - [0:0]\n-X MINIK8S-NETPOL\n"
            "-X MINIK8S-NPI-X\nCOMMIT\n");
}

}  // namespace
}  // namespace minik8s::netpol
