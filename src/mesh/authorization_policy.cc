#include "mesh/authorization_policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace minik8s::mesh {

namespace authz_detail {

// Parse errors travel as exceptions inside this file only; parseAuthorizationPolicy returns them.
struct ParseError {
  std::string message;
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ParseError{path + ": " + what};
}

std::vector<std::string> strings(const json& parent, const std::string& path, const char* key) {
  std::vector<std::string> out;
  if (!parent.contains(key) || parent[key].is_null()) return out;
  const json& list = parent[key];
  const std::string at = path + "." + key;
  if (!list.is_array()) fail(at, "must be a list of strings");
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty()) {
      fail(at + "[" + std::to_string(i) + "]", "must be a non-empty string");
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

const json& objectAt(const json& parent, const std::string& path, const char* key) {
  static const json kEmpty = json::object();
  if (!parent.contains(key) || parent[key].is_null()) return kEmpty;
  if (!parent[key].is_object()) fail(path + "." + key, "must be an object");
  return parent[key];
}

const json& listAt(const json& parent, const std::string& path, const char* key) {
  static const json kEmpty = json::array();
  if (!parent.contains(key) || parent[key].is_null()) return kEmpty;
  if (!parent[key].is_array()) fail(path + "." + key, "must be a list");
  return parent[key];
}

void refuseKeys(const json& obj, const std::string& path,
                std::initializer_list<std::pair<const char*, const char*>> unsupported) {
  for (const auto& [key, why] : unsupported) {
    if (obj.contains(key)) fail(path + "." + key, std::string("not supported: ") + why);
  }
}

// An IPv4 address or CIDR as (network, mask); nullopt when malformed.
std::optional<std::pair<uint32_t, uint32_t>> parseBlock(const std::string& block) {
  std::string ip = block;
  int bits = 32;
  if (size_t slash = block.find('/'); slash != std::string::npos) {
    ip = block.substr(0, slash);
    const std::string len = block.substr(slash + 1);
    if (len.empty() || len.size() > 2 || !std::all_of(len.begin(), len.end(), ::isdigit)) {
      return std::nullopt;
    }
    bits = std::stoi(len);
    if (bits > 32) return std::nullopt;
  }
  in_addr addr{};
  if (inet_pton(AF_INET, ip.c_str(), &addr) != 1) return std::nullopt;
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return std::make_pair(ntohl(addr.s_addr) & mask, mask);
}

void checkBlocks(const std::vector<std::string>& blocks, const std::string& path) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (!parseBlock(blocks[i])) {
      fail(path + "[" + std::to_string(i) + "]",
           "Invalid value: \"" + blocks[i] + "\": want an IPv4 address or CIDR");
    }
  }
}

void checkPorts(const std::vector<std::string>& ports, const std::string& path) {
  for (size_t i = 0; i < ports.size(); ++i) {
    const std::string& p = ports[i];
    bool number = !p.empty() && p.size() <= 5 && std::all_of(p.begin(), p.end(), ::isdigit);
    if (!number || std::stoi(p) < 1 || std::stoi(p) > 65535) {
      fail(path + "[" + std::to_string(i) + "]",
           "Invalid value: \"" + p + "\": want a port number 1-65535");
    }
  }
}

AuthzSource parseSource(const json& s, const std::string& path) {
  refuseKeys(s, path,
             {{"requestPrincipals", "JWT request principals (no RequestAuthentication here)"},
              {"notRequestPrincipals", "JWT request principals (no RequestAuthentication here)"}});
  AuthzSource src;
  src.principals = strings(s, path, "principals");
  src.notPrincipals = strings(s, path, "notPrincipals");
  src.namespaces = strings(s, path, "namespaces");
  src.notNamespaces = strings(s, path, "notNamespaces");
  // No proxy sits in front of a sidecar here: the remote address is the peer's.
  src.ipBlocks = strings(s, path, "ipBlocks");
  for (auto& b : strings(s, path, "remoteIpBlocks")) src.ipBlocks.push_back(std::move(b));
  src.notIpBlocks = strings(s, path, "notIpBlocks");
  for (auto& b : strings(s, path, "notRemoteIpBlocks")) src.notIpBlocks.push_back(std::move(b));
  checkBlocks(src.ipBlocks, path + ".ipBlocks");
  checkBlocks(src.notIpBlocks, path + ".notIpBlocks");
  return src;
}

