#include "proxy/proxy_rules.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <sstream>
#include <string_view>

#include "common/strings.h"
#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

using Out = std::back_insert_iterator<std::string>;

}  // namespace

std::string serviceChainName(const std::string& servicePortName, const std::string& protocol) {
  return "KUBE-SVC-" + hash16(servicePortName + asciiLower(protocol));
}

std::string externalChainName(const std::string& servicePortName, const std::string& protocol) {
  return "KUBE-EXT-" + hash16(servicePortName + asciiLower(protocol));
}

std::string endpointChainName(const std::string& servicePortName, const std::string& protocol,
                              const std::string& endpoint) {
  return "KUBE-SEP-" + hash16(servicePortName + asciiLower(protocol) + endpoint);
}

namespace {

constexpr std::string_view kFixedNatChains =
    ":KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n"
    ":KUBE-MARK-MASQ - [0:0]\n";

void declareChain(std::string& text, std::string_view name) {
  text += ':';
  text += name;
  text += " - [0:0]\n";
}

// The per-service chains, each declared right before its rules. iptables-nft-restore (1.8.9)
// keeps the chains a document names in a sorted linked list and walks it for every line that
// names a chain, past every name smaller than that one: endpoint chains first and names in
// descending order keep those walks short (the same rules restore in about two thirds of the
// time). A chain is still declared before any rule that jumps to it: KUBE-SVC before the
// KUBE-EXT and KUBE-SERVICES rules, KUBE-SEP before the KUBE-SVC rules.
void appendChains(std::string& text, const std::vector<const ChainRules*>& chains) {
  for (std::string_view prefix : {"KUBE-SEP-", "KUBE-SVC-", "KUBE-EXT-"}) {
    for (auto it = chains.rbegin(); it != chains.rend(); ++it) {
      if ((*it)->name.compare(0, prefix.size(), prefix) != 0) continue;
      declareChain(text, (*it)->name);
      text += (*it)->rules;
    }
  }
}

void appendFilter(std::string& text, const std::string& filterRules) {
  text += "*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n";
  text += filterRules;
  text += "COMMIT\n";
}

// Writes the rules of one service port: its lines of the shared chains into `port` (all but its
// name and protocol), its own chains (KUBE-EXT, KUBE-SEPs, then KUBE-SVC) onto `chains`.
void buildPortRules(const ServicePort& sp, const RuleOptions& options, PortRules& port,
                    std::vector<ChainRules>& chains) {
  const std::string& proto = sp.protocol;
  if (sp.endpoints.empty()) {
    Out filter(port.filterRules);
    if (!sp.clusterIP.empty()) {
      fmt::format_to(filter,
                     "-A KUBE-SERVICES -m comment --comment \"{} has no endpoints\" -d {}/32 "
                     "-p {} -m {} --dport {} -j REJECT --reject-with icmp-port-unreachable\n",
                     sp.name, sp.clusterIP, proto, proto, sp.port);
    }
    if (sp.nodePort > 0) {
      fmt::format_to(filter,
                     "-A KUBE-EXTERNAL-SERVICES -m comment --comment \"{} has no endpoints\" "
                     "-m addrtype --dst-type LOCAL -p {} -m {} --dport {} -j REJECT "
                     "--reject-with icmp-port-unreachable\n",
                     sp.name, proto, proto, sp.nodePort);
    }
    return;
  }
  ChainRules svc{serviceChainName(sp.name, proto), {}};
  Out svcOut(svc.rules);
  if (!sp.clusterIP.empty()) {
    fmt::format_to(Out(port.servicesRules),
                   "-A KUBE-SERVICES -m comment --comment \"{} cluster IP\" -d {}/32 -p {} "
                   "-m {} --dport {} -j {}\n",
                   sp.name, sp.clusterIP, proto, proto, sp.port, svc.name);
    if (!options.clusterCIDR.empty()) {
      fmt::format_to(svcOut,
                     "-A {} -m comment --comment \"{} cluster IP\" ! -s {} -d {}/32 -p {} "
                     "-m {} --dport {} -j KUBE-MARK-MASQ\n",
                     svc.name, sp.name, options.clusterCIDR, sp.clusterIP, proto, proto, sp.port);
    }
  }
  if (sp.nodePort > 0) {
    ChainRules ext{externalChainName(sp.name, proto), {}};
    fmt::format_to(Out(port.nodePortsRules),
                   "-A KUBE-NODEPORTS -m comment --comment {} -p {} -m {} --dport {} -j {}\n",
                   sp.name, proto, proto, sp.nodePort, ext.name);
    fmt::format_to(Out(ext.rules),
                   "-A {} -m comment --comment \"masquerade traffic for {} external "
                   "destinations\" -j KUBE-MARK-MASQ\n-A {} -j {}\n",
                   ext.name, sp.name, ext.name, svc.name);
    chains.push_back(std::move(ext));
  }
  std::vector<std::string> sepChains;
  sepChains.reserve(sp.endpoints.size());
  for (const std::string& ep : sp.endpoints) {
    sepChains.push_back(endpointChainName(sp.name, proto, ep));
  }
  if (sp.affinitySeconds > 0) {
    // A client that used an endpoint recently goes back to it before any balancing.
    for (size_t i = 0; i < sp.endpoints.size(); ++i) {
      fmt::format_to(svcOut,
                     "-A {} -m comment --comment \"{} -> {}\" -m recent --name {} --rcheck "
                     "--seconds {} --reap -j {}\n",
                     svc.name, sp.name, sp.endpoints[i], sepChains[i], sp.affinitySeconds,
                     sepChains[i]);
    }
  }
  // Endpoint i of n is taken with probability 1/(n-i) among those left: uniform overall.
  size_t n = sp.endpoints.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n) {
      fmt::format_to(svcOut,
                     "-A {} -m comment --comment \"{} -> {}\" -m statistic --mode random "
                     "--probability {:.10f} -j {}\n",
                     svc.name, sp.name, sp.endpoints[i], 1.0 / static_cast<double>(n - i),
                     sepChains[i]);
    } else {
      fmt::format_to(svcOut, "-A {} -m comment --comment \"{} -> {}\" -j {}\n", svc.name, sp.name,
                     sp.endpoints[i], sepChains[i]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string& ep = sp.endpoints[i];
    ChainRules sep{std::move(sepChains[i]), {}};
    ++port.endpoints;
    std::string_view ip(ep.data(), ep.rfind(':'));
    // Hairpin: a pod reaching itself through its service must see the node as the source.
    fmt::format_to(Out(sep.rules), "-A {} -m comment --comment {} -s {}/32 -j KUBE-MARK-MASQ\n",
                   sep.name, sp.name, ip);
    std::string_view recent = sp.affinitySeconds > 0 ? " -m recent --name " : "";
    fmt::format_to(Out(sep.rules),
                   "-A {} -m comment --comment {} -p {}{}{}{} -m {} -j DNAT --to-destination "
                   "{}\n",
                   sep.name, sp.name, proto, recent,
                   sp.affinitySeconds > 0 ? std::string_view(sep.name) : "",
                   sp.affinitySeconds > 0 ? " --set" : "", proto, ep);
    chains.push_back(std::move(sep));
  }
  chains.push_back(std::move(svc));
}

// Sorts chains by name, keeping the first of a name: two ports of one service cannot share a
// chain name, but tolerate it.
void sortUniqueChains(std::vector<ChainRules>& chains) {
  std::stable_sort(chains.begin(), chains.end(),
                   [](const ChainRules& a, const ChainRules& b) { return a.name < b.name; });
  chains.erase(
      std::unique(chains.begin(), chains.end(),
                  [](const ChainRules& a, const ChainRules& b) { return a.name == b.name; }),
      chains.end());
}

}  // namespace

