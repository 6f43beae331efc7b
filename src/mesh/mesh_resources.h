// What the mesh controller installs when the controller manager starts (the "mesh" controller):
// the networking.istio.io/v1 VirtualService and DestinationRule kinds as CustomResourceDefinitions
// (with their v1beta1 and v1alpha3 names served too, so Istio YAML of any of those versions
// applies), and the ClusterRole minik8s:mesh-proxy bound to every service account, which lets a
// sidecar read the registry (services, endpoints, pods) and the rules. Thread-safe.
#pragma once

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::mesh {

json virtualServiceCrd();
json destinationRuleCrd();

// Creates or updates the two CRDs and the proxies' ClusterRole and ClusterRoleBinding.
Status ensureMeshResources(client::RestClient& rest);

// The mesh controller: everything it does today happens in ensureMeshResources() before it
// starts; start() and stop() are there for the controller manager's table.
class MeshController {
 public:
  void start() {}
  void stop() {}
};

}  // namespace minik8s::mesh
