// NodeRestriction admission: limits what a kubelet (user "system:node:<name>" in system:nodes)
// writes, as Kubernetes' NodeRestriction plugin does:
// - Node: only its own; on create no labels outside what kubelets may set (kubernetes.io/ and
//   k8s.io/ labels only from the allowed list and the kubelet.kubernetes.io/ and
//   node.kubernetes.io/ prefixes; never node-restriction.kubernetes.io/); on update those
//   labels and the taints may not change;
// - Pod: create only mirror pods (annotation kubernetes.io/config.mirror) bound to itself;
//   update only the status of pods bound to it; delete and evict only pods bound to it;
// - Lease: only its own in kube-node-lease;
// - serviceaccounts/token: a token bound to a pod must be for a pod bound to it;
// - PersistentVolume (the agent's node-local CSI provisioner): create only a CSI volume pinned
//   to itself (api::volumePinnedToNode: required nodeAffinity kubernetes.io/hostname In [node]),
//   delete only volumes pinned to itself;
// - CSINode: only its own (named after the node).
// Other users pass untouched. Refusals are 403 Forbidden worded like Kubernetes'. Thread-safe.
#pragma once

#include "apiserver/auth/auth.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

class NodeRestriction : public AdmissionPlugin {
 public:
  // `registry` (may be null) looks up the pods of evictions and bound tokens.
  explicit NodeRestriction(Registry* registry = nullptr) : registry_(registry) {}
  Status admit(AdmissionRequest& request) override;

 private:
  Status admitNode(const std::string& node, const AdmissionRequest& request);
  Status admitPod(const std::string& node, const AdmissionRequest& request);
  Status admitLease(const std::string& node, const AdmissionRequest& request);
  Status admitToken(const std::string& node, const AdmissionRequest& request);
  Status admitVolume(const std::string& node, const AdmissionRequest& request);
  // The spec.nodeName of a stored pod ("" when absent or not found).
  std::string storedPodNode(const std::string& ns, const std::string& name) const;

  Registry* registry_;
};

// Whether a kubelet may set this node label itself (the rule above).
bool kubeletMaySetLabel(const std::string& key);

}  // namespace minik8s::apiserver::auth
