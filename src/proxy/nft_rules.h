// Nftables rules: the pure half of the proxy's nftables mode (kube-proxy's `--proxy-mode=nftables`,
// in fewer objects). Everything lives in one table, `ip kube-proxy`:
//
//   nat-prerouting, nat-output (dstnat) -> services:
//       ip daddr . proto . port vmap @service-ips        clusterIP:port -> goto service-<port>
//       fib daddr local: proto . port vmap @service-nodeports  nodePort -> goto external-<port>
//   service-<hash>-ns/svc/proto/port: mark clusterIP traffic from outside the pod network for
//       masquerade, then one rule per ready endpoint, `numgen random mod (n-i) == 0 dnat to
//       ip:port` (uniform, as the iptables mode's statistic matches; no chain and no anonymous map
//       per endpoint). With ClientIP affinity the endpoints get chains of their own
//       (endpoint-<hash>-) and a timed set each (affinity-<hash>-...): a client found in an
//       endpoint's set goes back to it, as kube-proxy's nftables mode does.
//   external-<hash>-...: mark for masquerade, goto the service chain.
//   nat-postrouting (srcnat) -> masquerading: hairpin (a pod reaching itself through its service:
//       `ip saddr . ip daddr @hairpin`, one element per endpoint address) and what carries mark
//       0x4000 are masqueraded.
//   filter-input/forward/output (ct state new) -> endpoints-check: a service port without ready
//       endpoints is rejected from @no-endpoint-services / @no-endpoint-nodeports.
//
// A sync is one `nft -f` transaction: the full document rewrites every chain, map and set it owns
// (affinity sets keep their clients) and deletes the stale ones; a partial document (built for
// NftablesBackend) writes only what a changed service changed. Pure functions, thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proxy/proxy_rules.h"
#include "proxy/service_ports.h"

namespace minik8s::proxy {

// The table every command of the documents names.
inline constexpr std::string_view kNftTable = "ip kube-proxy";

// A map element (key : value) or, with an empty value, a set element.
struct NftElement {
  std::string key;
  std::string value;
  auto operator<=>(const NftElement&) const = default;
};

// An affinity set: `update`d with the client address by its endpoint chain.
struct NftAffinitySet {
  std::string name;
  int64_t timeoutSeconds = 0;
  auto operator<=>(const NftAffinitySet&) const = default;
};

// What one Service puts into the table, every port of it: its chains (each with its whole
// "add rule" lines) and its elements of the shared maps and sets. Sorted, each name once.
struct NftServiceRules {
  std::vector<ChainRules> chains;               // service-, external-, endpoint- chains by name
  std::vector<NftAffinitySet> affinitySets;     // by name
  std::vector<NftElement> serviceIps;           // @service-ips
  std::vector<NftElement> nodePorts;            // @service-nodeports
  std::vector<NftElement> noEndpointServices;   // @no-endpoint-services
  std::vector<NftElement> noEndpointNodePorts;  // @no-endpoint-nodeports
  std::vector<std::string> endpointIPs;         // addresses for @hairpin, each once
  int servicePorts = 0;
  int endpoints = 0;
};

NftServiceRules buildNftServiceRules(const json& service, const std::vector<const json*>& slices,
                                     const RuleOptions& options);

// The table's chains and sets as the kernel has them (`nft list table`), for a full sync to delete
// what is stale.
struct NftObjects {
  std::set<std::string> chains;  // per-service chains (service-, external-, endpoint-)
  std::set<std::string> sets;    // affinity sets
};
NftObjects parseNftObjects(const std::string& listing);

// The whole document: the table, its fixed chains, maps and sets rewritten, every service's
// chains and elements, and `existing` objects no service uses any more deleted.
std::string nftFullDocument(const std::vector<const NftServiceRules*>& services,
                            const NftObjects& existing);

// The changes between what the kernel has (`before`, for the services that changed) and the new
// rules of those services (`after`, same order; an empty NftServiceRules for a service gone);
// `hairpinGone` / `hairpinNew`: addresses no service / a first service uses now. "" when nothing
// differs.
std::string nftPartialDocument(const std::vector<const NftServiceRules*>& before,
                               const std::vector<const NftServiceRules*>& after,
                               const std::vector<std::string>& hairpinGone,
                               const std::vector<std::string>& hairpinNew);

// The document that removes the table, whatever it holds (cleanup, a switch to iptables mode).
std::string nftDeleteTableDocument();

}  // namespace minik8s::proxy
