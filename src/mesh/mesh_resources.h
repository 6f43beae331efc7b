// What the mesh controller installs when the controller manager starts (the "mesh" controller):
// the networking.istio.io/v1 VirtualService and DestinationRule kinds as CustomResourceDefinitions
// (with their v1beta1 and v1alpha3 names served too, so Istio YAML of any of those versions
// applies), security.istio.io's PeerAuthentication and AuthorizationPolicy (v1, v1beta1), and the
// ClusterRole minik8s:mesh-proxy, which lets a sidecar read the registry (services, endpoints,
// pods) and the rules and policies; controllers/mesh binds it to the service accounts of
// each namespace labelled istio-injection=enabled. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::mesh {

json virtualServiceCrd();
json destinationRuleCrd();
json peerAuthenticationCrd();   // security.istio.io/v1 (and v1beta1) PeerAuthentication
json authorizationPolicyCrd();  // security.istio.io/v1 (and v1beta1) AuthorizationPolicy

// The sidecars' ClusterRole minik8s:mesh-proxy: create and get their workload certificate's CSR,
// and, with `readsRegistry` (no istiod: each sidecar watches the API server), read services,
// endpoints, pods and the three rule kinds.
json meshProxyRole(bool readsRegistry);

// Creates or updates the three CRDs and the proxies' ClusterRole (without the registry's read
// access once istiod is installed).
Status ensureMeshResources(client::RestClient& rest);

// The mesh discovery server in the cluster (`minik8s mesh install-discovery`), as istiod is:
// namespace istio-system (not meshed), ServiceAccount, ClusterRole and ClusterRoleBinding
// minik8s:mesh-discovery (read the registry and the rules, create TokenReviews), Secret
// istiod-tls (a serving certificate for the Service's names signed by the cluster CA, so sidecars
// check it with their service account's ca.crt), Service istiod (port 15012) and Deployment istiod
// (`minik8s mesh-discovery` in `image`, one replica, TCP readiness). Sidecars started
// afterwards find it by its name (kDiscoveryHost) and stop watching the API server, and the
// sidecars' ClusterRole loses its read access (meshProxyRole(false)).
inline constexpr char kDiscoveryHost[] = "istiod.istio-system.svc.cluster.local";
std::vector<json> meshDiscoveryObjects(const std::string& image, const std::string& caCertPem,
                                       const std::string& caKeyPem, Status* error);
Status installMeshDiscovery(client::RestClient& rest, const std::string& image,
                            const std::string& caCertPem, const std::string& caKeyPem);
// Waits until istiod's Deployment has a ready replica (Timeout after `timeout`, saying where to
// look): a sidecar started before istiod answers has no routes until it does.
Status waitForMeshDiscovery(client::RestClient& rest, std::chrono::milliseconds timeout);

}  // namespace minik8s::mesh
