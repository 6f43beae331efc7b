#include "proxy/service_proxy.h"

#include <chrono>

#include "common/command.h"
#include "common/logging.h"
#include "fmt/format.h"
#include "proxy/iptables_backend.h"
#include "proxy/nftables_backend.h"

namespace minik8s::proxy {

namespace {

IptablesPaths pathsOf(const ProxyOptions& o) {
  return IptablesPaths{o.iptablesPath, o.iptablesRestorePath, o.iptablesSavePath};
}

// Removes the nftables mode's table; without nft there is none to remove.
Status removeNftTable(const std::string& nftPath) {
  auto r = runProgram({nftPath, "-f", "-"}, nftDeleteTableDocument());
  if (!r.ok() || r->exitCode == 127) {  // 127: runProgram could not start it
    LOG_DEBUG("proxy: no nft to remove an nftables table with");
    return Status::Ok();
  }
  return r->exitCode == 0 ? Status::Ok()
                          : Status::Internal("removing table ip kube-proxy: " + r->output);
}

std::unique_ptr<ProxyBackend> backendFor(const ProxyOptions& o) {
  RuleOptions rules{o.clusterCIDR};
  if (o.mode == ProxyMode::kNftables) {
    return std::make_unique<NftablesBackend>(std::make_unique<ExecNftables>(o.nftPath), rules, [o] {
      ExecIptables iptables(pathsOf(o));
      return cleanupProxyRules(iptables);
    });
  }
  return std::make_unique<IptablesBackend>(std::make_unique<ExecIptables>(pathsOf(o)), rules,
                                           [nft = o.nftPath] { return removeNftTable(nft); });
}

}  // namespace

std::optional<ProxyMode> parseProxyMode(std::string_view name) {
  if (name == "iptables") return ProxyMode::kIptables;
  if (name == "nftables") return ProxyMode::kNftables;
  return std::nullopt;
}

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options)
    : ServiceProxy(client, options, backendFor(options)) {}

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options,
                           std::unique_ptr<Iptables> iptables)
    : ServiceProxy(client, options,
                   std::make_unique<IptablesBackend>(std::move(iptables),
                                                     RuleOptions{options.clusterCIDR})) {}

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options,
                           std::unique_ptr<Nftables> nft)
    : ServiceProxy(
          client, options,
          std::make_unique<NftablesBackend>(std::move(nft), RuleOptions{options.clusterCIDR})) {}

ServiceProxy::ServiceProxy(client::RestClient& client, ProxyOptions options,
                           std::unique_ptr<ProxyBackend> backend)
    : client_(client),
      options_(std::move(options)),
      backend_(std::move(backend)),
      services_(client::SharedInformers::informerOf(options_.informers, client_,
                                                    client::resources::kServices)),
      slices_(client::SharedInformers::informerOf(options_.informers, client_,
                                                  client::resources::kEndpointSlices)),
      sync_({services_.get(), slices_.get()}, [this] { return syncRules(); },
            {options_.minSyncInterval, options_.maxSyncInterval, options_.retryInterval}) {
  // After CoalescedSync's own handlers: each of these asks for a sync again once it has noted the
  // change, so no sync can miss it.
  services_->addHandlers({[this](const json& svc) { serviceChanged(serviceKey(svc)); },
                         [this](const json&, const json& svc) { serviceChanged(serviceKey(svc)); },
                         [this](const json& svc) { serviceChanged(serviceKey(svc)); }});
  slices_->addHandlers({[this](const json& slice) { sliceChanged(nullptr, &slice); },
                       [this](const json& old, const json& slice) { sliceChanged(&old, &slice); },
                       [this](const json& slice) { sliceChanged(&slice, nullptr); }});
}

ServiceProxy::~ServiceProxy() { stop(); }

Status ServiceProxy::start() {
  if (started_) return Status::Ok();
  if (Status s = backend_->start(); !s.ok()) return s;
  if (!sync_.startInformers(options_.informerSyncTimeout)) {
    LOG_WARN("proxy: informers not synced after {} ms; rules follow once they are",
             options_.informerSyncTimeout.count());
  }
  sync_.startSyncing();
  started_ = true;
  LOG_INFO("proxy: syncing {} rules for node {} ({})", backend_->mode(), options_.nodeName,
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
    input.service = services_->get(key);
    for (const std::string& sliceKey : sliceKeys[key]) {
      if (auto slice = slices_->get(sliceKey)) input.slices.push_back(std::move(*slice));
    }
  }
  return out;
}

bool ServiceProxy::syncRules() {
  // Before both caches are filled, a sync would delete the rules of services not yet listed.
  if (!services_->hasSynced() || !slices_->hasSynced()) return false;
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
    std::vector<json> services = services_->list(), slices = slices_->list();
    t1 = std::chrono::steady_clock::now();
    text = backend_->prepareFull(services, slices);
  } else {
    std::map<std::string, ServiceInput> inputs = readServices(changed);
    t1 = std::chrono::steady_clock::now();
    text = backend_->preparePartial(inputs);
  }
  auto t2 = std::chrono::steady_clock::now();
  if (!full && text.empty()) {  // nothing changed
    backend_->commit();
    return true;
  }
  Status s = backend_->apply(text);
  auto t3 = std::chrono::steady_clock::now();
  std::lock_guard lock(statsMu_);
  if (!s.ok()) {
    ++stats_.failures;
    LOG_ERROR("proxy: {}", s.message());
    // The kernel's state is unknown now: the retry rewrites everything, after the backend read
    // what is there (someone may have removed our rules).
    needFullSync_ = true;
    backend_->recover();
    return false;
  }
  backend_->commit();
  if (full) {
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
  stats_.lastRegenerated = backend_->lastRegenerated();
  stats_.servicePorts = backend_->servicePorts();
  stats_.endpoints = backend_->endpoints();
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
  needFullSync_ = true;
  return backend_->cleanup();
}

Status cleanupAllProxyRules(const ProxyOptions& options) {
  ExecIptables iptables(pathsOf(options));
  Status s = cleanupProxyRules(iptables);
  Status n = removeNftTable(options.nftPath);
  return s.ok() ? n : s;
}

}  // namespace minik8s::proxy
