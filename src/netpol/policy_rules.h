// Policy rules: the pure half of the node's NetworkPolicy enforcement. From NetworkPolicies, Pods,
// Namespaces and the node-hosted endpoints (JSON objects as the API returns them) it builds the
// iptables-restore document for one node's filter table:
//
//   FORWARD, INPUT -> MINIK8S-NETPOL                 (jumps kept by the NetworkPolicyAgent)
//   MINIK8S-NETPOL   ESTABLISHED,RELATED and the node's own addresses: RETURN (replies of
//                    allowed connections, kubelet probes); then per local pod isolated for
//                    egress `-s podIP -j MINIK8S-NPE-<h>`, per local pod isolated for ingress
//                    `-d podIP -j MINIK8S-NPI-<h>` (<h> = hash16("ns/name"))
//   MINIK8S-NPI/NPE  one RETURN per (allowed peer address x port) of every rule of every policy
//                    selecting the pod; last: REJECT
//   MINIK8S-NPX-<h>  an ipBlock with except: RETURN for each except, else mark 0x10000, which
//                    the pod chain turns into a RETURN
//
// The chains only RETURN or REJECT, never ACCEPT, so a packet between two local pods passes the
// sender's egress chain and then the receiver's ingress chain, and what follows in FORWARD (the
// service proxy's rules) still applies. Services need nothing special: the proxy DNATs in nat
// PREROUTING, before filter, so the chains see the real pod addresses.
//
// Semantics as Kubernetes: a pod is isolated for a direction once a policy of that direction
// (spec.policyTypes, defaulted as the API server does) selects it; peers are pods by
// podSelector (policy's namespace), namespaceSelector, both (pods of those namespaces), or an
// ipBlock; named ports resolve against the selected pod's container ports for ingress and the
// peer pod's for egress; rules with no peers or no ports allow all of them. Pods without an IP,
// host-network pods and finished pods (Succeeded/Failed) are neither selected nor peers.
// Node-hosted endpoints (EndpointSlices the agents publish for the cluster DNS and the gateway)
// count as pods of their namespace labelled k8s-app=<service name>, so the documentation's
// "allow DNS to kube-system" policies reach the node DNS responders. IPv4 only. Pure functions,
// thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "proxy/proxy_rules.h"

namespace minik8s::netpol {

inline constexpr const char* kPolicyChain = "MINIK8S-NETPOL";
inline constexpr const char* kIngressChainPrefix = "MINIK8S-NPI-";
inline constexpr const char* kEgressChainPrefix = "MINIK8S-NPE-";
inline constexpr const char* kExceptChainPrefix = "MINIK8S-NPX-";
// The packet mark bit an except chain sets for "in the block"; cleared before each use.
inline constexpr const char* kAllowMark = "0x10000";
// The label of the EndpointSlices agents publish for services they host themselves.
inline constexpr const char* kHostEndpointSelector =
    "endpointslice.kubernetes.io/managed-by=minik8s-agent";

struct PolicyInput {
  std::string nodeName;             // pods with this spec.nodeName are enforced here
  std::vector<json> policies;       // networking.k8s.io/v1 NetworkPolicy
  std::vector<json> pods;           // every pod of the cluster (peers live anywhere)
  std::vector<json> namespaces;     // for namespaceSelector
  std::vector<json> hostEndpoints;  // EndpointSlices labelled kHostEndpointSelector
};

struct PolicyRules {
  std::string restoreText;       // the iptables-restore --noflush document (filter table)
  std::set<std::string> chains;  // the MINIK8S-NP* chains now in use, kPolicyChain included
  int ingressPods = 0;           // local pods isolated for ingress
  int egressPods = 0;            // local pods isolated for egress
  int rules = 0;                 // -A lines written
};

// `existingChains`: our chains present in the kernel (last sync, or iptables-save at start);
// those not in use any more are flushed and deleted by the same document.
PolicyRules buildPolicyRules(const PolicyInput& input, const std::set<std::string>& existingChains);

// Our chains named in an iptables-save output of the filter table.
std::set<std::string> policyChains(const std::string& iptablesSave);

// The jumps into kPolicyChain from FORWARD and INPUT of the filter table.
std::vector<proxy::JumpRule> policyJumpRules();

}  // namespace minik8s::netpol
