// What the mesh controller installs when the controller manager starts (the "mesh" controller):
// the networking.istio.io/v1 VirtualService and DestinationRule kinds as CustomResourceDefinitions
// (with their v1beta1 and v1alpha3 names served too, so Istio YAML of any of those versions
// applies), and the ClusterRole minik8s:mesh-proxy, which lets a sidecar read the registry
// (services, endpoints, pods) and the rules; controllers/mesh binds it to the service accounts of
// each namespace labelled istio-injection=enabled. Thread-safe.
#pragma once

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::mesh {

json virtualServiceCrd();
json destinationRuleCrd();
json peerAuthenticationCrd();  // security.istio.io/v1 (and v1beta1) PeerAuthentication

// Creates or updates the three CRDs and the proxies' ClusterRole.
Status ensureMeshResources(client::RestClient& rest);

}  // namespace minik8s::mesh
