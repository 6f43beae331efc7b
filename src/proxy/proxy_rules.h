// Proxy rules: the pure half of the service proxy. From Services and EndpointSlices (JSON objects
// as the API returns them) it builds the iptables-restore document kube-proxy's iptables mode
// would write, and names chains the way kube-proxy does so rules stay recognisable and stable:
//
//   nat    PREROUTING, OUTPUT -> KUBE-SERVICES            (jumps kept by the ServiceProxy)
//          KUBE-SERVICES  -d clusterIP --dport p -> KUBE-SVC-<hash>, last: LOCAL -> KUBE-NODEPORTS
//          KUBE-NODEPORTS --dport nodePort -> KUBE-EXT-<hash> (mark for masquerade) -> KUBE-SVC
//          KUBE-SVC-<hash> statistic random over ready endpoints (and -m recent for ClientIP
//                          affinity) -> KUBE-SEP-<hash>: hairpin mark, DNAT to ip:port
//          POSTROUTING -> KUBE-POSTROUTING: MASQUERADE what carries mark 0x4000
//   filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES: REJECT a service port without ready endpoints
//
// Only EndpointSlices (label kubernetes.io/service-name, addressType IPv4) give endpoints; an
// endpoint counts when conditions.ready is not false. Pure functions, thread-safe.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "proxy/iptables.h"
#include "proxy/service_ports.h"

