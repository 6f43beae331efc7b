// Service ports: what both modes of the service proxy (iptables, nftables) read from Services and
// EndpointSlices. A port gets rules when it has a ClusterIP and a port, or a NodePort; its
// endpoints are the ready ("conditions.ready" not false) IPv4 addresses of the slices labelled
// kubernetes.io/service-name with the service's name, on the slice port of the same name and
// protocol. Tolerant: a malformed object yields defaults, never an exception. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::proxy {

struct ServicePort {
  std::string name;      // ns/svc:port (":port" left out when the port has no name)
  std::string protocol;  // tcp, udp, sctp
  std::string clusterIP;
  int64_t port = 0;
  int64_t nodePort = 0;
  int64_t affinitySeconds = 0;         // ClientIP affinity when > 0
  std::vector<std::string> endpoints;  // "ip:port", sorted
};

// Ready endpoints per "ns/service", per "portName/PROTOCOL".
using EndpointIndex = std::map<std::string, std::map<std::string, std::set<std::string>>>;

EndpointIndex indexEndpoints(const std::vector<const json*>& slices);
// The ports of one service that get rules, sorted by (name, protocol), duplicates in spec order.
std::vector<ServicePort> servicePorts(const json& service, const EndpointIndex& endpoints);

// "ns/name:port" (":port" left out when the port has no name), as kube-proxy prints it.
std::string servicePortName(const std::string& ns, const std::string& name,
                            const std::string& port);

// "ns/name" of a Service, or of the Service an EndpointSlice is labelled with ("" when it has no
// kubernetes.io/service-name label): what ties a slice to its service.
std::string serviceKey(const json& service);
std::string sliceServiceKey(const json& slice);

// base32 (RFC 4648 alphabet) of sha256(text), 16 characters: the hash in kube-proxy's names.
std::string hash16(const std::string& text);

}  // namespace minik8s::proxy
