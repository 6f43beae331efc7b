// networking.k8s.io/v1 NetworkPolicy, as Kubernetes' ValidateNetworkPolicy words it.
#include <optional>
#include <string>

#include "api/validation/kinds.h"
#include "common/cidr.h"

namespace minik8s::api::validation {
namespace {

// An IPv4 "a.b.c.d/n" with host bits allowed; nullopt for IPv6 or malformed text.
std::optional<Ipv4Cidr> sloppyIpv4Cidr(const std::string& text) {
  size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto ip = parseIpv4(text.substr(0, slash));
  if (!ip) return std::nullopt;
  int prefix = std::stoi(text.substr(slash + 1));
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return Ipv4Cidr{*ip & mask, prefix};
}

void validatePolicyPort(FieldErrors& errs, const json& port, const std::string& path) {
  if (!port.is_object()) {
    errs.typeInvalid(path, port, "object");
    return;
  }
  validateOptionalEnum(errs, port, "protocol", child(path, "protocol"), {"TCP", "UDP", "SCTP"});
  auto endPort = errs.integer(port, "endPort", child(path, "endPort"));
  const json* value = errs.intOrString(port, "port", child(path, "port"));
  if (!value) {
    if (endPort) {
      errs.invalid(child(path, "endPort"), *endPort,
                   "may not be specified when `port` is not specified");
    }
    return;
  }
  if (value->is_number_integer()) {
    int64_t number = value->get<int64_t>();
    errs.invalidEach(child(path, "port"), *value, isValidPortNum(number));
    if (endPort) {
      if (*endPort < number) {
        errs.invalid(child(path, "endPort"), number, "must be greater than or equal to `port`");
      }
      errs.invalidEach(child(path, "endPort"), *endPort, isValidPortNum(*endPort));
    }
    return;
  }
  if (endPort) {
    errs.invalid(child(path, "endPort"), *endPort,
                 "may not be specified when `port` is non-numeric");
  }
  errs.invalidEach(child(path, "port"), *value,
                   isValidPortName(value->get_ref<const std::string&>()));
}

void validateIPBlock(FieldErrors& errs, const json& block, const std::string& path) {
  auto cidr = errs.string(block, "cidr", child(path, "cidr"));
  if (!cidr || cidr->empty()) {
    errs.required(child(path, "cidr"));
    return;
  }
  const char* cidrMessage = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
  if (!isValidCIDR(*cidr)) {
    errs.invalid(child(path, "cidr"), *cidr, cidrMessage);
    return;
  }
  auto outer = sloppyIpv4Cidr(*cidr);
  const std::string ep = child(path, "except");
  const json* except = errs.array(block, "except", ep);
  if (!except) return;
  for (size_t i = 0; i < except->size(); ++i) {
    const json& e = (*except)[i];
    if (!e.is_string()) {
      errs.typeInvalid(index(ep, i), e, "string");
      continue;
    }
    const std::string& text = e.get_ref<const std::string&>();
    if (!isValidCIDR(text)) {
      errs.invalid(index(ep, i), text, cidrMessage);
      continue;
    }
    auto inner = sloppyIpv4Cidr(text);
    // Both IPv4: the except block must lie inside cidr and be smaller. (IPv6 blocks are only
    // checked for syntax; the agents enforce IPv4.)
    bool mixed = outer.has_value() != inner.has_value();
    if (mixed ||
        (outer && inner && (!outer->contains(inner->base) || outer->prefix >= inner->prefix))) {
      errs.invalid(index(ep, i), text, "must be a strict subset of `cidr`");
    }
  }
}

void validatePeer(FieldErrors& errs, const json& peer, const std::string& path) {
  if (!peer.is_object()) {
    errs.typeInvalid(path, peer, "object");
    return;
  }
  int peers = 0;
  for (const char* selector : {"podSelector", "namespaceSelector"}) {
    if (absent(peer, selector)) continue;
    ++peers;
    validateLabelSelector(errs, peer[selector], child(path, selector));
  }
  bool hasIPBlock = false;
  if (const json* block = errs.object(peer, "ipBlock", child(path, "ipBlock"))) {
    ++peers;
    hasIPBlock = true;
    validateIPBlock(errs, *block, child(path, "ipBlock"));
  }
  if (peers == 0) {
    errs.required(path, "must specify a peer");
  } else if (peers > 1 && hasIPBlock) {
    errs.forbidden(path, "may not specify both ipBlock and another peer");
  }
}

void validatePolicyRules(FieldErrors& errs, const json& spec, const char* direction,
                         const char* peers) {
  const std::string rp = child("spec", direction);
  const json* rules = errs.array(spec, direction, rp);
  if (!rules) return;
  for (size_t i = 0; i < rules->size(); ++i) {
    const std::string p = index(rp, i);
    const json& rule = (*rules)[i];
    if (!rule.is_object()) {
      errs.typeInvalid(p, rule, "object");
      continue;
    }
    if (const json* ports = errs.array(rule, "ports", child(p, "ports"))) {
      for (size_t j = 0; j < ports->size(); ++j) {
        validatePolicyPort(errs, (*ports)[j], index(child(p, "ports"), j));
      }
    }
    if (const json* list = errs.array(rule, peers, child(p, peers))) {
      for (size_t j = 0; j < list->size(); ++j) {
        validatePeer(errs, (*list)[j], index(child(p, peers), j));
      }
    }
  }
}

void validatePolicyTypes(FieldErrors& errs, const json& spec) {
  const json* types = errs.array(spec, "policyTypes", "spec.policyTypes");
  if (!types) return;
  if (types->size() > 2) {
    std::string shown = "[]networking.PolicyType{";
    for (size_t i = 0; i < types->size(); ++i) {
      shown += (i ? ", " : "") + goValue((*types)[i]);
    }
    errs.invalidShown("spec.policyTypes", shown + "}", "may not specify more than two policyTypes");
    return;
  }
  for (size_t i = 0; i < types->size(); ++i) {
    const json& t = (*types)[i];
    if (!t.is_string() || !oneOf({"Ingress", "Egress"}, t.get<std::string>())) {
      errs.notSupported(index("spec.policyTypes", i), t, {"Ingress", "Egress"});
    }
  }
}

}  // namespace

void validateNetworkPolicy(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  if (const json* spec = errs.object(obj, "spec", "spec")) {
    if (const json* selector = errs.object(*spec, "podSelector", "spec.podSelector")) {
      validateLabelSelector(errs, *selector, "spec.podSelector");
    }
    validatePolicyRules(errs, *spec, "ingress", "from");
    validatePolicyRules(errs, *spec, "egress", "to");
    validatePolicyTypes(errs, *spec);
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

}  // namespace minik8s::api::validation
