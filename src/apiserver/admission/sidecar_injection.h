// MeshSidecarInjection (mutating): the service mesh's sidecar, added to a pod when it is created
// (docs/mesh.md), as Istio's injector does:
//
//   - the pod is annotated sidecar.istio.io/inject: "true", or its namespace is labelled
//     istio-injection=enabled and the pod does not say "false"; with enableNamespacesByDefault
//     (the server's --mesh, Istio's sidecarInjectorWebhook.enableNamespacesByDefault) every
//     namespace not labelled istio-injection=disabled too; never in kube-system, kube-public or
//     kube-node-lease, never a hostNetwork pod, never twice (a container named istio-proxy is
//     already there);
//   - init container istio-init (image minik8s/mesh-proxy, `minik8s mesh-init`, privileged):
//     the pod's iptables redirection, outbound to 15001 and inbound to 15006, UID 1337 excluded;
//   - container istio-proxy (`minik8s mesh-proxy`, runAsUser 1337) with POD_NAME, POD_NAMESPACE
//     and POD_IP from the downward API, metrics on 15090.
//
// It runs before ServiceAccount, so the proxy gets the service account token mount that it
// reads the registry with. The namespace is read through the AdmissionLister. Thread-safe.
#pragma once

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

inline constexpr const char* kMeshProxyImage = "minik8s/mesh-proxy:latest";

// Whether `pod` gets a sidecar, given its namespace's labels (null when unknown) and whether
// namespaces without the label are meshed.
bool wantsSidecar(const json& pod, const std::string& ns, const json* namespaceObject,
                  bool enableNamespacesByDefault = false);
// Adds istio-init and istio-proxy to `pod` (a pod as created).
void injectSidecar(json& pod);

class SidecarInjection : public ListerBackedPlugin {
 public:
  explicit SidecarInjection(Registry& registry, bool enableNamespacesByDefault = false,
                            std::shared_ptr<AdmissionLister> lister = nullptr)
      : ListerBackedPlugin(registry, std::move(lister)),
        registry_(registry),
        byDefault_(enableNamespacesByDefault) {}
  // The plugin's configuration (AdmissionConfiguration, or the server's --mesh):
  // {"enableNamespacesByDefault": true}; null = the defaults.
  static Result<std::shared_ptr<SidecarInjection>> fromConfig(
      Registry& registry, const json& config, std::shared_ptr<AdmissionLister> lister = nullptr);
  Status admit(auth::AdmissionRequest& request) override;

 private:
  Registry& registry_;
  bool byDefault_ = false;
};

}  // namespace minik8s::apiserver::admission
