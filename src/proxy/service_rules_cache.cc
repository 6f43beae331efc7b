#include "proxy/service_rules_cache.h"

#include <algorithm>
#include <utility>

namespace minik8s::proxy {

namespace {

const ServiceRules kNoRules;

// The ports of `rules` that write something into one shared chain, with what they write.
bool sameSharedRules(const ServiceRules& a, const ServiceRules& b, std::string PortRules::*field) {
  auto writing = [field](const ServiceRules& r) {
    std::vector<const PortRules*> out;
    for (const PortRules& p : r.ports) {
      if (!(p.*field).empty()) out.push_back(&p);
    }
    return out;
  };
  return std::ranges::equal(
      writing(a), writing(b), [field](const PortRules* x, const PortRules* y) {
        return x->name == y->name && x->protocol == y->protocol && x->*field == y->*field;
      });
}

}  // namespace

ProxyRules ServiceRulesCache::prepareFull(const std::vector<json>& services,
                                          const std::vector<json>& slices,
                                          const std::set<std::string>& existingNatChains) {
  discard();
  std::vector<ServiceRules> built = buildServiceRules(services, slices, options_);
  for (size_t i = 0; i < services.size(); ++i) {
    pending_[serviceKey(services[i])] = std::move(built[i]);
  }
  pendingFull_ = true;
  lastRegenerated_ = static_cast<int>(services.size());
  std::vector<const ServiceRules*> all;
  all.reserve(pending_.size());
  for (const auto& [key, rules] : pending_) all.push_back(&rules);
  return assembleProxyRules(all, existingNatChains);
}

std::string ServiceRulesCache::preparePartial(const std::map<std::string, ServiceInput>& changed) {
  discard();
  lastRegenerated_ = static_cast<int>(changed.size());
  std::vector<const ChainRules*> changedChains;
  std::vector<std::string_view> gone;
  bool filterChanged = false, nodePortsChanged = false, servicesChanged = false;
  for (const auto& [key, input] : changed) {
    ServiceRules& next = pending_[key];
    if (input.service) {
      std::vector<const json*> slices;
      slices.reserve(input.slices.size());
      for (const json& s : input.slices) slices.push_back(&s);
      next = buildServiceRules(*input.service, slices, options_);
    }
    auto it = applied_.find(key);
    const ServiceRules& prev = it == applied_.end() ? kNoRules : it->second;
    diffChains(prev.chains, next.chains, changedChains, gone);
    filterChanged |= !sameSharedRules(prev, next, &PortRules::filterRules);
    nodePortsChanged |= !sameSharedRules(prev, next, &PortRules::nodePortsRules);
    servicesChanged |= !sameSharedRules(prev, next, &PortRules::servicesRules);
  }
  std::ranges::sort(changedChains, {}, &ChainRules::name);
  std::ranges::sort(gone);
  std::optional<std::string> filter, nodePorts, services;
  if (filterChanged) filter = mergedRules(&PortRules::filterRules);
  if (nodePortsChanged) nodePorts = mergedRules(&PortRules::nodePortsRules);
  if (servicesChanged) {
    services = mergedRules(&PortRules::servicesRules);
    *services += kNodePortsJumpRule;
  }
  auto orNull = [](const std::optional<std::string>& s) { return s ? &*s : nullptr; };
  return partialRulesText(changedChains, gone, orNull(filter), orNull(nodePorts), orNull(services));
}

std::string ServiceRulesCache::mergedRules(std::string PortRules::*field) const {
  std::vector<std::pair<PortKey, const PortRules*>> fresh;
  for (const auto& [key, rules] : pending_) {
    for (size_t i = 0; i < rules.ports.size(); ++i) {
      const PortRules& p = rules.ports[i];
      if (!(p.*field).empty()) fresh.push_back({PortKey{p.name, p.protocol, i}, &p});
    }
  }
  std::ranges::sort(fresh, {}, &std::pair<PortKey, const PortRules*>::first);
  std::string out;
  auto f = fresh.begin();
  for (const auto& [portKey, owned] : ports_) {
    const auto& [owner, port] = owned;
    if (pending_.count(*owner) || (port->*field).empty()) continue;
    for (; f != fresh.end() && f->first < portKey; ++f) out += f->second->*field;
    out += port->*field;
  }
  for (; f != fresh.end(); ++f) out += f->second->*field;
  return out;
}

void ServiceRulesCache::commit() {
  if (pendingFull_) {
    applied_.clear();
    ports_.clear();
    servicePorts_ = endpoints_ = 0;
  }
  for (auto& [key, next] : pending_) {
    if (auto it = applied_.find(key); it != applied_.end()) {
      indexPorts(it->first, it->second, false);
      applied_.erase(it);
    }
    if (next.ports.empty() && next.chains.empty()) continue;
    auto [it, inserted] = applied_.emplace(key, std::move(next));
    indexPorts(it->first, it->second, true);
  }
  discard();
}

void ServiceRulesCache::discard() {
  pending_.clear();
  pendingFull_ = false;
}

void ServiceRulesCache::indexPorts(const std::string& key, const ServiceRules& rules, bool add) {
  int sign = add ? 1 : -1;
  for (size_t i = 0; i < rules.ports.size(); ++i) {
    const PortRules& p = rules.ports[i];
    PortKey portKey{p.name, p.protocol, i};
    if (add) {
      ports_.emplace(portKey, std::pair{&key, &p});
    } else {
      ports_.erase(portKey);
    }
    servicePorts_ += sign;
    endpoints_ += sign * p.endpoints;
  }
}

std::set<std::string> ServiceRulesCache::chainNames() const {
  std::set<std::string> out;
  for (const auto& [key, rules] : applied_) {
    for (const ChainRules& c : rules.chains) out.insert(c.name);
  }
  return out;
}

}  // namespace minik8s::proxy