AuthzOperation parseOperation(const json& o, const std::string& path) {
  AuthzOperation op;
  op.hosts = strings(o, path, "hosts");
  op.notHosts = strings(o, path, "notHosts");
  op.ports = strings(o, path, "ports");
  op.notPorts = strings(o, path, "notPorts");
  op.methods = strings(o, path, "methods");
  op.notMethods = strings(o, path, "notMethods");
  op.paths = strings(o, path, "paths");
  op.notPaths = strings(o, path, "notPaths");
  checkPorts(op.ports, path + ".ports");
  checkPorts(op.notPorts, path + ".notPorts");
  return op;
}

AuthzCondition parseCondition(const json& c, const std::string& path) {
  if (!c.is_object()) fail(path, "must be an object");
  AuthzCondition cond;
  const json& key = c.contains("key") ? c["key"] : json();
  if (!key.is_string() || key.get<std::string>().empty()) fail(path + ".key", "Required value");
  cond.key = key.get<std::string>();
  static const std::vector<std::string> kKeys = {"source.ip",        "remote.ip",
                                                 "source.namespace", "source.principal",
                                                 "destination.ip",   "destination.port"};
  bool header = cond.key.rfind("request.headers[", 0) == 0 && cond.key.back() == ']' &&
                cond.key.size() > std::string("request.headers[]").size();
  if (cond.key == "remote.ip") cond.key = "source.ip";
  if (!header && std::find(kKeys.begin(), kKeys.end(), cond.key) == kKeys.end()) {
    fail(path + ".key",
         "Unsupported value: \"" + key.get<std::string>() +
             "\": supported keys: source.ip, remote.ip, source.namespace, source.principal, "
             "destination.ip, destination.port, request.headers[NAME]");
  }
  cond.values = strings(c, path, "values");
  cond.notValues = strings(c, path, "notValues");
  if (cond.values.empty() && cond.notValues.empty()) {
    fail(path, "Required value: values or notValues");
  }
  if (cond.key == "source.ip" || cond.key == "destination.ip") {
    checkBlocks(cond.values, path + ".values");
    checkBlocks(cond.notValues, path + ".notValues");
  }
  if (cond.key == "destination.port") {
    checkPorts(cond.values, path + ".values");
    checkPorts(cond.notValues, path + ".notValues");
  }
  return cond;
}

// ---- matching -----------------------------------------------------------------------------

bool matchValue(const std::string& pattern, std::string_view value, bool ignoreCase = false) {
  auto eq = [ignoreCase](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      char x = a[i], y = b[i];
      if (ignoreCase) {
        x = static_cast<char>(std::tolower(static_cast<unsigned char>(x)));
        y = static_cast<char>(std::tolower(static_cast<unsigned char>(y)));
      }
      if (x != y) return false;
    }
    return true;
  };
  if (pattern == "*") return !value.empty();
  if (pattern.size() > 1 && pattern.back() == '*') {
    std::string_view prefix(pattern.data(), pattern.size() - 1);
    return value.size() >= prefix.size() && eq(value.substr(0, prefix.size()), prefix);
  }
  if (pattern.size() > 1 && pattern.front() == '*') {
    std::string_view suffix(pattern.data() + 1, pattern.size() - 1);
    return value.size() >= suffix.size() && eq(value.substr(value.size() - suffix.size()), suffix);
  }
  return eq(pattern, value);
}

bool anyValue(const std::vector<std::string>& patterns, std::string_view value,
              bool ignoreCase = false) {
  for (const auto& p : patterns) {
    if (matchValue(p, value, ignoreCase)) return true;
  }
  return false;
}

