// Schemas of networking.k8s.io/v1: NetworkPolicy.
#include "api/schema/schema_texts.h"

namespace minik8s::api::schema {

std::string_view networkingSchemaText() {
  return R"schema(
package io.k8s.api.networking.v1
NetworkPolicy @networking.k8s.io/v1 +list: NetworkPolicy describes what network traffic is allowed for a set of Pods.
  spec NetworkPolicySpec: spec represents the specification of the desired behavior for this NetworkPolicy.
NetworkPolicySpec: NetworkPolicySpec provides the specification of a NetworkPolicy.
  podSelector LabelSelector: podSelector selects the pods to which this NetworkPolicy object applies. An empty podSelector selects all pods in the namespace.
  ingress []NetworkPolicyIngressRule: ingress is a list of ingress rules to be applied to the selected pods. Traffic is allowed to a pod if there are no NetworkPolicies selecting the pod (and cluster policy otherwise allows the traffic), OR if the traffic source is the pod's local node, OR if the traffic matches at least one ingress rule across all of the NetworkPolicy objects whose podSelector matches the pod.
  egress []NetworkPolicyEgressRule: egress is a list of egress rules to be applied to the selected pods. Outgoing traffic is allowed if there are no NetworkPolicies selecting the pod, OR if the traffic matches at least one egress rule across all of the NetworkPolicy objects whose podSelector matches the pod.
  policyTypes []string: policyTypes is a list of rule types that the NetworkPolicy relates to: "Ingress", "Egress", or both. If unspecified, Ingress is always set and Egress is set when the policy has egress rules.
NetworkPolicyIngressRule: NetworkPolicyIngressRule describes a particular set of traffic that is allowed to the pods matched by a NetworkPolicySpec's podSelector. The traffic must match both ports and from.
  ports []NetworkPolicyPort: ports is a list of ports which should be made accessible on the pods selected for this rule. Empty or missing: all ports.
  from []NetworkPolicyPeer: from is a list of sources which should be able to access the pods selected for this rule. Empty or missing: all sources.
NetworkPolicyEgressRule: NetworkPolicyEgressRule describes a particular set of traffic that is allowed out of pods matched by a NetworkPolicySpec's podSelector. The traffic must match both ports and to.
  ports []NetworkPolicyPort: ports is a list of destination ports for outgoing traffic. Empty or missing: all ports.
  to []NetworkPolicyPeer: to is a list of destinations for outgoing traffic of pods selected for this rule. Empty or missing: all destinations.
NetworkPolicyPeer: NetworkPolicyPeer describes a peer to allow traffic to/from. Only certain combinations of fields are allowed.
  podSelector LabelSelector: podSelector is a label selector which selects pods, in the policy's namespace or, with namespaceSelector, in the selected namespaces.
  namespaceSelector LabelSelector: namespaceSelector selects namespaces using cluster-scoped labels; with podSelector, the pods matching it in those namespaces.
  ipBlock IPBlock: ipBlock defines policy on a particular IPBlock. If this field is set then neither of the other fields can be.
IPBlock: IPBlock describes a particular CIDR (Ex. "192.168.1.0/24","2001:db8::/64") that is allowed to the pods matched by a NetworkPolicySpec's podSelector.
  cidr! string: cidr is a string representing the IPBlock, e.g. "192.168.1.0/24" or "2001:db8::/64".
  except []string: except is a slice of CIDRs that should not be included within an IPBlock; values outside the cidr are rejected.
NetworkPolicyPort: NetworkPolicyPort describes a port to allow traffic on.
  protocol string: protocol represents the protocol (TCP, UDP, or SCTP) which traffic must match. Defaults to TCP.
  port int-or-string: port represents the port on the given protocol: a numerical or named port on a pod. Missing: all ports.
  endPort int32: endPort indicates that the range of ports from port to endPort, inclusive, should be allowed. Only with a numerical port.
)schema";
}

}  // namespace minik8s::api::schema
