// MeshSidecarInjection (mutating): the service mesh's sidecar, added to a pod when it is created
// (docs/mesh.md), as Istio's injector does:
//
//   - the pod is annotated sidecar.istio.io/inject: "true", or its namespace is labelled
//     istio-injection=enabled and the pod does not say "false"; never in kube-system, never a
//     hostNetwork pod, never twice (a container named istio-proxy is already there);
//   - init container istio-init (image minik8s/mesh-proxy, `minik8s mesh-init`, privileged):
//     the pod's iptables redirection, outbound to 15001 and inbound to 15006, UID 1337 excluded;
//   - container istio-proxy (`minik8s mesh-proxy`, runAsUser 1337) with POD_NAME, POD_NAMESPACE
//     and POD_IP from the downward API, metrics on 15090.
//
// It runs before ServiceAccount, so the proxy gets the service account token mount that it
// reads the registry with. Thread-safe (stateless besides the registry).
#pragma once

#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

inline constexpr const char* kMeshProxyImage = "minik8s/mesh-proxy:latest";

// Whether `pod` gets a sidecar, given its namespace's labels (null when unknown).
bool wantsSidecar(const json& pod, const std::string& ns, const json* namespaceObject);
// Adds istio-init and istio-proxy to `pod` (a pod as created).
void injectSidecar(json& pod);

class SidecarInjection : public auth::AdmissionPlugin {
 public:
  explicit SidecarInjection(Registry& registry) : registry_(registry) {}
  Status admit(auth::AdmissionRequest& request) override;

 private:
  Registry& registry_;
};

}  // namespace minik8s::apiserver::admission
