#include "proxy/nft_rules.h"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "fmt/format.h"

namespace minik8s::proxy {

namespace {

using Out = std::back_insert_iterator<std::string>;

// "ns/svc/tcp/port" of a service port, as kube-proxy's nftables mode names its chains.
std::string portSuffix(const ServicePort& sp) {
  auto colon = sp.name.find(':');
  std::string port = colon == std::string::npos ? "" : sp.name.substr(colon + 1);
  return fmt::format("{}/{}/{}", sp.name.substr(0, colon), sp.protocol, port);
}

std::string hash8(const std::string& text) { return hash16(text).substr(0, 8); }

// nft names may not hold ':': an endpoint "ip:port" is written "ip/port".
std::string endpointSuffix(const std::string& endpoint) {
  std::string out = endpoint;
  std::replace(out.begin(), out.end(), ':', '/');
  return out;
}

std::string_view endpointIP(const std::string& endpoint) {
  return std::string_view(endpoint).substr(0, endpoint.rfind(':'));
}

void rule(std::string& text, std::string_view chain, std::string_view body) {
  fmt::format_to(Out(text), "add rule {} {} {}\n", kNftTable, chain, body);
}

// Target i of n is taken with probability 1/(n-i) among those left (uniform overall), as the
// iptables mode's statistic matches: one rule per target. An inline `numgen ... map` would make
// an anonymous map per service, and the kernel's cost per new set grows with the sets of the table
// (1,000 services: 0.2 s of a full sync instead of 0.1 s).
std::string pick(size_t i, size_t n) {
  return i + 1 < n ? fmt::format("numgen random mod {} == 0 ", n - i) : std::string();
}

void addPortRules(const ServicePort& sp, const RuleOptions& options, NftServiceRules& r,
                  std::set<std::string>& ips) {
  ++r.servicePorts;
  const std::string& proto = sp.protocol;
  bool clusterIP = !sp.clusterIP.empty() && sp.port > 0;
  if (sp.endpoints.empty()) {
    if (clusterIP) {
      r.noEndpointServices.push_back({fmt::format("{} . {} . {}", sp.clusterIP, proto, sp.port)});
    }
    if (sp.nodePort > 0) {
      r.noEndpointNodePorts.push_back({fmt::format("{} . {}", proto, sp.nodePort)});
    }
    return;
  }
  std::string suffix = portSuffix(sp);
  std::string hash = hash8(sp.name + proto);
  ChainRules svc{"service-" + hash + "-" + suffix, {}};
  if (clusterIP) {
    r.serviceIps.push_back(
        {fmt::format("{} . {} . {}", sp.clusterIP, proto, sp.port), "goto " + svc.name});
    if (!options.clusterCIDR.empty()) {
      rule(svc.rules, svc.name,
           fmt::format("ip daddr {} {} dport {} ip saddr != {} jump mark-for-masquerade",
                       sp.clusterIP, proto, sp.port, options.clusterCIDR));
    }
  }
  size_t n = sp.endpoints.size();
  r.endpoints += static_cast<int>(n);
  for (const std::string& ep : sp.endpoints) ips.emplace(endpointIP(ep));
  if (sp.affinitySeconds > 0) {
    // A chain and a timed set per endpoint: a client in the set goes back to that endpoint.
    std::vector<std::string> targets;
    for (const std::string& ep : sp.endpoints) {
      std::string tail = suffix + "__" + endpointSuffix(ep);
      ChainRules chain{"endpoint-" + hash8(sp.name + proto + ep) + "-" + tail, {}};
      NftAffinitySet set{
          "affinity-" + hash8(fmt::format("{}{}{}/{}", sp.name, proto, ep, sp.affinitySeconds)) +
              "-" + tail,
          sp.affinitySeconds};
      rule(svc.rules, svc.name, fmt::format("ip saddr @{} goto {}", set.name, chain.name));
      rule(chain.rules, chain.name, fmt::format("update @{} {{ ip saddr }}", set.name));
      rule(chain.rules, chain.name, fmt::format("meta l4proto {} dnat to {}", proto, ep));
      targets.push_back("goto " + chain.name);
      r.chains.push_back(std::move(chain));
      r.affinitySets.push_back(std::move(set));
    }
    for (size_t i = 0; i < n; ++i) rule(svc.rules, svc.name, pick(i, n) + targets[i]);
  } else {
    for (size_t i = 0; i < n; ++i) {
      rule(svc.rules, svc.name,
           fmt::format("{}meta l4proto {} dnat to {}", pick(i, n), proto, sp.endpoints[i]));
    }
  }
  if (sp.nodePort > 0) {
    ChainRules ext{"external-" + hash + "-" + suffix, {}};
    rule(ext.rules, ext.name, "jump mark-for-masquerade");
    rule(ext.rules, ext.name, "goto " + svc.name);
    r.nodePorts.push_back({fmt::format("{} . {}", proto, sp.nodePort), "goto " + ext.name});
    r.chains.push_back(std::move(ext));
  }
  r.chains.push_back(std::move(svc));
}

template <typename T, typename Key>
void sortUnique(std::vector<T>& v, Key key) {
  std::ranges::stable_sort(v, {}, key);
  auto dup = std::ranges::unique(v, {}, key);
  v.erase(dup.begin(), dup.end());
}

// The fixed part of the table: hooked chains, maps and sets (declared, idempotent).
constexpr std::string_view kDeclarations =
    "add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }\n"
    "add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }\n"
    "add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }\n"
    "add chain ip kube-proxy filter-input { type filter hook input priority -110 ; }\n"
    "add chain ip kube-proxy filter-forward { type filter hook forward priority -110 ; }\n"
    "add chain ip kube-proxy filter-output { type filter hook output priority -110 ; }\n"
    "add chain ip kube-proxy services\n"
    "add chain ip kube-proxy masquerading\n"
    "add chain ip kube-proxy mark-for-masquerade\n"
    "add chain ip kube-proxy endpoints-check\n"
    "add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }\n"
    "add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; }\n"
    "add set ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service ; }\n"
    "add set ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service ; }\n"
    "add set ip kube-proxy hairpin { type ipv4_addr . ipv4_addr ; }\n";

// The fixed chains' rules, each chain flushed first; the maps and sets flushed.
constexpr std::string_view kFixedRules =
    "flush chain ip kube-proxy nat-prerouting\n"
    "add rule ip kube-proxy nat-prerouting jump services\n"
    "flush chain ip kube-proxy nat-output\n"
    "add rule ip kube-proxy nat-output jump services\n"
    "flush chain ip kube-proxy nat-postrouting\n"
    "add rule ip kube-proxy nat-postrouting jump masquerading\n"
    "flush chain ip kube-proxy filter-input\n"
    "add rule ip kube-proxy filter-input ct state new jump endpoints-check\n"
    "flush chain ip kube-proxy filter-forward\n"
    "add rule ip kube-proxy filter-forward ct state new jump endpoints-check\n"
    "flush chain ip kube-proxy filter-output\n"
    "add rule ip kube-proxy filter-output ct state new jump endpoints-check\n"
    "flush chain ip kube-proxy services\n"
    "add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips\n"
    "add rule ip kube-proxy services fib daddr type local ip daddr != 127.0.0.0/8 "
    "meta l4proto . th dport vmap @service-nodeports\n"
    "flush chain ip kube-proxy masquerading\n"
    "add rule ip kube-proxy masquerading ct status dnat ip saddr . ip daddr @hairpin "
    "masquerade fully-random\n"
    "add rule ip kube-proxy masquerading mark and 0x4000 == 0 return\n"
    "add rule ip kube-proxy masquerading mark set mark xor 0x4000 masquerade fully-random\n"
    "flush chain ip kube-proxy mark-for-masquerade\n"
    "add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000\n"
    "flush chain ip kube-proxy endpoints-check\n"
    "add rule ip kube-proxy endpoints-check ip daddr . meta l4proto . th dport "
    "@no-endpoint-services reject\n"
    "add rule ip kube-proxy endpoints-check fib daddr type local meta l4proto . th dport "
    "@no-endpoint-nodeports reject\n"
    "flush map ip kube-proxy service-ips\n"
    "flush map ip kube-proxy service-nodeports\n"
    "flush set ip kube-proxy no-endpoint-services\n"
    "flush set ip kube-proxy no-endpoint-nodeports\n"
    "flush set ip kube-proxy hairpin\n";

void declareSet(std::string& text, const NftAffinitySet& set) {
  fmt::format_to(Out(text),
                 "add set {} {} {{ type ipv4_addr ; flags dynamic,timeout ; timeout {}s ; }}\n",
                 kNftTable, set.name, set.timeoutSeconds);
}

void writeChain(std::string& text, const ChainRules& chain) {
  fmt::format_to(Out(text), "flush chain {} {}\n", kNftTable, chain.name);
  text += chain.rules;
}

// One command for many elements: `verb element ip kube-proxy NAME { e1, e2 }` (keys only to
// delete).
void elements(std::string& text, std::string_view verb, std::string_view name,
              const std::vector<const NftElement*>& items) {
  if (items.empty()) return;
  fmt::format_to(Out(text), "{} element {} {} {{ ", verb, kNftTable, name);
  bool first = true;
  for (const NftElement* e : items) {
    text += first ? "" : ", ";
    first = false;
    text += e->key;
    if (verb == "add" && !e->value.empty()) {
      text += " : ";
      text += e->value;
    }
  }
  text += " }\n";
}

void hairpinElements(std::string& text, std::string_view verb,
                     const std::vector<std::string>& ips) {
  std::vector<NftElement> items;
  items.reserve(ips.size());
  for (const std::string& ip : ips) items.push_back({ip + " . " + ip});
  std::vector<const NftElement*> pointers;
  for (const NftElement& e : items) pointers.push_back(&e);
  elements(text, verb, "hairpin", pointers);
}

using ElementList = std::vector<NftElement> NftServiceRules::*;
constexpr std::pair<ElementList, std::string_view> kElementLists[] = {
    {&NftServiceRules::serviceIps, "service-ips"},
    {&NftServiceRules::nodePorts, "service-nodeports"},
    {&NftServiceRules::noEndpointServices, "no-endpoint-services"},
    {&NftServiceRules::noEndpointNodePorts, "no-endpoint-nodeports"},
};

// Deletes `chains` (flushed first: they may jump to each other) and `sets`.
void deleteObjects(std::string& text, const std::vector<std::string_view>& chains,
                   const std::vector<std::string_view>& sets) {
  for (std::string_view c : chains) fmt::format_to(Out(text), "flush chain {} {}\n", kNftTable, c);
  for (std::string_view c : chains) fmt::format_to(Out(text), "delete chain {} {}\n", kNftTable, c);
  for (std::string_view s : sets) fmt::format_to(Out(text), "delete set {} {}\n", kNftTable, s);
}

}  // namespace

NftServiceRules buildNftServiceRules(const json& service, const std::vector<const json*>& slices,
                                     const RuleOptions& options) {
  NftServiceRules r;
  std::set<std::string> ips;
  for (const ServicePort& sp : servicePorts(service, indexEndpoints(slices))) {
    addPortRules(sp, options, r, ips);
  }
  // Two ports of one service cannot share a name or a key; tolerate it anyway.
  sortUnique(r.chains, &ChainRules::name);
  sortUnique(r.affinitySets, &NftAffinitySet::name);
  for (auto [list, name] : kElementLists) sortUnique(r.*list, &NftElement::key);
  r.endpointIPs.assign(ips.begin(), ips.end());
  return r;
}

NftObjects parseNftObjects(const std::string& listing) {
  NftObjects out;
  std::istringstream in(listing);
  std::string line, kind, name;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    if (!(words >> kind >> name)) continue;
    if (kind == "chain" && (name.starts_with("service-") || name.starts_with("external-") ||
                            name.starts_with("endpoint-"))) {
      out.chains.insert(name);
    } else if (kind == "set" && name.starts_with("affinity-")) {
      out.sets.insert(name);
    }
  }
  return out;
}

