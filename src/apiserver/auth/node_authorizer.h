// NodeAuthorizer: what a kubelet (user "system:node:<name>" in group system:nodes) may do, in
// the spirit of Kubernetes' Node authorizer: read what a kubelet reads (pods, services,
// endpoints, endpoint slices, nodes, and the configmaps, secrets and volume claims its pods use —
// simplified here to get/list/watch of those kinds), register and update its own Node and its
// status, its own Lease in kube-node-lease, pod status, events, its CSRs, and tokens for the
// service accounts of the pods bound to it; for its node-local CSI provisioner, read storage
// classes and create and delete persistent volumes; its own CSINode. Node restriction admission
// (node_restriction.h) then checks what the written objects contain. Other users get NoOpinion, as
// do node requests this authorizer does not recognise (RBAC decides next). Thread-safe.
#pragma once

#include "apiserver/auth/auth.h"
#include "apiserver/auth/rbac_authorizer.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

// "system:node:<name>" in system:nodes -> "<name>"; anything else -> "".
std::string nodeNameOf(const UserInfo& user);

class NodeAuthorizer : public Authorizer, public RuleLister {
 public:
  // `registry` (may be null) checks that a service-account token is for a pod on the node.
  explicit NodeAuthorizer(Registry* registry = nullptr) : registry_(registry) {}
  Decision authorize(const Attributes& attributes) const override;
  // Nodes' permissions depend on the objects bound to them: not listed (incomplete); other
  // users have none here.
  UserRules rulesFor(const UserInfo& user, const std::string& namespaceName) const override;

 private:
  Decision authorizeToken(const std::string& node, const Attributes& attributes) const;
  Registry* registry_;
};

}  // namespace minik8s::apiserver::auth