bool inBlocks(const std::vector<std::string>& blocks, const std::string& ip) {
  auto address = parseBlock(ip);
  if (!address) return false;
  for (const auto& b : blocks) {
    auto block = parseBlock(b);
    if (block && (address->first & block->second) == block->first) return true;
  }
  return false;
}

// A positive list must match (when given); a negative list must not.
template <class Match>
bool field(const std::vector<std::string>& values, const std::vector<std::string>& notValues,
           Match match) {
  if (!values.empty() && !match(values)) return false;
  if (!notValues.empty() && match(notValues)) return false;
  return true;
}

std::string namespaceOfPrincipal(const std::string& principal) {
  // cluster.local/ns/NS/sa/SA
  const std::string marker = "/ns/";
  size_t at = principal.find(marker);
  if (at == std::string::npos) return "";
  size_t start = at + marker.size();
  size_t end = principal.find('/', start);
  return principal.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string_view pathOnly(std::string_view target) {
  size_t q = target.find_first_of("?#");
  return q == std::string_view::npos ? target : target.substr(0, q);
}

bool sourceMatches(const AuthzSource& s, const AuthzRequest& r) {
  const std::string ns = namespaceOfPrincipal(r.principal);
  auto values = [](std::string_view v) {
    return [v](const std::vector<std::string>& list) { return anyValue(list, v); };
  };
  return field(s.principals, s.notPrincipals, values(r.principal)) &&
         field(s.namespaces, s.notNamespaces, values(ns)) &&
         field(s.ipBlocks, s.notIpBlocks,
               [&r](const std::vector<std::string>& list) { return inBlocks(list, r.sourceIp); });
}

// `http` false: a rule of a DENY policy on TCP, whose HTTP-only fields are left out.
bool operationMatches(const AuthzOperation& o, const AuthzRequest& r) {
  const std::string port = std::to_string(r.destinationPort);
  if (!field(o.ports, o.notPorts,
             [&port](const std::vector<std::string>& l) { return anyValue(l, port); })) {
    return false;
  }
  if (!r.http) return true;
  const std::string_view path = pathOnly(r.path);
  return field(o.hosts, o.notHosts,
               [&r](const std::vector<std::string>& l) { return anyValue(l, r.host, true); }) &&
         field(o.methods, o.notMethods,
               [&r](const std::vector<std::string>& l) { return anyValue(l, r.method); }) &&
         field(o.paths, o.notPaths,
               [&path](const std::vector<std::string>& l) { return anyValue(l, path); });
}

bool conditionMatches(const AuthzCondition& c, const AuthzRequest& r) {
  if (c.key == "source.ip" || c.key == "destination.ip") {
    const std::string& ip = c.key == "source.ip" ? r.sourceIp : r.destinationIp;
    return field(c.values, c.notValues,
                 [&ip](const std::vector<std::string>& l) { return inBlocks(l, ip); });
  }
  std::string value;
  if (c.key == "source.namespace") {
    value = namespaceOfPrincipal(r.principal);
  } else if (c.key == "source.principal") {
    value = r.principal;
  } else if (c.key == "destination.port") {
    value = std::to_string(r.destinationPort);
  } else if (c.httpOnly()) {
    if (!r.http) return true;  // only reached for a DENY rule on TCP
    const std::string name = c.key.substr(16, c.key.size() - 17);
    auto got = r.header ? r.header(name) : std::nullopt;
    value = got.value_or("");
  }
  return field(c.values, c.notValues,
               [&value](const std::vector<std::string>& l) { return anyValue(l, value); });
}

bool ruleHttpOnly(const AuthzRule& rule) {
  for (const auto& o : rule.to) {
    if (o.httpOnly()) return true;
  }
  for (const auto& c : rule.when) {
    if (c.httpOnly()) return true;
  }
  return false;
}

bool ruleMatches(const AuthzRule& rule, AuthzAction action, const AuthzRequest& r) {
  if (!r.http && action != AuthzAction::kDeny && ruleHttpOnly(rule)) return false;
  if (!rule.from.empty() &&
      std::none_of(rule.from.begin(), rule.from.end(),
                   [&r](const AuthzSource& s) { return sourceMatches(s, r); })) {
    return false;
  }
  if (!rule.to.empty() &&
      std::none_of(rule.to.begin(), rule.to.end(),
                   [&r](const AuthzOperation& o) { return operationMatches(o, r); })) {
    return false;
  }
  return std::all_of(rule.when.begin(), rule.when.end(),
                     [&r](const AuthzCondition& c) { return conditionMatches(c, r); });
}

bool policyMatches(const AuthorizationPolicy& p, const AuthzRequest& r) {
  return std::any_of(p.rules.begin(), p.rules.end(),
                     [&](const AuthzRule& rule) { return ruleMatches(rule, p.action, r); });
}

}  // namespace authz_detail

