// NodeAuthorizer: what a kubelet (user "system:node:<name>" in group system:nodes) may do, in
// the spirit of Kubernetes' Node authorizer: read what a kubelet reads (pods, services,
// endpoints, endpoint slices, nodes; a Secret or ConfigMap only by name (get) and only when a pod
// bound to the node references it, per the NodeGraph; volume claims and volumes: get/list/watch,
// which the node's own CSI provisioner needs), register and update its own Node and its
// status, its own Lease in kube-node-lease, pod status, events, its CSRs, and tokens for the
// service accounts of the pods bound to it; for its node-local CSI provisioner, read storage
// classes and create and delete persistent volumes; its own CSINode. Node restriction admission
// (node_restriction.h) then checks what the written objects contain. Other users get NoOpinion, as
// do node requests this authorizer does not recognise (RBAC decides next). Thread-safe.
#pragma once

#include <memory>

#include "apiserver/auth/auth.h"
#include "apiserver/auth/node_graph.h"
#include "apiserver/auth/rbac_authorizer.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

// "system:node:<name>" in system:nodes -> "<name>"; anything else -> "".
std::string nodeNameOf(const UserInfo& user);

class NodeAuthorizer : public Authorizer, public RuleLister {
 public:
  // `registry` (may be null: then secrets, configmaps and tokens are not checked against pods)
  // answers whether a pod bound to the node references an object; `graph` (may be null) answers
  // first, from memory.
  explicit NodeAuthorizer(Registry* registry = nullptr, std::shared_ptr<NodeGraph> graph = nullptr)
      : registry_(registry), graph_(std::move(graph)) {}
  Decision authorize(const Attributes& attributes) const override;
  // Nodes' permissions depend on the objects bound to them: not listed (incomplete); other
  // users have none here.
  UserRules rulesFor(const UserInfo& user, const std::string& namespaceName) const override;

 private:
  // Allows when a pod bound to `node` references the object.
  Decision authorizeReference(const std::string& node, NodeGraph::Kind kind,
                              const Attributes& attributes, const std::string& what) const;
  Registry* registry_;
  std::shared_ptr<NodeGraph> graph_;
};

}  // namespace minik8s::apiserver::auth