namespace {

ServiceRules buildServiceRules(const json& service, const EndpointIndex& endpoints,
                               const RuleOptions& options) {
  ServiceRules result;
  std::vector<ServicePort> ports = servicePorts(service, endpoints);
  result.ports.resize(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    buildPortRules(ports[i], options, result.ports[i], result.chains);
    result.ports[i].name = std::move(ports[i].name);
    result.ports[i].protocol = std::move(ports[i].protocol);
  }
  sortUniqueChains(result.chains);
  return result;
}

}  // namespace

ServiceRules buildServiceRules(const json& service, const std::vector<const json*>& slices,
                               const RuleOptions& options) {
  return buildServiceRules(service, indexEndpoints(slices), options);
}

std::vector<ServiceRules> buildServiceRules(const std::vector<json>& services,
                                            const std::vector<json>& slices,
                                            const RuleOptions& options) {
  std::vector<const json*> all;
  all.reserve(slices.size());
  for (const json& s : slices) all.push_back(&s);
  EndpointIndex endpoints = indexEndpoints(all);
  std::vector<ServiceRules> out;
  out.reserve(services.size());
  for (const json& svc : services) out.push_back(buildServiceRules(svc, endpoints, options));
  return out;
}

ProxyRules assembleProxyRules(const std::vector<const ServiceRules*>& services,
                              const std::set<std::string>& existingNatChains) {
  ProxyRules result;
  // Ports of different services never share a name (it starts with "ns/service"): a stable sort
  // puts them in the same order whatever the order of the services.
  std::vector<const PortRules*> ports;
  std::vector<const ChainRules*> all;
  for (const ServiceRules* s : services) {
    for (const PortRules& p : s->ports) ports.push_back(&p);
    for (const ChainRules& c : s->chains) all.push_back(&c);
  }
  std::stable_sort(ports.begin(), ports.end(), [](const PortRules* a, const PortRules* b) {
    return std::tie(a->name, a->protocol) < std::tie(b->name, b->protocol);
  });
  std::stable_sort(all.begin(), all.end(),
                   [](const ChainRules* a, const ChainRules* b) { return a->name < b->name; });
  all.erase(
      std::unique(all.begin(), all.end(),
                  [](const ChainRules* a, const ChainRules* b) { return a->name == b->name; }),
      all.end());
  for (const PortRules* p : ports) {
    ++result.servicePorts;
    result.endpoints += p->endpoints;
    if (p->endpoints == 0) ++result.servicePortsWithoutEndpoints;
    result.filterRules += p->filterRules;
    result.nodePortsRules += p->nodePortsRules;
    result.servicesRules += p->servicesRules;
  }
  result.servicesRules += kNodePortsJumpRule;

  size_t ruleBytes = 0;
  for (const ChainRules* c : all) {
    result.natChains.insert(result.natChains.end(), c->name);
    ruleBytes += c->rules.size() + c->name.size() + 10;
  }
  std::vector<std::string_view> stale;
  for (const std::string& c : existingNatChains) {
    if (!result.natChains.count(c)) stale.push_back(c);
  }

  std::string& text = result.restoreText;
  text.reserve(ruleBytes + result.filterRules.size() + result.nodePortsRules.size() +
               result.servicesRules.size() + stale.size() * 60 + 1024);
  appendFilter(text, result.filterRules);
  text += "*nat\n";
  text += kFixedNatChains;
  // Stale chains are declared (which flushes them) before any -X so references between them go.
  for (std::string_view c : stale) declareChain(text, c);
  fmt::format_to(Out(text), "-A KUBE-POSTROUTING -m mark ! --mark {0}/{0} -j RETURN\n",
                 kMasqueradeMark);
  fmt::format_to(Out(text), "-A KUBE-POSTROUTING -j MARK --xor-mark {}\n", kMasqueradeMark);
  text +=
      "-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" "
      "-j MASQUERADE --random-fully\n";
  fmt::format_to(Out(text), "-A KUBE-MARK-MASQ -j MARK --or-mark {}\n", kMasqueradeMark);
  appendChains(text, all);
  text += result.nodePortsRules;
  text += result.servicesRules;
  for (std::string_view c : stale) fmt::format_to(Out(text), "-X {}\n", c);
  text += "COMMIT\n";
  return result;
}