const char* authzActionName(AuthzAction action) {
  switch (action) {
    case AuthzAction::kDeny:
      return "DENY";
    case AuthzAction::kAudit:
      return "AUDIT";
    default:
      return "ALLOW";
  }
}

bool AuthzOperation::httpOnly() const {
  return !hosts.empty() || !notHosts.empty() || !methods.empty() || !notMethods.empty() ||
         !paths.empty() || !notPaths.empty();
}

Result<AuthorizationPolicy> parseAuthorizationPolicy(const json& obj) {
  using namespace authz_detail;
  AuthorizationPolicy p;
  const json meta = obj.value("metadata", json::object());
  p.ns = meta.value("namespace", "");
  p.name = meta.value("name", "");
  const json spec = obj.contains("spec") && !obj["spec"].is_null() ? obj["spec"] : json::object();
  p.source = {{"metadata", {{"namespace", p.ns}, {"name", p.name}}}, {"spec", spec}};
  try {
    if (!spec.is_object()) fail("spec", "must be an object");
    refuseKeys(spec, "spec",
               {{"provider", "CUSTOM actions need an external authorizer"},
                {"targetRef", "use spec.selector"},
                {"targetRefs", "use spec.selector"}});
    if (spec.contains("selector") && !spec["selector"].is_null()) {
      const json& sel = objectAt(spec, "spec", "selector");
      p.hasSelector = true;
      const json& labels = objectAt(sel, "spec.selector", "matchLabels");
      for (const auto& [k, v] : labels.items()) {
        if (!v.is_string()) fail("spec.selector.matchLabels." + k, "must be a string");
        p.selector[k] = v.get<std::string>();
      }
    }
    if (spec.contains("action") && !spec["action"].is_null()) {
      const json& a = spec["action"];
      const std::string s = a.is_string() ? a.get<std::string>() : "";
      if (s == "ALLOW") {
        p.action = AuthzAction::kAllow;
      } else if (s == "DENY") {
        p.action = AuthzAction::kDeny;
      } else if (s == "AUDIT") {
        p.action = AuthzAction::kAudit;
      } else {
        fail("spec.action", "Unsupported value: " + a.dump() +
                                ": supported values: \"ALLOW\", \"DENY\", \"AUDIT\" (CUSTOM "
                                "needs an external authorizer, not available here)");
      }
    }
    const json& rules = listAt(spec, "spec", "rules");
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string path = "spec.rules[" + std::to_string(i) + "]";
      if (!rules[i].is_object()) fail(path, "must be an object");
      AuthzRule rule;
      const json& from = listAt(rules[i], path, "from");
      for (size_t j = 0; j < from.size(); ++j) {
        const std::string at = path + ".from[" + std::to_string(j) + "]";
        if (!from[j].is_object()) fail(at, "must be an object");
        rule.from.push_back(parseSource(objectAt(from[j], at, "source"), at + ".source"));
      }
      const json& to = listAt(rules[i], path, "to");
      for (size_t j = 0; j < to.size(); ++j) {
        const std::string at = path + ".to[" + std::to_string(j) + "]";
        if (!to[j].is_object()) fail(at, "must be an object");
        rule.to.push_back(parseOperation(objectAt(to[j], at, "operation"), at + ".operation"));
      }
      const json& when = listAt(rules[i], path, "when");
      for (size_t j = 0; j < when.size(); ++j) {
        const std::string at = path + ".when[" + std::to_string(j) + "]";
        if (when[j].is_object() && when[j].value("key", "").rfind("request.auth.", 0) == 0) {
          fail(at + ".key", "not supported: JWT claims (no RequestAuthentication here)");
        }
        rule.when.push_back(parseCondition(when[j], at));
      }
      p.rules.push_back(std::move(rule));
    }
  } catch (const ParseError& e) {
    return Status::BadRequest(e.message);
  }
  return p;
}

