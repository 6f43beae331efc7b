// ServiceProxy: the node's service proxy, kube-proxy in iptables mode. It watches Services and
// EndpointSlices through informers and keeps the KUBE-* chains of the current network namespace
// equal to buildProxyRules() of what it sees: one atomic `iptables-restore --noflush` per sync,
// at most every minSyncInterval, within that of a change, and every maxSyncInterval anyway (to
// repair rules someone else removed). As kube-proxy since 1.28, a sync woken by a change is
// partial: it writes only the chains that differ from the last restore that succeeded
// (changedRulesText); a full sync, every chain rewritten, runs at start, after a failed restore
// and when maxSyncInterval / 2 has passed since the last full one (the periodic repair). A partial
// sync reads and regenerates only the services whose Service or EndpointSlices changed since the
// last sync (the informers' handlers collect their keys) and reuses the rules of all others
// (ServiceRulesCache): its cost does not grow with the number of services. On start
// it reads which of its chains exist (a previous run left them) so the first sync rewrites them and
// deletes the stale ones; cleanup() removes every chain and jump it adds (for `cluster down`).
//
// Thread-safety: start()/stop()/cleanup() from one owner thread; stats() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/bounded_frequency_runner.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "proxy/iptables.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_rules_cache.h"

namespace minik8s::proxy {

struct ProxyOptions {
  std::string nodeName;
  // The node's addresses. NodePorts answer on every local address (-m addrtype LOCAL), so these
  // are only logged; they name the node in messages.
  std::vector<std::string> nodeIPs;
  std::string clusterCIDR = "10.244.0.0/16";
  std::string iptablesPath = "iptables";
  std::string iptablesRestorePath = "iptables-restore";
  std::string iptablesSavePath = "iptables-save";
  std::chrono::milliseconds minSyncInterval{100};
  std::chrono::milliseconds maxSyncInterval{30000};
  std::chrono::milliseconds retryInterval{1000};
  std::chrono::milliseconds informerSyncTimeout{10000};
};

struct SyncStats {
  int64_t syncs = 0;      // successful iptables-restore runs
  int64_t fullSyncs = 0;  // of which wrote every chain
  int64_t failures = 0;
  std::chrono::microseconds lastRead{0};      // reading the objects from the informers' caches
  std::chrono::microseconds lastGenerate{0};  // building the document
  std::chrono::microseconds lastRestore{0};   // running iptables-restore
  bool lastFull = false;                      // the last restore was a full sync
  int lastRegenerated = 0;                    // services whose rules it built (all when full)
  int servicePorts = 0;
  int endpoints = 0;
};

class ServiceProxy {
 public:
  ServiceProxy(client::RestClient& client, ProxyOptions options);
  // For tests: a fake Iptables instead of the programs.
  ServiceProxy(client::RestClient& client, ProxyOptions options,
               std::unique_ptr<Iptables> iptables);
  ~ServiceProxy();
  ServiceProxy(const ServiceProxy&) = delete;
  ServiceProxy& operator=(const ServiceProxy&) = delete;

  // Installs the jumps from the built-in chains, starts the informers, waits for their first list
  // (up to informerSyncTimeout) and starts syncing. Fails when iptables cannot be driven.
  Status start();
  void stop();
  // Removes every rule and chain the proxy adds. Call after stop() (or without start()).
  Status cleanup();

  SyncStats stats() const;

 private:
  bool syncRules();
  // Informer handlers: note which services need their rules rebuilt, then ask for a sync.
  void serviceChanged(const std::string& key);
  void sliceChanged(const json* oldSlice, const json* newSlice);
  // The Services and EndpointSlices of the changed service keys, from the informers' caches.
  std::map<std::string, ServiceInput> readServices(const std::set<std::string>& keys);

  client::RestClient& client_;
  ProxyOptions options_;
  std::unique_ptr<Iptables> iptables_;
  client::Informer services_;
  client::Informer slices_;
  client::CoalescedSync sync_;  // after the informers it wires
  bool started_ = false;

  // Owned by the sync thread (runner), set by start() before the runner starts.
  // Per-service chains read from the kernel (at start, after a failure) for the next full sync to
  // delete the stale ones; nullopt: those the last restore that succeeded left.
  std::optional<std::set<std::string>> kernelChains_;
  ServiceRulesCache rules_;  // what the last restore that succeeded wrote
  bool needFullSync_ = true;
  std::chrono::steady_clock::time_point lastFullSync_;

  // Written by the informers' handlers, taken by the sync thread.
  std::mutex changesMu_;
  std::set<std::string> changedServices_;  // service keys since the last sync
  std::map<std::string, std::set<std::string>> slicesByService_;  // service key -> slice keys

  mutable std::mutex statsMu_;
  SyncStats stats_;
};

// Removes the proxy's rules and chains from the current network namespace, whoever added them.
Status cleanupProxyRules(Iptables& iptables);

}  // namespace minik8s::proxy
