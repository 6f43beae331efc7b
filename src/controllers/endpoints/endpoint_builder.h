// What the Endpoints and EndpointSlice controllers compute for one Service from its pods, as pure
// functions so the rules are tested without a server: which pods a Service selects, how a
// targetPort (number or container port name) resolves per pod, and the desired Endpoints
// subsets and EndpointSlices. Thread-safe (no state).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::controllers {

inline constexpr char kServiceNameLabel[] = "kubernetes.io/service-name";
inline constexpr char kManagedByLabel[] = "endpointslice.kubernetes.io/managed-by";
inline constexpr char kEndpointSliceControllerName[] = "endpointslice-controller.k8s.io";
inline constexpr char kHeadlessLabel[] = "service.kubernetes.io/headless";
inline constexpr size_t kMaxEndpointsPerSlice = 100;

// A Service with a non-empty spec.selector; the controllers leave the endpoints of the others to
// their users.
bool hasSelector(const json& svc);
bool isHeadless(const json& svc);
// spec.selector (a plain label map) matches the pod's labels, in the Service's namespace.
bool selectsPod(const json& svc, const json& pod);

// The pod port a Service port targets: targetPort as a number, or the containerPort of the
// container port with that name and the Service port's protocol. nullopt when it does not
// resolve for this pod.
std::optional<int> resolveTargetPort(const json& servicePort, const json& pod);

// Whether a pod can be an endpoint at all: it has an IP and has not finished (Succeeded/Failed).
bool podHasEndpoint(const json& pod);

// Endpoints.subsets: ready pods in addresses, the others in notReadyAddresses (all in addresses
// with publishNotReadyAddresses), terminating pods left out, pods grouped by their resolved
// ports; addresses sorted by IP, ports by name. `pods` are the pods of the Service's namespace.
json buildEndpointSubsets(const json& svc, const std::vector<json>& pods);

// Labels both kinds carry: the Service's own, plus service.kubernetes.io/headless for headless
// Services.
json endpointLabels(const json& svc);

// The desired EndpointSlices: one per set of resolved ports, at most kMaxEndpointsPerSlice
// endpoints each (addressType IPv4, ports, endpoints with conditions ready/serving/terminating,
// nodeName, targetRef, labels, the Service as controller owner). No metadata.name: the
// controller reuses or generates names.
std::vector<json> buildEndpointSlices(const json& svc, const std::vector<json>& pods);

}  // namespace minik8s::controllers