ProxyRules buildProxyRules(const std::vector<json>& services, const std::vector<json>& slices,
                           const RuleOptions& options,
                           const std::set<std::string>& existingNatChains) {
  std::vector<ServiceRules> built = buildServiceRules(services, slices, options);
  std::vector<const ServiceRules*> pointers;
  pointers.reserve(built.size());
  for (const ServiceRules& s : built) pointers.push_back(&s);
  ProxyRules result = assembleProxyRules(pointers, existingNatChains);
  size_t chainCount = 0;
  for (const ServiceRules& s : built) chainCount += s.chains.size();
  result.chains.reserve(chainCount);
  for (ServiceRules& s : built) {
    std::move(s.chains.begin(), s.chains.end(), std::back_inserter(result.chains));
  }
  sortUniqueChains(result.chains);
  return result;
}

void diffChains(const std::vector<ChainRules>& before, const std::vector<ChainRules>& after,
                std::vector<const ChainRules*>& changed, std::vector<std::string_view>& gone) {
  // Both lists are sorted by name: one merge finds the new, changed and gone chains.
  auto a = before.begin();
  for (const ChainRules& c : after) {
    while (a != before.end() && a->name < c.name) gone.push_back((a++)->name);
    if (a != before.end() && a->name == c.name) {
      if (a->rules != c.rules) changed.push_back(&c);
      ++a;
    } else {
      changed.push_back(&c);
    }
  }
  for (; a != before.end(); ++a) gone.push_back(a->name);
}

