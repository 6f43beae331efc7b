// AuthorizationPolicy (security.istio.io/v1, also served as v1beta1): which connections and
// requests a meshed workload's inbound sidecar lets through, as Istio decides it:
//   - a policy applies to a workload when it is in the root namespace (istio-system: every
//     workload of the mesh, or those its selector matches in any namespace) or in the workload's
//     namespace (all its workloads, or those spec.selector.matchLabels matches);
//   - a DENY policy with a matching rule denies; else, when no ALLOW policy applies, the request
//     is allowed; else one matching rule of an ALLOW policy allows it, and nothing else does
//     (an ALLOW policy without rules, `spec: {}`, allows nothing; a rule `{}` matches all);
//   - AUDIT policies never change the decision. CUSTOM (external authorizers) and JWT fields
//     (requestPrincipals, request.auth.*) are refused at parse time: ignoring them would widen
//     an ALLOW policy.
// A rule matches when one of its `from` sources, one of its `to` operations and every `when`
// condition match (a part left out matches). Values match exactly, by prefix ("abc*"), by suffix
// ("*abc"), or "*" for any non-empty value; principals are "cluster.local/ns/NS/sa/SA" (the
// SPIFFE ID of the peer's mTLS certificate without "spiffe://"); ipBlocks are IPv4 addresses or
// CIDRs; paths ignore the query string. On plain TCP, the HTTP-only fields (hosts, methods, paths,
// request.headers) make a rule of an ALLOW policy never match, and are left out of a rule of a
// DENY policy (which then denies more), as Istio does. Pure functions; thread-safe.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "mesh/peer_authentication.h"

namespace minik8s::mesh {

enum class AuthzAction { kAllow, kDeny, kAudit };
const char* authzActionName(AuthzAction action);

struct AuthzSource {
  std::vector<std::string> principals, notPrincipals, namespaces, notNamespaces, ipBlocks,
      notIpBlocks;
};

struct AuthzOperation {
  std::vector<std::string> hosts, notHosts, ports, notPorts, methods, notMethods, paths, notPaths;
  bool httpOnly() const;  // sets a field TCP traffic does not have
};

struct AuthzCondition {
  std::string key;  // source.ip, source.namespace, source.principal, destination.ip,
                    // destination.port, request.headers[NAME]
  std::vector<std::string> values, notValues;
  bool httpOnly() const { return key.rfind("request.headers[", 0) == 0; }
};

struct AuthzRule {
  std::vector<AuthzSource> from;
  std::vector<AuthzOperation> to;
  std::vector<AuthzCondition> when;
};

struct AuthorizationPolicy {
  std::string ns, name;
  bool hasSelector = false;
  std::map<std::string, std::string> selector;  // spec.selector.matchLabels
  AuthzAction action = AuthzAction::kAllow;
  std::vector<AuthzRule> rules;
  // {"metadata": {"namespace", "name"}, "spec"}: what was parsed, so the policy travels to the
  // sidecars as written and is parsed there again.
  json source;
  std::string key() const { return ns + "/" + name; }
};

// BadRequest naming the field (spec.action, spec.rules[0].from[1].source.ipBlocks[0], ...).
Result<AuthorizationPolicy> parseAuthorizationPolicy(const json& obj);

// The policy, or when it does not parse (`error` says why) one that fails closed for the
// workloads it selects: a DENY, CUSTOM or unreadable action denies everything, an ALLOW allows
// nothing (so only other ALLOW policies can), an AUDIT does nothing.
AuthorizationPolicy authorizationPolicyOrClosed(const json& obj, std::string* error);

// One inbound connection (http false) or HTTP request as the sidecar sees it.
struct AuthzRequest {
  std::string principal;  // "cluster.local/ns/NS/sa/SA"; "" for plain text
  std::string sourceIp, destinationIp;
  int destinationPort = 0;
  bool http = false;
  std::string method, path, host;
  // A request header by name (any case); nullopt when absent.
  std::function<std::optional<std::string>(std::string_view)> header;
};

struct AuthzDecision {
  bool allowed = true;
  std::string policy;  // "ns/name" of the DENY policy that denied ("" otherwise)
  std::string reason;  // for logs: "denied by ns/name", "no ALLOW policy matched", ...
};

// The policies that apply to a workload (namespace and pod labels).
std::vector<const AuthorizationPolicy*> applicablePolicies(
    const std::vector<AuthorizationPolicy>& policies, const std::string& ns,
    const std::map<std::string, std::string>& labels,
    const std::string& rootNamespace = kMeshRootNamespace);

// Whether deciding needs the HTTP request (some applicable rule uses an HTTP-only field).
bool needsHttp(const std::vector<const AuthorizationPolicy*>& applicable);

AuthzDecision authorize(const std::vector<const AuthorizationPolicy*>& applicable,
                        const AuthzRequest& request);

}  // namespace minik8s::mesh
