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
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}),
      rules_(RuleOptions{options_.clusterCIDR}) {
  // After CoalescedSync's own handlers: each of these asks for a sync again once it has noted the
  // change, so no sync can miss it.
  services_.addHandlers({[this](const json& svc) { serviceChanged(serviceKey(svc)); },
                         [this](const json&, const json& svc) { serviceChanged(serviceKey(svc)); },
                         [this](const json& svc) { serviceChanged(serviceKey(svc)); }});
  slices_.addHandlers({[this](const json& slice) { sliceChanged(nullptr, &slice); },
                       [this](const json& old, const json& slice) { sliceChanged(&old, &slice); },
                       [this](const json& slice) { sliceChanged(&slice, nullptr); }});
}

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
  kernelChains_ = perServiceChains(*nat);
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

void ServiceProxy::serviceChanged(const std::string& key) {
  {
    std::lock_guard lock(changesMu_);
    changedServices_.insert(key);
  }
  sync_.requestSync();
}

void ServiceProxy::sliceChanged(const json* oldSlice, const json* newSlice) {
  std::string sliceKey = client::objectKey(newSlice ? *newSlice : *oldSlice);
  std::string before = oldSlice ? sliceServiceKey(*oldSlice) : "";
  std::string after = newSlice ? sliceServiceKey(*newSlice) : "";
  {
    std::lock_guard lock(changesMu_);
    if (!before.empty() && before != after) {
      auto it = slicesByService_.find(before);
      if (it != slicesByService_.end()) {
        it->second.erase(sliceKey);
        if (it->second.empty()) slicesByService_.erase(it);
      }
      changedServices_.insert(before);
    }
    if (!after.empty()) {
      slicesByService_[after].insert(sliceKey);
      changedServices_.insert(after);
    }
  }
  sync_.requestSync();
}

std::map<std::string, ServiceInput> ServiceProxy::readServices(const std::set<std::string>& keys) {
  std::map<std::string, std::vector<std::string>> sliceKeys;
  {
    std::lock_guard lock(changesMu_);
    for (const std::string& key : keys) {
      auto it = slicesByService_.find(key);
      if (it != slicesByService_.end()) sliceKeys[key].assign(it->second.begin(), it->second.end());
    }
  }
  std::map<std::string, ServiceInput> out;
  for (const std::string& key : keys) {
    ServiceInput& input = out[key];
    input.service = services_.get(key);
    for (const std::string& sliceKey : sliceKeys[key]) {
      if (auto slice = slices_.get(sliceKey)) input.slices.push_back(std::move(*slice));
    }
  }
  return out;
}

bool ServiceProxy::syncRules() {
  // Before both caches are filled, a sync would delete the rules of services not yet listed.
  if (!services_.hasSynced() || !slices_.hasSynced()) return false;
  auto t0 = std::chrono::steady_clock::now();
  // A run maxSyncInterval after the last one is the periodic repair; half of it tells such a run
  // from one woken by an event.
  bool full = needFullSync_ || t0 - lastFullSync_ >= options_.maxSyncInterval / 2;
  // Taken before the caches are read: a change noted after this is read by the next sync.
  std::set<std::string> changed;
  {
    std::lock_guard lock(changesMu_);
    changed.swap(changedServices_);
  }
  std::string text;
  std::chrono::steady_clock::time_point t1;
  if (full) {
    std::vector<json> services = services_.list(), slices = slices_.list();
    t1 = std::chrono::steady_clock::now();
    // The chains to delete when unused: those read from the kernel, else those last written.
    text =
        rules_.prepareFull(services, slices, kernelChains_ ? *kernelChains_ : rules_.chainNames())
            .restoreText;
  } else {
    std::map<std::string, ServiceInput> inputs = readServices(changed);
    t1 = std::chrono::steady_clock::now();
    text = rules_.preparePartial(inputs);
  }
  auto t2 = std::chrono::steady_clock::now();
  if (!full && text.empty()) {  // nothing changed
    rules_.commit();
    return true;
  }
  Status s = iptables_->restore(text);
  auto t3 = std::chrono::steady_clock::now();
  std::lock_guard lock(statsMu_);
  if (!s.ok()) {
    rules_.discard();
    ++stats_.failures;
    LOG_ERROR("proxy: {}", s.message());
    // The kernel's state is unknown now: the retry rewrites everything, after putting back jumps
    // and reading which chains exist (someone may have removed ours).
    needFullSync_ = true;
    if (auto chains =
            recoverAfterFailedRestore(*iptables_, jumpRules(), "nat", perServiceChains, "proxy")) {
      kernelChains_ = std::move(*chains);
    }
    return false;
  }
  rules_.commit();
  if (full) {
    kernelChains_.reset();
    needFullSync_ = false;
    lastFullSync_ = t3;
    ++stats_.fullSyncs;
  }
  auto us = [](auto d) { return std::chrono::duration_cast<std::chrono::microseconds>(d); };
  ++stats_.syncs;
  stats_.lastFull = full;
  stats_.lastRead = us(t1 - t0);
  stats_.lastGenerate = us(t2 - t1);
  stats_.lastRestore = us(t3 - t2);
  stats_.lastRegenerated = rules_.lastRegenerated();
  stats_.servicePorts = rules_.servicePorts();
  stats_.endpoints = rules_.endpoints();
  LOG_DEBUG(
      "proxy: {} sync of {} service ports ({} services rebuilt), {} endpoints in {} us + {} us "
      "+ {} us",
      full ? "full" : "partial", stats_.servicePorts, stats_.lastRegenerated, stats_.endpoints,
      stats_.lastRead.count(), stats_.lastGenerate.count(), stats_.lastRestore.count());
  return true;
}

SyncStats ServiceProxy::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

Status ServiceProxy::cleanup() {
  stop();
  rules_ = ServiceRulesCache(RuleOptions{options_.clusterCIDR});
  needFullSync_ = true;
  kernelChains_ = std::set<std::string>();
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
