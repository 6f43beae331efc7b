#include "netpol/network_policy_agent.h"

#include "common/logging.h"

namespace minik8s::netpol {

const client::Resource kNetworkPolicies{"networking.k8s.io", "v1", "networkpolicies", true};

namespace {

client::ListParams hostEndpointSelector() {
  client::ListParams p;
  p.labelSelector = kHostEndpointSelector;
  return p;
}

}  // namespace

NetworkPolicyAgent::NetworkPolicyAgent(client::RestClient& client, NetworkPolicyOptions options)
    : NetworkPolicyAgent(client, std::move(options), std::make_unique<proxy::ExecIptables>()) {}

NetworkPolicyAgent::NetworkPolicyAgent(client::RestClient& client, NetworkPolicyOptions options,
                                       std::unique_ptr<proxy::Iptables> iptables)
    : client_(client),
      options_(std::move(options)),
      iptables_(std::move(iptables)),
      policies_(client_, kNetworkPolicies),
      pods_(client_, client::resources::kPods),
      namespaces_(client_, client::resources::kNamespaces),
      hostEndpoints_(client_, client::resources::kEndpointSlices, "", hostEndpointSelector()),
      sync_({&policies_, &pods_, &namespaces_, &hostEndpoints_}, [this] { return syncRules(); },
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}) {}

NetworkPolicyAgent::~NetworkPolicyAgent() { stop(); }

Status NetworkPolicyAgent::start() {
  if (started_) return Status::Ok();
  auto filter = iptables_->save("filter");
  if (!filter.ok()) return filter.status();
  existingChains_ = policyChains(*filter);
  // The chain must exist before a jump to it can be added; until the first sync it only lets
  // replies and the node's own traffic pass early, so nothing is isolated yet.
  PolicyInput none;
  PolicyRules empty = buildPolicyRules(none, existingChains_);
  if (Status s = iptables_->restore(empty.restoreText); !s.ok()) return s;
  existingChains_ = empty.chains;
  if (Status s = proxy::ensureJumps(*iptables_, policyJumpRules()); !s.ok()) return s;
  if (!sync_.startInformers(options_.informerSyncTimeout)) {
    LOG_WARN("network policy: informers not synced after {} ms; rules follow once they are",
             options_.informerSyncTimeout.count());
  }
  sync_.startSyncing();
  started_ = true;
  LOG_INFO("network policy: enforcing the policies of node {}'s pods", options_.nodeName);
  return Status::Ok();
}

void NetworkPolicyAgent::stop() {
  if (!started_) return;
  sync_.stop();
  started_ = false;
}

bool NetworkPolicyAgent::syncRules() {
  // Before every cache is filled, a sync could isolate a pod without the peers that allow it.
  if (!policies_.hasSynced() || !pods_.hasSynced() || !namespaces_.hasSynced() ||
      !hostEndpoints_.hasSynced()) {
    return false;
  }
  auto t0 = std::chrono::steady_clock::now();
  PolicyInput input{options_.nodeName, policies_.list(), pods_.list(), namespaces_.list(),
                    hostEndpoints_.list()};
  PolicyRules rules = buildPolicyRules(input, existingChains_);
  auto t1 = std::chrono::steady_clock::now();
  // Unchanged rules are rewritten only by the periodic repair.
  if (rules.restoreText == lastApplied_ && t1 - lastApplyTime_ < options_.maxSyncInterval / 2) {
    return true;
  }
  Status s = iptables_->restore(rules.restoreText);
  auto t2 = std::chrono::steady_clock::now();
  std::lock_guard lock(statsMu_);
  if (!s.ok()) {
    ++stats_.failures;
    LOG_ERROR("network policy: {}", s.message());
    // Someone may have removed our jumps or chains; put them back before the retry.
    lastApplied_.clear();
    if (auto chains = proxy::recoverAfterFailedRestore(*iptables_, policyJumpRules(), "filter",
                                                       policyChains, "network policy")) {
      existingChains_ = std::move(*chains);
    }
    return false;
  }
  bool changed = rules.restoreText != lastApplied_;
  existingChains_ = rules.chains;
  lastApplied_ = std::move(rules.restoreText);
  lastApplyTime_ = t2;
  ++stats_.syncs;
  stats_.lastGenerate = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0);
  stats_.lastRestore = std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1);
  stats_.ingressPods = rules.ingressPods;
  stats_.egressPods = rules.egressPods;
  stats_.rules = rules.rules;
  if (changed) {
    LOG_INFO(
        "network policy: {} pods isolated for ingress, {} for egress, {} rules applied "
        "(generate {} us, iptables-restore {} us)",
        rules.ingressPods, rules.egressPods, rules.rules, stats_.lastGenerate.count(),
        stats_.lastRestore.count());
  }
  return true;
}

NetworkPolicyStats NetworkPolicyAgent::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

Status NetworkPolicyAgent::cleanup() {
  stop();
  lastApplied_.clear();
  existingChains_.clear();
  return cleanupPolicyRules(*iptables_);
}

Status cleanupPolicyRules(proxy::Iptables& iptables) {
  return proxy::removeJumpsAndChains(
      iptables, policyJumpRules(),
      [&]() -> Result<std::string> {
        auto filter = iptables.save("filter");
        if (!filter.ok()) return filter.status();
        return proxy::deleteChainsText({}, policyChains(*filter));
      },
      "network policy");
}

}  // namespace minik8s::netpol
