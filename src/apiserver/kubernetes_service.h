// The `kubernetes` Service of namespace default, and its Endpoints and EndpointSlice, pointing at
// this API server: what Kubernetes' master endpoint reconciler keeps, so pods reach the API at
// https://kubernetes.default.svc (ClusterIP, port 443 -> the server's port).
// Stateless functions over a Registry; thread-safe as the Registry is.
#pragma once

#include <string>

#include "apiserver/registry.h"

namespace minik8s::apiserver {

struct KubernetesServiceSpec {
  std::string clusterIP;         // the first address of the service range, 10.96.0.1
  std::string advertiseAddress;  // host:port clients reach this server at
};

// Creates the Service, Endpoints and EndpointSlice, or repairs their ports and addresses. An
// advertised host that is not a routable IPv4 address (127.0.0.1, a name) cannot be an endpoint:
// then only the Service is kept and the Endpoints/EndpointSlice are left as they are.
Status reconcileKubernetesService(Registry& registry, const KubernetesServiceSpec& spec);

}  // namespace minik8s::apiserver
