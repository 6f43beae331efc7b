// NetworkPolicyAgent: enforces the NetworkPolicies of the pods bound to this node. It watches
// NetworkPolicies, Pods and Namespaces of the whole cluster (peers may be anywhere) and the
// node-hosted EndpointSlices (cluster DNS, gateway) through informers, and keeps the MINIK8S-NP*
// chains of the current network namespace's filter table equal to buildPolicyRules() of what it
// sees: one atomic `iptables-restore --noflush` per change, at most every minSyncInterval, and
// every maxSyncInterval anyway (repair). Run by the agent inside the node's network namespace,
// where pod traffic is forwarded. cleanup() removes every chain and jump it adds.
//
// Thread-safety: start()/stop()/cleanup() from one owner thread; stats() from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "client/bounded_frequency_runner.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "netpol/policy_rules.h"
#include "proxy/iptables.h"

namespace minik8s::netpol {

extern const client::Resource kNetworkPolicies;

struct NetworkPolicyOptions {
  std::string nodeName;
  std::chrono::milliseconds minSyncInterval{50};
  std::chrono::milliseconds maxSyncInterval{30000};
  std::chrono::milliseconds retryInterval{1000};
  std::chrono::milliseconds informerSyncTimeout{10000};
};

struct NetworkPolicyStats {
  int64_t syncs = 0;  // successful iptables-restore runs
  int64_t failures = 0;
  std::chrono::microseconds lastGenerate{0};
  std::chrono::microseconds lastRestore{0};
  int ingressPods = 0;
  int egressPods = 0;
  int rules = 0;
};

class NetworkPolicyAgent {
 public:
  NetworkPolicyAgent(client::RestClient& client, NetworkPolicyOptions options);
  // For tests: a fake Iptables instead of the programs.
  NetworkPolicyAgent(client::RestClient& client, NetworkPolicyOptions options,
                     std::unique_ptr<proxy::Iptables> iptables);
  ~NetworkPolicyAgent();
  NetworkPolicyAgent(const NetworkPolicyAgent&) = delete;
  NetworkPolicyAgent& operator=(const NetworkPolicyAgent&) = delete;

  // Creates the chains and jumps, starts the informers, waits for their first list (up to
  // informerSyncTimeout) and starts syncing. Fails when iptables cannot be driven.
  Status start();
  void stop();
  // Removes every rule and chain the agent adds. Call after stop() (or without start()).
  Status cleanup();

  NetworkPolicyStats stats() const;

 private:
  bool syncRules();

  client::RestClient& client_;
  NetworkPolicyOptions options_;
  std::unique_ptr<proxy::Iptables> iptables_;
  client::Informer policies_;
  client::Informer pods_;
  client::Informer namespaces_;
  client::Informer hostEndpoints_;
  client::CoalescedSync sync_;  // after the informers it wires
  bool started_ = false;

  // Owned by the sync thread (runner), read by start() before the runner starts.
  std::set<std::string> existingChains_;
  std::string lastApplied_;
  std::chrono::steady_clock::time_point lastApplyTime_;

  mutable std::mutex statsMu_;
  NetworkPolicyStats stats_;
};

// Removes the agent's chains and jumps from the current network namespace, whoever added them.
Status cleanupPolicyRules(proxy::Iptables& iptables);

}  // namespace minik8s::netpol
