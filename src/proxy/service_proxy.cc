#include "proxy/service_proxy.h"

#include <chrono>

#include "common/logging.h"
#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

IptablesPaths pathsOf(const ProxyOptions& o) {
  return IptablesPaths{o.iptablesPath, o.iptablesRestorePath, o.iptablesSavePath};
}

}  // namespace

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options)
    : ServiceProxy(client, options, std::make_unique<ExecIptables>(pathsOf(options))) {}

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options,
                           std::unique_ptr<Iptables> iptables)
    : client_(client),
      options_(std::move(options)),
      iptables_(std::move(iptables)),
      services_(client_, client::resources::kServices),
      slices_(client_, client::resources::kEndpointSlices),
      sync_({&services_, &slices_}, [this] { return syncRules(); },
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}) {}

ServiceProxy::~ServiceProxy() { stop(); }

Status ServiceProxy::start() {
  if (started_) return Status::Ok();
  // The chains must exist before a jump to them can be added.
  if (Status s = iptables_->restore(buildProxyRules({}, {}, {}, {}).restoreText); !s.ok()) {
    return s;
  }
  if (Status s = ensureJumps(*iptables_, jumpRules()); !s.ok()) return s;
  auto nat = iptables_->save("nat");
  if (!nat.ok()) return nat.status();
  existingChains_ = perServiceChains(*nat);
  if (!sync_.startInformers(options_.informerSyncTimeout)) {
    LOG_WARN("proxy: informers not synced after {} ms; rules follow once they are",
             options_.informerSyncTimeout.count());
  }
  sync_.startSyncing();
  started_ = true;
  LOG_INFO("proxy: syncing iptables rules for node {} ({})", options_.nodeName,
           fmt::join(options_.nodeIPs, ", "));
  return Status::Ok();
}

void ServiceProxy::stop() {
  if (!started_) return;
  sync_.stop();
  started_ = false;
}

bool ServiceProxy::syncRules() {
  // Before both caches are filled, a sync would delete the rules of services not yet listed.
  if (!services_.hasSynced() || !slices_.hasSynced()) return false;
  auto t0 = std::chrono::steady_clock::now();
  ProxyRules rules = buildProxyRules(services_.list(), slices_.list(),
                                     RuleOptions{options_.clusterCIDR}, existingChains_);
  // A run maxSyncInterval after the last one is the periodic repair; half of it tells such a run
  // from one woken by an event.
  bool full = needFullSync_ || t0 - lastFullSync_ >= options_.maxSyncInterval / 2;
  std::string partial = full ? std::string() : changedRulesText(rules, applied_);
  auto t1 = std::chrono::steady_clock::now();
  if (!full && partial.empty()) return true;  // nothing changed
  Status s = iptables_->restore(full ? rules.restoreText : partial);
  auto t2 = std::chrono::steady_clock::now();
  std::lock_guard lock(statsMu_);
  if (!s.ok()) {
    ++stats_.failures;
    LOG_ERROR("proxy: {}", s.message());
    // The kernel's state is unknown now: the retry rewrites everything, after putting back jumps
    // and reading which chains exist (someone may have removed ours).
    needFullSync_ = true;
    if (auto chains =
            recoverAfterFailedRestore(*iptables_, jumpRules(), "nat", perServiceChains, "proxy")) {
      existingChains_ = std::move(*chains);
    }
    return false;
  }
  existingChains_ = rules.natChains;
  if (full) {
    needFullSync_ = false;
    lastFullSync_ = t2;
    ++stats_.fullSyncs;
  }
  ++stats_.syncs;
  stats_.lastFull = full;
  stats_.lastGenerate = std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0);
  stats_.lastRestore = std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1);
  stats_.servicePorts = rules.servicePorts;
  stats_.endpoints = rules.endpoints;
  LOG_DEBUG("proxy: {} sync of {} service ports, {} endpoints in {} us + {} us",
            full ? "full" : "partial", rules.servicePorts, rules.endpoints,
            stats_.lastGenerate.count(), stats_.lastRestore.count());
  applied_ = std::move(rules);
  return true;
}

SyncStats ServiceProxy::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

Status ServiceProxy::cleanup() {
  stop();
  applied_ = ProxyRules{};
  needFullSync_ = true;
  existingChains_.clear();
  return cleanupProxyRules(*iptables_);
}

Status cleanupProxyRules(Iptables& iptables) {
  return removeJumpsAndChains(
      iptables, jumpRules(),
      [&]() -> Result<std::string> {
        auto nat = iptables.save("nat");
        if (!nat.ok()) return nat.status();
        auto filter = iptables.save("filter");
        if (!filter.ok()) return filter.status();
        return deleteChainsText(ownedChains(*nat, "nat"), ownedChains(*filter, "filter"));
      },
      "proxy");
}

}  // namespace minik8s::proxy
