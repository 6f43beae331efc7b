// ServiceRulesCache: the rules of every service as the last successful sync wrote them, kept per
// service, so that a partial sync regenerates only the services whose Service or EndpointSlices
// changed and reuses the chains of all others (as kube-proxy does): no copy of every object, no
// generation of every chain, per change.
//
// Each sync is a transaction: prepareFull() or preparePartial() builds the new rules and returns
// the document to restore, holding the new rules pending; commit() makes them the applied ones
// once iptables-restore succeeded, discard() drops them (the kernel still has the applied ones).
// The documents are exactly buildProxyRules()'s and changedRulesText()'s for the same objects.
//
// Not thread-safe: owned by the sync thread.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status.h"
#include "proxy/proxy_rules.h"

namespace minik8s::proxy {

// What a partial sync reads for one changed service key.
struct ServiceInput {
  std::optional<json> service;  // nullopt: the Service is gone
  std::vector<json> slices;     // its EndpointSlices (others are ignored)
};

class ServiceRulesCache {
 public:
  explicit ServiceRulesCache(RuleOptions options) : options_(std::move(options)) {}

  // A full sync: every service's rules from the informers' lists. The whole document, which also
  // deletes the chains of `existingNatChains` no longer in use.
  ProxyRules prepareFull(const std::vector<json>& services, const std::vector<json>& slices,
                         const std::set<std::string>& existingNatChains);
  // A partial sync: regenerates the services of `changed` (by serviceKey()) only, against the
  // applied rules. The partial document; "" when nothing differs.
  std::string preparePartial(const std::map<std::string, ServiceInput>& changed);
  void commit();
  void discard();

  // Of the applied rules: the per-service nat chains in use, and the totals.
  std::set<std::string> chainNames() const;
  int servicePorts() const { return servicePorts_; }
  int endpoints() const { return endpoints_; }
  // Services whose rules the last prepare built (every one for a full sync).
  int lastRegenerated() const { return lastRegenerated_; }

 private:
  // A port's place in the document: (name, protocol, its index in its service's ports).
  using PortKey = std::tuple<std::string_view, std::string_view, size_t>;

  void indexPorts(const std::string& key, const ServiceRules& rules, bool add);
  // The rules of one shared chain (`field` of each port, in the document's order) with the ports
  // of the pending services in place of their applied ones.
  std::string mergedRules(std::string PortRules::*field) const;

  RuleOptions options_;
  std::map<std::string, ServiceRules, std::less<>> applied_;  // by serviceKey
  // Every applied port, in the document's order, with its service's key.
  std::map<PortKey, std::pair<const std::string*, const PortRules*>> ports_;
  int servicePorts_ = 0, endpoints_ = 0;

  // The prepared sync: the new rules of its services (empty ones: the service is gone), and
  // whether they replace all applied ones.
  std::map<std::string, ServiceRules, std::less<>> pending_;
  bool pendingFull_ = false;
  int lastRegenerated_ = 0;
};

}  // namespace minik8s::proxy
