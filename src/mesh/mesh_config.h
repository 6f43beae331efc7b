// MeshConfig: what every sidecar needs to route, built from the cluster's objects: each
// Service with its virtual IP, ports and ready endpoints (with their pods' labels, for subsets),
// and the VirtualServices and DestinationRules that apply to it.
//
// buildMeshConfig() is a pure function of the objects, so the registry and the rules are tested
// without an API server; a built config is immutable and shared between threads through
// std::shared_ptr<const MeshConfig>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mesh/authorization_policy.h"
#include "mesh/peer_authentication.h"
#include "mesh/rules.h"

namespace minik8s::mesh {

struct MeshEndpoint {
  std::string ip;
  int port = 0;  // the target port of the service port it was listed under
  std::string podName;
  std::map<std::string, std::string> labels;
  // Of its pod (when the registry knows it): mTLS goes only to a pod with a sidecar, and the
  // sidecar's certificate must name that pod's service account.
  std::string ns;
  bool sidecar = false;
  std::string serviceAccount;
};

// A pod as the mesh sees it: for mTLS decisions by pod IP and for a sidecar's own policy.
struct MeshPod {
  std::string ns, name, ip, serviceAccount;
  std::map<std::string, std::string> labels;
  bool sidecar = false;  // has the istio-proxy container
};

struct MeshServicePort {
  std::string name;
  int port = 0;
  std::string protocol = "TCP";
  std::string appProtocol;  // "http" when the port name or appProtocol says so; "" unknown
  std::vector<MeshEndpoint> endpoints;
};

struct MeshService {
  std::string ns, name;
  std::string clusterIP;  // "" or "None" for headless
  std::vector<MeshServicePort> ports;
  std::vector<HttpRoute> routes;          // from the VirtualServices whose hosts name this service
  std::map<std::string, Subset> subsets;  // from its DestinationRules, by subset name
  TrafficPolicy trafficPolicy;            // its DestinationRule's (a subset's may override it)
  std::string key() const { return ns + "/" + name; }
  const MeshServicePort* port(int number) const;
};

struct MeshConfig {
  int64_t version = 0;
  std::map<std::string, MeshService> services;  // by "ns/name"
  std::map<std::string, std::string> byVip;     // "clusterIP:port" -> "ns/name"

  std::map<std::string, MeshPod> pods;         // by "ns/name"
  std::map<std::string, std::string> podByIp;  // pod IP -> "ns/name" (running pods)
  std::vector<PeerAuthentication> peerAuthentications;
  std::vector<AuthorizationPolicy> authorizationPolicies;

  const MeshService* serviceAt(const std::string& ip, int port) const;
  const MeshService* service(const std::string& key) const;
  const MeshPod* pod(const std::string& key) const;
  const MeshPod* podAt(const std::string& ip) const;
  // The PeerAuthentication mode of a workload on a port (PERMISSIVE when nothing says).
  MtlsMode mtlsMode(const std::string& ns, const std::map<std::string, std::string>& labels,
                    int port) const;
};

// Every kind the mesh reads, as the API returns them.
struct MeshObjects {
  std::vector<json> services, endpoints, pods, virtualServices, destinationRules,
      peerAuthentications, authorizationPolicies;
};
// The registry from them (Pods for their labels and sidecars). Rules that do not parse are
// skipped and reported in `errors`.
std::shared_ptr<const MeshConfig> buildMeshConfig(const MeshObjects& objects, int64_t version,
                                                  std::vector<std::string>* errors = nullptr);

// The endpoints of `port` of `svc` that belong to `subset` ("" = all); empty when the subset is
// unknown.
std::vector<const MeshEndpoint*> subsetEndpoints(const MeshService& svc,
                                                 const MeshServicePort& port,
                                                 const std::string& subset);

// The registry as JSON (what `minik8s mesh services` prints).
json meshConfigToJson(const MeshConfig& config);

}  // namespace minik8s::mesh