namespace minik8s::proxy {

// The fixed chains the proxy owns, and the prefixes of the per-service ones.
inline constexpr const char* kServicesChain = "KUBE-SERVICES";
inline constexpr const char* kNodePortsChain = "KUBE-NODEPORTS";
inline constexpr const char* kPostroutingChain = "KUBE-POSTROUTING";
inline constexpr const char* kMarkMasqChain = "KUBE-MARK-MASQ";
inline constexpr const char* kExternalServicesChain = "KUBE-EXTERNAL-SERVICES";
inline constexpr const char* kMasqueradeMark = "0x4000";
// The last rule of nat KUBE-SERVICES, after every service port's: on to KUBE-NODEPORTS.
inline constexpr std::string_view kNodePortsJumpRule =
    "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be "
    "the last rule in this chain\" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n";

// KUBE-SVC-<16 chars of base32(sha256(servicePortName + protocol))>, protocol lower-case.
std::string serviceChainName(const std::string& servicePortName, const std::string& protocol);
// KUBE-EXT-<same hash>: the NodePort entry of a service port.
std::string externalChainName(const std::string& servicePortName, const std::string& protocol);
// KUBE-SEP-<hash of servicePortName + protocol + "ip:port">.
std::string endpointChainName(const std::string& servicePortName, const std::string& protocol,
                              const std::string& endpoint);

struct RuleOptions {
  // Pod network; traffic to a ClusterIP from outside it is masqueraded. Empty: no such rule.
  std::string clusterCIDR;
};

// One per-service nat chain (KUBE-SVC/EXT/SEP-*) and its "-A" lines.
struct ChainRules {
  std::string name;
  std::string rules;
};

// The chains of `after` that are new or whose rules differ from `before`'s onto `changed`, the
// names of `before`'s chains `after` no longer has onto `gone`. Both lists sorted by name.
void diffChains(const std::vector<ChainRules>& before, const std::vector<ChainRules>& after,
                std::vector<const ChainRules*>& changed, std::vector<std::string_view>& gone);

// What one build produced: the whole document, and its parts for partial syncs.
struct ProxyRules {
  // The whole iptables-restore --noflush document: every chain of the proxy rewritten, stale ones
  // deleted. Chains come in an order that keeps iptables-nft-restore's chain bookkeeping short
  // (endpoint chains, then service chains, then external chains, each in descending name order;
  // KUBE-NODEPORTS and KUBE-SERVICES last), which makes the same rules cheaper to restore.
  std::string restoreText;
  std::set<std::string> natChains;  // per-service nat chains now in use (KUBE-SVC/EXT/SEP-*)
  std::string filterRules;          // the filter table's KUBE-SERVICES/KUBE-EXTERNAL-SERVICES lines
  std::string nodePortsRules;       // nat KUBE-NODEPORTS
  std::string servicesRules;        // nat KUBE-SERVICES, ending with the jump to KUBE-NODEPORTS
  std::vector<ChainRules> chains;   // per-service nat chains, sorted by name
  int servicePorts = 0;             // service ports with a ClusterIP or NodePort
  int endpoints = 0;                // KUBE-SEP chains written
  int servicePortsWithoutEndpoints = 0;
};

// One service port's lines in the chains every service shares, and the key the document orders
// ports by.
struct PortRules {
  std::string name;            // "ns/svc:port"
  std::string protocol;        // lower-case
  std::string servicesRules;   // its nat KUBE-SERVICES line (none without endpoints)
  std::string nodePortsRules;  // its nat KUBE-NODEPORTS line
  std::string filterRules;     // its filter REJECT lines (only without endpoints)
  int endpoints = 0;           // KUBE-SEP chains written for it
};

// The rules of one Service, every port of it: what a partial sync regenerates when the Service or
// one of its EndpointSlices changes.
struct ServiceRules {
  std::vector<PortRules> ports;    // by (name, protocol); a duplicate port after the first
  std::vector<ChainRules> chains;  // its KUBE-SVC/EXT/SEP chains, by name, each once
};

// The rules of `service`; `slices` may hold others (those of another service are ignored).
ServiceRules buildServiceRules(const json& service, const std::vector<const json*>& slices,
                               const RuleOptions& options);
// The rules of every service of `services`, in that order.
std::vector<ServiceRules> buildServiceRules(const std::vector<json>& services,
                                            const std::vector<json>& slices,
                                            const RuleOptions& options);

// The whole document (ProxyRules::restoreText and the shared chains' rules) from every service's
// rules. `chains` is left empty: the caller holds them in `services`.
ProxyRules assembleProxyRules(const std::vector<const ServiceRules*>& services,
                              const std::set<std::string>& existingNatChains);

// `existingNatChains`: per-service nat chains present in the kernel (from the last sync, or read
// from iptables-save at start); those not in use any more are flushed and deleted by the same
// document.
ProxyRules buildProxyRules(const std::vector<json>& services, const std::vector<json>& slices,
                           const RuleOptions& options,
                           const std::set<std::string>& existingNatChains);

// A partial sync, as kube-proxy's since 1.28: the document that turns the kernel from `applied`
// (the rules of the last restore that succeeded) into `rules`, writing only the per-service
// chains that are new or whose rules differ, KUBE-SERVICES / KUBE-NODEPORTS / the filter chains
// only when they differ, and deleting the per-service chains `rules` no longer has. "" when
// nothing differs. Every chain it keeps is unchanged, so everything they jump to still exists.
std::string changedRulesText(const ProxyRules& rules, const ProxyRules& applied);
// The same document from its parts: the per-service chains to write (sorted by name), those to
// delete, and the shared chains' new rules where they changed (nullptr: unchanged).
std::string partialRulesText(const std::vector<const ChainRules*>& changed,
                             const std::vector<std::string_view>& gone,
                             const std::string* filterRules, const std::string* nodePortsRules,
                             const std::string* servicesRules);

// Chain names declared in an iptables-save output (":NAME POLICY [p:b]").
std::vector<std::string> declaredChains(const std::string& iptablesSave);
// The per-service nat chains (KUBE-SVC-/KUBE-EXT-/KUBE-SEP-) named in an iptables-save output.
std::set<std::string> perServiceChains(const std::string& iptablesSave);
// Every chain of the proxy (fixed and per-service) named in an iptables-save output of `table`.
std::set<std::string> ownedChains(const std::string& iptablesSave, const std::string& table);

// The document that flushes and deletes the given chains of nat and filter (for cleanup).
std::string deleteChainsText(const std::set<std::string>& natChains,
                             const std::set<std::string>& filterChains);

// The jumps from built-in chains into the proxy's chains.
std::vector<JumpRule> jumpRules();

}  // namespace minik8s::proxy