AuthorizationPolicy authorizationPolicyOrClosed(const json& obj, std::string* error) {
  auto parsed = parseAuthorizationPolicy(obj);
  if (parsed.ok()) return std::move(parsed).value();
  if (error) *error = parsed.status().message();
  AuthorizationPolicy p;
  const json meta = obj.value("metadata", json::object());
  p.ns = meta.value("namespace", "");
  p.name = meta.value("name", "");
  const json spec = obj.contains("spec") && !obj["spec"].is_null() ? obj["spec"] : json::object();
  p.source = {{"metadata", {{"namespace", p.ns}, {"name", p.name}}}, {"spec", spec}};
  if (spec.is_object() && spec.contains("selector") && !spec["selector"].is_null()) {
    p.hasSelector = true;
    const json& sel = spec["selector"];
    if (sel.is_object() && sel.contains("matchLabels") && sel["matchLabels"].is_object()) {
      for (const auto& [k, v] : sel["matchLabels"].items()) {
        if (v.is_string()) p.selector[k] = v.get<std::string>();
      }
    }
  }
  const std::string action =
      spec.is_object() && spec.contains("action") && spec["action"].is_string()
          ? spec["action"].get<std::string>()
          : "ALLOW";
  if (action == "ALLOW") {
    p.action = AuthzAction::kAllow;  // no rules: allows nothing
  } else if (action == "AUDIT") {
    p.action = AuthzAction::kAudit;
  } else {
    p.action = AuthzAction::kDeny;
    p.rules.push_back(AuthzRule{});  // matches everything
  }
  return p;
}

std::vector<const AuthorizationPolicy*> applicablePolicies(
    const std::vector<AuthorizationPolicy>& policies, const std::string& ns,
    const std::map<std::string, std::string>& labels, const std::string& rootNamespace) {
  std::vector<const AuthorizationPolicy*> out;
  for (const auto& p : policies) {
    if (p.ns != rootNamespace && p.ns != ns) continue;
    bool selected = std::all_of(p.selector.begin(), p.selector.end(), [&labels](const auto& kv) {
      auto it = labels.find(kv.first);
      return it != labels.end() && it->second == kv.second;
    });
    if (selected) out.push_back(&p);
  }
  return out;
}

bool needsHttp(const std::vector<const AuthorizationPolicy*>& applicable) {
  for (const AuthorizationPolicy* p : applicable) {
    if (p->action == AuthzAction::kAudit) continue;
    for (const auto& rule : p->rules) {
      if (authz_detail::ruleHttpOnly(rule)) return true;
    }
  }
  return false;
}

AuthzDecision authorize(const std::vector<const AuthorizationPolicy*>& applicable,
                        const AuthzRequest& request) {
  using authz_detail::policyMatches;
  AuthzDecision d;
  bool anyAllow = false;
  for (const AuthorizationPolicy* p : applicable) {
    if (p->action == AuthzAction::kDeny && policyMatches(*p, request)) {
      d.allowed = false;
      d.policy = p->key();
      d.reason = "denied by " + p->key();
      return d;
    }
    anyAllow = anyAllow || p->action == AuthzAction::kAllow;
  }
  if (!anyAllow) return d;
  for (const AuthorizationPolicy* p : applicable) {
    if (p->action == AuthzAction::kAllow && policyMatches(*p, request)) {
      d.reason = "allowed by " + p->key();
      return d;
    }
  }
  d.allowed = false;
  d.reason = "no ALLOW policy matched";
  return d;
}

}  // namespace minik8s::mesh
