// ServiceProxy: the node's service proxy, kube-proxy in iptables or nftables mode
// (ProxyOptions::mode; proxy_backend.h). It watches Services and EndpointSlices through informers
// and keeps the kernel's rules equal to what it sees: one atomic transaction per sync
// (`iptables-restore --noflush` or `nft -f`), at most every minSyncInterval, within that of a
// change, and every maxSyncInterval anyway (to repair rules someone else removed). As kube-proxy
// since 1.28, a sync woken by a change is partial: it writes only what differs from the last
// transaction that succeeded; a full sync, everything rewritten, runs at start, after a failed
// transaction and when maxSyncInterval / 2 has passed since the last full one (the periodic
// repair). A partial sync reads and regenerates only the services whose Service or EndpointSlices
// changed since the last sync (the informers' handlers collect their keys) and reuses the rules of
// all others: its cost does not grow with the number of services. On start the backend reads what
// a previous run left so the first sync rewrites it and deletes what is stale; cleanup() removes
// every rule, chain and jump it adds (for `cluster down`).
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
#include "client/shared_informers.h"
#include "proxy/iptables.h"
#include "proxy/nftables.h"
#include "proxy/proxy_backend.h"

namespace minik8s::proxy {

// kube-proxy's modes: iptables (the default) or nftables.
enum class ProxyMode { kIptables, kNftables };
// "iptables" / "nftables"; nullopt for anything else.
std::optional<ProxyMode> parseProxyMode(std::string_view name);

struct ProxyOptions {
  ProxyMode mode = ProxyMode::kIptables;
  std::string nodeName;
  // The node's addresses. NodePorts answer on every local address (-m addrtype LOCAL), so these
  // are only logged; they name the node in messages.
  std::vector<std::string> nodeIPs;
  std::string clusterCIDR = "10.244.0.0/16";
  std::string iptablesPath = "iptables";
  std::string iptablesRestorePath = "iptables-restore";
  std::string iptablesSavePath = "iptables-save";
  std::string nftPath = "nft";
  std::chrono::milliseconds minSyncInterval{100};
  std::chrono::milliseconds maxSyncInterval{30000};
  std::chrono::milliseconds retryInterval{1000};
  std::chrono::milliseconds informerSyncTimeout{10000};
  // The process' shared informers (the agent's), for Services and EndpointSlices; own ones when
  // null.
  client::SharedInformers* informers = nullptr;
};

struct SyncStats {
  int64_t syncs = 0;      // successful transactions (iptables-restore or nft runs)
  int64_t fullSyncs = 0;  // of which wrote every chain
  int64_t failures = 0;
  std::chrono::microseconds lastRead{0};      // reading the objects from the informers' caches
  std::chrono::microseconds lastGenerate{0};  // building the document
  std::chrono::microseconds lastRestore{0};   // running iptables-restore or nft
  bool lastFull = false;                      // the last restore was a full sync
  int lastRegenerated = 0;                    // services whose rules it built (all when full)
  int servicePorts = 0;
  int endpoints = 0;
};

class ServiceProxy {
 public:
  ServiceProxy(client::RestClient& client, ProxyOptions options);
  // For tests: a fake Iptables (iptables mode) or Nftables (nftables mode) instead of the
  // programs; nothing of the other mode is removed.
  ServiceProxy(client::RestClient& client, ProxyOptions options,
               std::unique_ptr<Iptables> iptables);
  ServiceProxy(client::RestClient& client, ProxyOptions options, std::unique_ptr<Nftables> nft);
  ~ServiceProxy();
  ServiceProxy(const ServiceProxy&) = delete;
  ServiceProxy& operator=(const ServiceProxy&) = delete;

  // Writes the fixed rules (iptables: the jumps from the built-in chains), starts the informers,
  // waits for their first list (up to informerSyncTimeout) and starts syncing. Fails when iptables
  // or nft cannot be driven.
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

  ServiceProxy(client::RestClient& client, ProxyOptions options,
               std::unique_ptr<ProxyBackend> backend);

  client::RestClient& client_;
  ProxyOptions options_;
  std::unique_ptr<ProxyBackend> backend_;
  std::unique_ptr<client::Informer> services_;
  std::unique_ptr<client::Informer> slices_;
  client::CoalescedSync sync_;  // after the informers it wires
  bool started_ = false;

  // Owned by the sync thread (runner), set by start() before the runner starts.
  bool needFullSync_ = true;
  std::chrono::steady_clock::time_point lastFullSync_;

  // Written by the informers' handlers, taken by the sync thread.
  std::mutex changesMu_;
  std::set<std::string> changedServices_;  // service keys since the last sync
  std::map<std::string, std::set<std::string>> slicesByService_;  // service key -> slice keys

  mutable std::mutex statsMu_;
  SyncStats stats_;
};

// Removes the rules of both modes from the current network namespace, whoever added them (the
// nftables table only where `nft` runs).
Status cleanupAllProxyRules(const ProxyOptions& options);

}  // namespace minik8s::proxy