std::string changedRulesText(const ProxyRules& rules, const ProxyRules& applied) {
  std::vector<const ChainRules*> changed;
  std::vector<std::string_view> gone;
  diffChains(applied.chains, rules.chains, changed, gone);
  auto ifChanged = [](const std::string& now, const std::string& before) {
    return now != before ? &now : nullptr;
  };
  return partialRulesText(changed, gone, ifChanged(rules.filterRules, applied.filterRules),
                          ifChanged(rules.nodePortsRules, applied.nodePortsRules),
                          ifChanged(rules.servicesRules, applied.servicesRules));
}

std::string partialRulesText(const std::vector<const ChainRules*>& changed,
                             const std::vector<std::string_view>& gone,
                             const std::string* filterRules, const std::string* nodePortsRules,
                             const std::string* servicesRules) {
  std::string text;
  if (filterRules) appendFilter(text, *filterRules);
  if (changed.empty() && gone.empty() && !servicesRules && !nodePortsRules) return text;
  text += "*nat\n";
  if (servicesRules) declareChain(text, kServicesChain);
  if (nodePortsRules) declareChain(text, kNodePortsChain);
  for (std::string_view c : gone) declareChain(text, c);
  appendChains(text, changed);
  if (nodePortsRules) text += *nodePortsRules;
  if (servicesRules) text += *servicesRules;
  for (std::string_view c : gone) fmt::format_to(Out(text), "-X {}\n", c);
  text += "COMMIT\n";
  return text;
}

namespace {

bool isPerServiceChain(const std::string& name) {
  return name.rfind("KUBE-SVC-", 0) == 0 || name.rfind("KUBE-SEP-", 0) == 0 ||
         name.rfind("KUBE-EXT-", 0) == 0;
}

}  // namespace

std::vector<std::string> declaredChains(const std::string& save) {
  std::vector<std::string> out;
  std::istringstream in(save);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 2 || line[0] != ':') continue;
    out.push_back(line.substr(1, line.find(' ') - 1));
  }
  return out;
}

std::set<std::string> perServiceChains(const std::string& iptablesSave) {
  std::set<std::string> out;
  for (auto& c : declaredChains(iptablesSave)) {
    if (isPerServiceChain(c)) out.insert(c);
  }
  return out;
}

std::set<std::string> ownedChains(const std::string& iptablesSave, const std::string& table) {
  static const std::set<std::string> kNatFixed{kServicesChain, kNodePortsChain, kPostroutingChain,
                                               kMarkMasqChain};
  static const std::set<std::string> kFilterFixed{kServicesChain, kExternalServicesChain};
  const auto& fixed = table == "nat" ? kNatFixed : kFilterFixed;
  std::set<std::string> out;
  for (auto& c : declaredChains(iptablesSave)) {
    if (fixed.count(c) || (table == "nat" && isPerServiceChain(c))) out.insert(c);
  }
  return out;
}

std::string deleteChainsText(const std::set<std::string>& natChains,
                             const std::set<std::string>& filterChains) {
  std::string text;
  for (const auto& [table, chains] :
       {std::pair{"filter", &filterChains}, std::pair{"nat", &natChains}}) {
    if (chains->empty()) continue;
    text += fmt::format("*{}\n", table);
    for (const auto& c : *chains) text += fmt::format(":{} - [0:0]\n", c);
    for (const auto& c : *chains) text += fmt::format("-X {}\n", c);
    text += "COMMIT\n";
  }
  return text;
}

std::vector<JumpRule> jumpRules() {
  auto jump = [](const char* comment, const char* target) {
    return std::vector<std::string>{"-m", "comment", "--comment", comment, "-j", target};
  };
  auto newJump = [](const char* comment, const char* target) {
    return std::vector<std::string>{"-m",      "conntrack", "--ctstate", "NEW", "-m",
                                    "comment", "--comment", comment,     "-j",  target};
  };
  return {
      {"nat", "PREROUTING", jump("kubernetes service portals", kServicesChain)},
      {"nat", "OUTPUT", jump("kubernetes service portals", kServicesChain)},
      {"nat", "POSTROUTING", jump("kubernetes postrouting rules", kPostroutingChain)},
      {"filter", "INPUT",
       newJump("kubernetes externally-visible service portals", kExternalServicesChain)},
      {"filter", "FORWARD", newJump("kubernetes service portals", kServicesChain)},
      {"filter", "OUTPUT", newJump("kubernetes service portals", kServicesChain)},
  };
}

}  // namespace minik8s::proxy
