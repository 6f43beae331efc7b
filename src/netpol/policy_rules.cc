#include "netpol/policy_rules.h"

#include <algorithm>
#include <map>
#include <optional>

#include "api/object_meta.h"
#include "api/selector.h"
#include "common/cidr.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace minik8s::netpol {

namespace {

using api::member;
using api::stringMember;

struct NamedPort {
  std::string name;
  std::string protocol;
  int64_t port = 0;
};

// A pod, or a node-hosted endpoint standing in for one.
struct Endpoint {
  std::string key;  // ns/name
  std::string ns;
  std::string ip;
  std::string node;
  json labels;
  std::vector<NamedPort> ports;
  const json* pod = nullptr;  // null for node-hosted endpoints
};

// One port entry of a rule, resolved: no protocol = every port of every protocol.
struct PortMatch {
  std::string protocol;  // lower case
  int64_t port = 0;      // 0: every port of the protocol
  int64_t endPort = 0;
};

std::string portText(const PortMatch& m) {
  if (m.protocol.empty()) return "";
  std::string out = " -p " + m.protocol;
  if (m.port > 0) {
    out += fmt::format(" -m {} --dport {}", m.protocol, m.port);
    if (m.endPort > m.port) out += fmt::format(":{}", m.endPort);
  }
  return out;
}

// A NetworkPolicyPort; a named port is looked up in `target`'s ports (nullopt when it has none of
// that name and protocol, or when there is no target).
std::optional<PortMatch> resolvePort(const json& port, const Endpoint* target) {
  std::string protocol = stringMember(port, "protocol");
  if (protocol.empty()) protocol = "TCP";
  PortMatch m{asciiLower(protocol)};
  const json& value = member(port, "port");
  if (value.is_number_integer()) {
    m.port = value.get<int64_t>();
    const json& end = member(port, "endPort");
    if (end.is_number_integer()) m.endPort = end.get<int64_t>();
    return m;
  }
  if (!value.is_string()) return m;
  if (!target) return std::nullopt;
  for (const auto& p : target->ports) {
    if (p.name == value.get_ref<const std::string&>() && p.protocol == protocol) {
      m.port = p.port;
      return m;
    }
  }
  return std::nullopt;
}

bool hasNamedPort(const json& ports) {
  for (const auto& p : ports) {
    if (member(p, "port").is_string()) return true;
  }
  return false;
}

// The ports of a rule resolved against `target`; {{}} (all ports) for a rule without ports.
std::vector<PortMatch> resolvePorts(const json& ports, const Endpoint* target) {
  if (!ports.is_array() || ports.empty()) return {PortMatch{}};
  std::vector<PortMatch> out;
  for (const auto& p : ports) {
    if (auto m = resolvePort(p, target)) out.push_back(*m);
  }
  return out;
}

// A label selector from a policy; nullopt (matches nothing) when malformed.
std::optional<api::LabelSelector> selectorOf(const json& selector) {
  auto s = api::LabelSelector::fromJson(selector);
  if (!s.ok()) return std::nullopt;
  return *s;
}

std::string podIPv4(const json& pod) {
  const json& status = member(pod, "status");
  std::string ip = stringMember(status, "podIP");
  if (ip.empty()) {
    const json& ips = member(status, "podIPs");
    if (ips.is_array() && !ips.empty()) ip = stringMember(ips[0], "ip");
  }
  return parseIpv4(ip) ? ip : "";
}

std::vector<Endpoint> endpointsOf(const PolicyInput& input) {
  std::vector<Endpoint> out;
  for (const auto& pod : input.pods) {
    const json& spec = member(pod, "spec");
    std::string phase = stringMember(member(pod, "status"), "phase");
    if (member(spec, "hostNetwork") == true || phase == "Succeeded" || phase == "Failed") continue;
    std::string ip = podIPv4(pod);
    if (ip.empty()) continue;
    Endpoint e{api::namespaceOf(pod) + "/" + api::nameOf(pod), api::namespaceOf(pod), ip,
               api::nodeNameOf(pod), member(member(pod, "metadata"), "labels")};
    e.pod = &pod;
    for (const char* list : {"containers", "initContainers"}) {
      const json& containers = member(spec, list);
      if (!containers.is_array()) continue;
      for (const auto& c : containers) {
        const json& ports = member(c, "ports");
        if (!ports.is_array()) continue;
        for (const auto& p : ports) {
          std::string protocol = stringMember(p, "protocol");
          const json& number = member(p, "containerPort");
          if (stringMember(p, "name").empty() || !number.is_number_integer()) continue;
          e.ports.push_back({stringMember(p, "name"), protocol.empty() ? "TCP" : protocol,
                             number.get<int64_t>()});
        }
      }
    }
    out.push_back(std::move(e));
  }
  for (const auto& slice : input.hostEndpoints) {
    std::string ns = api::namespaceOf(slice);
    std::string service = api::labelValue(slice, "kubernetes.io/service-name");
    json labels = member(member(slice, "metadata"), "labels");
    if (!labels.is_object()) labels = json::object();
    if (!service.empty()) labels["k8s-app"] = service;
    std::vector<NamedPort> ports;
    if (member(slice, "ports").is_array()) {
      for (const auto& p : slice["ports"]) {
        std::string protocol = stringMember(p, "protocol");
        if (!member(p, "port").is_number_integer()) continue;
        ports.push_back({stringMember(p, "name"), protocol.empty() ? "TCP" : protocol,
                         p["port"].get<int64_t>()});
      }
    }
    if (!member(slice, "endpoints").is_array()) continue;
    for (const auto& endpoint : slice["endpoints"]) {
      if (!member(endpoint, "addresses").is_array()) continue;
      for (const auto& address : endpoint["addresses"]) {
        if (!address.is_string() || !parseIpv4(address.get<std::string>())) continue;
        std::string ip = address.get<std::string>();
        out.push_back({ns + "/" + api::nameOf(slice) + ":" + ip, ns, ip,
                       stringMember(endpoint, "nodeName"), labels, ports});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Endpoint& a, const Endpoint& b) { return a.key < b.key; });
  return out;
}

bool isolates(const json& spec, const char* type) {
  const json& types = member(spec, "policyTypes");
  if (types.is_array() && !types.empty()) {
    return std::find(types.begin(), types.end(), type) != types.end();
  }
  // Not defaulted (an object from before defaulting): Ingress always, Egress with egress rules.
  if (std::string_view(type) == "Ingress") return true;
  const json& egress = member(spec, "egress");
  return egress.is_array() && !egress.empty();
}

// One chain being written: lines in order, a line written once.
struct Chain {
  std::string name;
  std::vector<std::string> lines;
  std::set<std::string> seen;
  bool usesMark = false;

  void add(const std::string& rule) {
    if (seen.insert(rule).second) lines.push_back("-A " + name + rule);
  }
};

class RuleBuilder {
 public:
  explicit RuleBuilder(const PolicyInput& input) : input_(input), endpoints_(endpointsOf(input)) {
    for (const auto& n : input.namespaces) {
      json labels = member(member(n, "metadata"), "labels");
      if (!labels.is_object()) labels = json::object();
      labels["kubernetes.io/metadata.name"] = api::nameOf(n);  // as the API server sets it
      namespaceLabels_[api::nameOf(n)] = std::move(labels);
    }
    for (const auto& e : endpoints_) {
      if (!namespaceLabels_.count(e.ns)) {
        namespaceLabels_[e.ns] = {{"kubernetes.io/metadata.name", e.ns}};
      }
    }
    for (const auto& p : input.policies) policies_.push_back(&p);
    std::sort(policies_.begin(), policies_.end(), [](const json* a, const json* b) {
      return std::pair(api::namespaceOf(*a), api::nameOf(*a)) <
             std::pair(api::namespaceOf(*b), api::nameOf(*b));
    });
  }

  PolicyRules build(const std::set<std::string>& existing) {
    Chain main{kPolicyChain};
    main.add(" -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN");
    main.add(" -m addrtype --src-type LOCAL -j RETURN");
    std::vector<Chain> podChains;
    std::vector<std::string> egressJumps, ingressJumps;
    PolicyRules out;
    for (const auto& e : endpoints_) {
      if (!e.pod || e.node != input_.nodeName) continue;
      for (bool ingress : {false, true}) {
        std::vector<const json*> selecting = selectingPolicies(e, ingress ? "Ingress" : "Egress");
        if (selecting.empty()) continue;
        Chain chain{(ingress ? kIngressChainPrefix : kEgressChainPrefix) + proxy::hash16(e.key)};
        for (const json* policy : selecting) addPolicy(chain, *policy, e, ingress);
        chain.add(" -j REJECT");
        if (chain.usesMark) {
          chain.lines.insert(chain.lines.begin(), fmt::format("-A {} -j MARK --set-xmark 0x0/{}",
                                                              chain.name, kAllowMark));
        }
        (ingress ? ingressJumps : egressJumps)
            .push_back(fmt::format(" {} {}/32 -m comment --comment \"{} {}\" -j {}",
                                   ingress ? "-d" : "-s", e.ip, e.key,
                                   ingress ? "ingress" : "egress", chain.name));
        ++(ingress ? out.ingressPods : out.egressPods);
        podChains.push_back(std::move(chain));
      }
    }
    for (const auto& j : egressJumps) main.add(j);
    for (const auto& j : ingressJumps) main.add(j);

    std::vector<const Chain*> all{&main};
    for (const auto& c : podChains) all.push_back(&c);
    for (const auto& [name, c] : exceptChains_) all.push_back(&c);
    std::string text = "*filter\n";
    for (const Chain* c : all) {
      out.chains.insert(c->name);
      text += fmt::format(":{} - [0:0]\n", c->name);
    }
    std::vector<std::string> stale;
    for (const auto& c : existing) {
      if (!out.chains.count(c)) {
        stale.push_back(c);
        text += fmt::format(":{} - [0:0]\n", c);
      }
    }
    for (const Chain* c : all) {
      for (const auto& line : c->lines) text += line + "\n";
      out.rules += static_cast<int>(c->lines.size());
    }
    for (const auto& c : stale) text += fmt::format("-X {}\n", c);
    text += "COMMIT\n";
    out.restoreText = std::move(text);
    return out;
  }

 private:
  std::vector<const json*> selectingPolicies(const Endpoint& pod, const char* type) {
    std::vector<const json*> out;
    for (const json* p : policies_) {
      if (api::namespaceOf(*p) != pod.ns) continue;
      const json& spec = member(*p, "spec");
      if (!isolates(spec, type)) continue;
      const auto& selector = cachedSelector(member(spec, "podSelector"), true);
      if (selector && selector->matches(pod.labels)) out.push_back(p);
    }
    return out;
  }

  // A selector of a policy, parsed once per build; `absentMatchesAll` for a missing podSelector.
  const std::optional<api::LabelSelector>& cachedSelector(const json& selector,
                                                          bool absentMatchesAll) {
    auto [it, added] = selectors_.try_emplace(&selector);
    if (added) {
      it->second =
          selector.is_null() && absentMatchesAll ? api::LabelSelector() : selectorOf(selector);
    }
    return it->second;
  }

  // The endpoints a podSelector / namespaceSelector peer names; computed once per build, as
  // every pod a policy selects shares its peers.
  const std::vector<const Endpoint*>& peerEndpoints(const json& peer, const std::string& policyNs) {
    auto [cached, added] = peers_.try_emplace(&peer);
    if (!added) return cached->second;
    const auto& pods = cachedSelector(member(peer, "podSelector"), true);
    const json& nsSelector = member(peer, "namespaceSelector");
    const auto* namespaces = nsSelector.is_null() ? nullptr : &cachedSelector(nsSelector, false);
    if (!pods || (namespaces && !*namespaces)) return cached->second;
    for (const auto& e : endpoints_) {
      bool inNamespace =
          namespaces ? (*namespaces)->matches(namespaceLabels_.at(e.ns)) : e.ns == policyNs;
      if (inNamespace && pods->matches(e.labels)) cached->second.push_back(&e);
    }
    return cached->second;
  }

  // MINIK8S-NPX-<h>: RETURN for the except blocks, else the mark. Shared by every pod chain.
  std::string exceptChain(const json& block, bool ingress) {
    std::string cidr = stringMember(block, "cidr");
    std::vector<std::string> except;
    for (const auto& e : member(block, "except")) {
      if (e.is_string()) except.push_back(e.get<std::string>());
    }
    std::sort(except.begin(), except.end());
    const char* dir = ingress ? "-s" : "-d";
    std::string name = kExceptChainPrefix + proxy::hash16(fmt::format("{} {} except {}", dir, cidr,
                                                                      fmt::join(except, ",")));
    if (!exceptChains_.count(name)) {
      Chain c{name};
      for (const auto& e : except) c.add(fmt::format(" {} {} -j RETURN", dir, e));
      c.add(fmt::format(" -j MARK --set-xmark {}/{}", kAllowMark, kAllowMark));
      exceptChains_.emplace(name, std::move(c));
    }
    return name;
  }

  void addPolicy(Chain& chain, const json& policy, const Endpoint& pod, bool ingress) {
    const json& rules = member(member(policy, "spec"), ingress ? "ingress" : "egress");
    if (!rules.is_array()) return;
    const char* dir = ingress ? "-s" : "-d";
    for (const auto& rule : rules) {
      const json& ports = member(rule, "ports");
      const json& peers = member(rule, ingress ? "from" : "to");
      // Ingress ports resolve against the pod itself; egress ports against each destination.
      std::vector<PortMatch> fixedPorts = resolvePorts(ports, ingress ? &pod : nullptr);
      auto allowAddress = [&](const std::string& address, const Endpoint* target) {
        std::string match = address.empty() ? "" : fmt::format(" {} {}", dir, address);
        const auto& resolved = ingress || !target ? fixedPorts : resolvePorts(ports, target);
        for (const auto& m : resolved) chain.add(match + portText(m) + " -j RETURN");
      };
      if (!peers.is_array() || peers.empty()) {
        allowAddress("", nullptr);
        // Every destination: a named egress port is resolved against every pod that has it.
        if (!ingress && ports.is_array() && hasNamedPort(ports)) {
          for (const auto& e : endpoints_) {
            for (const auto& p : ports) {
              if (!member(p, "port").is_string()) continue;
              if (auto m = resolvePort(p, &e)) {
                chain.add(fmt::format(" -d {}/32{} -j RETURN", e.ip, portText(*m)));
              }
            }
          }
        }
        continue;
      }
      for (const auto& peer : peers) {
        const json& block = member(peer, "ipBlock");
        if (block.is_object()) {
          std::string cidr = stringMember(block, "cidr");
          if (!parseIpv4(cidr.substr(0, cidr.find('/')))) continue;  // IPv6: not enforced here
          const json& except = member(block, "except");
          if (!except.is_array() || except.empty()) {
            allowAddress(cidr, nullptr);
            continue;
          }
          std::string x = exceptChain(block, ingress);
          for (const auto& m : fixedPorts) {
            std::string jump = fmt::format(" {} {}{} -j {}", dir, cidr, portText(m), x);
            if (chain.seen.count(jump)) continue;
            chain.add(jump);
            chain.lines.push_back(fmt::format("-A {} -m mark --mark {}/{} -j RETURN", chain.name,
                                              kAllowMark, kAllowMark));
            chain.usesMark = true;
          }
          continue;
        }
        for (const Endpoint* e : peerEndpoints(peer, api::namespaceOf(policy))) {
          allowAddress(e->ip + "/32", e);
        }
      }
    }
  }

  const PolicyInput& input_;
  std::vector<Endpoint> endpoints_;
  std::map<std::string, json> namespaceLabels_;
  std::vector<const json*> policies_;
  std::map<std::string, Chain> exceptChains_;
  std::map<const json*, std::optional<api::LabelSelector>> selectors_;
  std::map<const json*, std::vector<const Endpoint*>> peers_;
};

}  // namespace

PolicyRules buildPolicyRules(const PolicyInput& input,
                             const std::set<std::string>& existingChains) {
  return RuleBuilder(input).build(existingChains);
}

std::set<std::string> policyChains(const std::string& iptablesSave) {
  std::set<std::string> out;
  for (auto& c : proxy::declaredChains(iptablesSave)) {
    if (c == kPolicyChain || c.starts_with(kIngressChainPrefix) ||
        c.starts_with(kEgressChainPrefix) || c.starts_with(kExceptChainPrefix)) {
      out.insert(c);
    }
  }
  return out;
}

std::vector<proxy::JumpRule> policyJumpRules() {
  std::vector<std::string> jump{"-m", "comment",   "--comment", "minik8s network policies",
                                "-j", kPolicyChain};
  return {{"filter", "FORWARD", jump}, {"filter", "INPUT", jump}};
}

}  // namespace minik8s::netpol