std::string nftFullDocument(const std::vector<const NftServiceRules*>& services,
                            const NftObjects& existing) {
  std::vector<const ChainRules*> chains;
  std::vector<const NftAffinitySet*> sets;
  std::set<std::string> ips;
  size_t bytes = 4096;
  for (const NftServiceRules* s : services) {
    for (const ChainRules& c : s->chains) {
      chains.push_back(&c);
      bytes += c.rules.size() + 2 * c.name.size() + 60;
    }
    for (const NftAffinitySet& set : s->affinitySets) sets.push_back(&set);
    ips.insert(s->endpointIPs.begin(), s->endpointIPs.end());
    bytes += s->serviceIps.size() * 120 + s->endpointIPs.size() * 40;
  }
  std::string text;
  text.reserve(bytes);
  fmt::format_to(Out(text), "add table {}\n", kNftTable);
  text += kDeclarations;
  for (const NftAffinitySet* set : sets) declareSet(text, *set);
  for (const ChainRules* c : chains)
    fmt::format_to(Out(text), "add chain {} {}\n", kNftTable, c->name);
  text += kFixedRules;
  for (const ChainRules* c : chains) writeChain(text, *c);
  for (auto [list, name] : kElementLists) {
    std::vector<const NftElement*> items;
    for (const NftServiceRules* s : services) {
      for (const NftElement& e : s->*list) items.push_back(&e);
    }
    elements(text, "add", name, items);
  }
  hairpinElements(text, "add", std::vector<std::string>(ips.begin(), ips.end()));
  // What a previous run or the last sync left and nothing uses now.
  std::set<std::string_view> inUse, setsInUse;
  for (const ChainRules* c : chains) inUse.insert(c->name);
  for (const NftAffinitySet* s : sets) setsInUse.insert(s->name);
  std::vector<std::string_view> staleChains, staleSets;
  for (const std::string& c : existing.chains) {
    if (!inUse.count(c)) staleChains.push_back(c);
  }
  for (const std::string& s : existing.sets) {
    if (!setsInUse.count(s)) staleSets.push_back(s);
  }
  deleteObjects(text, staleChains, staleSets);
  return text;
}

