// The kube-dns Service and each node's entry in it. Pods' resolv.conf points at 10.96.0.10; the
// service proxy DNATs that address (udp and tcp 53) to the endpoints of kube-system/kube-dns,
// which are the nodes' own DNS servers. Each agent publishes itself as one EndpointSlice,
// kube-dns-<node>, owned by its Node (so it goes when the node object goes) and labelled
// endpointslice.kubernetes.io/managed-by=minik8s-agent so the EndpointSlice controller leaves it
// alone (the service has no selector).
//
// Stateless functions over a RestClient; safe from any thread.
#pragma once

#include <string>

#include "client/rest_client.h"

namespace minik8s::dns {

inline constexpr const char* kDnsServiceNamespace = "kube-system";
inline constexpr const char* kDnsServiceName = "kube-dns";
inline constexpr const char* kDnsServiceIP = "10.96.0.10";

// The kube-dns Service (ClusterIP 10.96.0.10, ports dns/UDP/53 and dns-tcp/TCP/53, no selector).
json dnsServiceObject();
// The EndpointSlice announcing `nodeIP`:53 as a DNS server of `nodeName`.
json dnsEndpointSliceObject(const std::string& nodeName, const std::string& nodeIP);

// Creates the kube-dns Service if it is missing, then creates or updates this node's slice.
Status ensureNodeDnsEndpoint(client::RestClient& client, const std::string& nodeName,
                             const std::string& nodeIP);
// The general form, also used for the Dns gateway: creates `service` (a Service object with
// metadata.namespace) if it is missing, then creates or updates `slice` (an EndpointSlice of it
// naming one node), owned by Node `nodeName`.
Status ensureNodeServiceEndpoint(client::RestClient& client, const json& service, json slice,
                                 const std::string& nodeName);

// Deletes this node's slice (OK when it is not there).
Status removeNodeDnsEndpoint(client::RestClient& client, const std::string& nodeName);

}  // namespace minik8s::dns
