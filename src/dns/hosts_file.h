// Hosts file: the pure half of the cluster DNS. From Services and EndpointSlices (JSON as the API
// returns them) it renders the hosts file dnsmasq serves:
//
//   10.96.0.20   web.default.svc.cluster.local web.default.svc web.default   (ClusterIP)
//   10.244.1.5   db.default.svc.cluster.local db.default.svc db.default      (headless: one line
//   10.244.2.6   db.default.svc.cluster.local db.default.svc db.default       per ready pod IP)
//   10.244.1.5   db-0.db.default.svc.cluster.local                           (endpoint hostname)
//
// plus extra host -> IP entries (the hook for Dns host/path objects). The bare `<svc>` form is
// left to the pods' search path (<ns>.svc.cluster.local), as in Kubernetes. Pure, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::dns {

struct HostEntry {
  std::string name;  // e.g. example.com
  std::string ip;
  bool operator==(const HostEntry&) const = default;
};

// `domain` is the cluster domain ("cluster.local"). The output is sorted, so equal inputs give
// byte-equal files (a change is detected by comparing texts).
std::string buildHostsFile(const std::vector<json>& services, const std::vector<json>& slices,
                           const std::string& domain, const std::vector<HostEntry>& extra = {});

// The annotation that gives a Service a wildcard name: every name under the domain it names
// ("fn.cluster.local": hello.default.fn.cluster.local, ...) resolves to the Service's ClusterIP
// (the serverless gateway uses it). Several domains may be listed, separated by commas.
inline constexpr char kWildcardAnnotation[] = "dns.minik8s.io/wildcard";

// The (domain, ClusterIP) pairs of the Services carrying kWildcardAnnotation, sorted by domain;
// a domain claimed twice goes to the first Service in namespace/name order. Domains must be DNS
// names (letters, digits, '-' and '.'); others are ignored.
std::vector<HostEntry> wildcardDomains(const std::vector<json>& services);

}  // namespace minik8s::dns