std::string nftPartialDocument(const std::vector<const NftServiceRules*>& before,
                               const std::vector<const NftServiceRules*>& after,
                               const std::vector<std::string>& hairpinGone,
                               const std::vector<std::string>& hairpinNew) {
  std::string text;
  // Elements: every (key, value) that is no longer there goes before any new one is added (a
  // key may move between services, or change its value).
  std::vector<std::vector<const NftElement*>> adds(std::size(kElementLists));
  for (size_t l = 0; l < std::size(kElementLists); ++l) {
    auto [list, name] = kElementLists[l];
    std::vector<const NftElement*> dels;
    for (size_t i = 0; i < before.size(); ++i) {
      const auto& old = before[i]->*list;
      const auto& now = after[i]->*list;
      for (const NftElement& e : old) {
        if (!std::ranges::binary_search(now, e)) dels.push_back(&e);
      }
      for (const NftElement& e : now) {
        if (!std::ranges::binary_search(old, e)) adds[l].push_back(&e);
      }
    }
    elements(text, "delete", name, dels);
  }
  hairpinElements(text, "delete", hairpinGone);
  std::vector<const ChainRules*> changed;
  std::vector<std::string_view> goneChains, goneSets;
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& oldSets = before[i]->affinitySets;
    const auto& newSets = after[i]->affinitySets;
    for (const NftAffinitySet& s : newSets) {
      if (!std::ranges::binary_search(oldSets, s)) declareSet(text, s);
    }
    for (const NftAffinitySet& s : oldSets) {
      if (!std::ranges::binary_search(newSets, s)) goneSets.push_back(s.name);
    }
    diffChains(before[i]->chains, after[i]->chains, changed, goneChains);
  }
  for (const ChainRules* c : changed) {
    fmt::format_to(Out(text), "add chain {} {}\n", kNftTable, c->name);
  }
  for (const ChainRules* c : changed) writeChain(text, *c);
  for (size_t l = 0; l < std::size(kElementLists); ++l) {
    elements(text, "add", kElementLists[l].second, adds[l]);
  }
  hairpinElements(text, "add", hairpinNew);
  deleteObjects(text, goneChains, goneSets);
  return text;
}

std::string nftDeleteTableDocument() {
  return fmt::format("add table {0}\ndelete table {0}\n", kNftTable);
}

}  // namespace minik8s::proxy
