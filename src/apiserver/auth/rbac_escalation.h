// RBAC escalation prevention, as kube-apiserver's RBAC storage does it: nobody grants through
// RBAC what they do not hold themselves.
//
// - Role/ClusterRole create and update: every rule of the new object must be covered by the
//   requester's own rules in the request's namespace ("" for ClusterRoles: cluster bindings
//   only), unless the requester may `escalate` roles/clusterroles there. A ClusterRole with an
//   aggregationRule (before or after an update) also needs full authority (`*` on `*.*` and on
//   nonResourceURLs `*`): "must have cluster-admin privileges to use the aggregationRule".
// - RoleBinding/ClusterRoleBinding create and update: the requester may `bind` the referenced
//   role (resourceNames match the role's name), or holds every rule of that role in the
//   binding's namespace. A reference to a role that does not exist is NotFound.
// - Members of system:masters pass (the group of the admin credential and of the privileged
//   loopback clients); the bootstrap policy is written through the registry, not through here.
//   Updates that only change metadata.ownerReferences or metadata.finalizers pass (the garbage
//   collector's), as in Kubernetes.
// Refusals are 403 worded like Kubernetes': `roles.rbac.authorization.k8s.io "x" is forbidden:
// user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not
// currently held:\n{APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]}`.
//
// Kubernetes checks in the RBAC storage; here RbacEscalationCheck is an admission plugin the
// ApiServer runs first on every write whenever it has an authorizer (it cannot be disabled).
// The requester's rules are read fresh (RbacPolicy from the registry), `escalate` and `bind`
// are asked of the server's authorizer. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"
#include "apiserver/auth/rbac_authorizer.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

// Kubernetes' Covers: the pieces of `servantRules` (broken down to one verb, API group,
// resource and resource name, or one verb and non-resource URL) that no owner rule covers.
// Empty when the owner rules cover them all.
std::vector<PolicyRule> uncoveredRules(const std::vector<PolicyRule>& ownerRules,
                                       const std::vector<PolicyRule>& servantRules);
// Whether `owner` covers `subrule` (a piece from the breakdown above): verbs, API groups and
// resources with "*", "resource/subresource" covered by "*/subresource", resourceNames (none
// on the owner covers any), nonResourceURLs with a trailing "*" covering a prefix.
bool ruleCovers(const PolicyRule& owner, const PolicyRule& subrule);
// Merges the pieces that differ only by verb (Kubernetes' CompactRules).
std::vector<PolicyRule> compactRules(const std::vector<PolicyRule>& rules);
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["delete"]} (empty lists left out).
std::string compactString(const PolicyRule& rule);
// ConfirmNoEscalation's error text, or "" when `ownerRules` cover `rules`.
std::string escalationError(const UserInfo& user, const std::vector<PolicyRule>& ownerRules,
                            const std::vector<PolicyRule>& rules);

class RbacEscalationCheck : public AdmissionPlugin {
 public:
  // `authorizer` answers `escalate` and `bind`; `policy` gives the current RBAC objects.
  RbacEscalationCheck(std::shared_ptr<const Authorizer> authorizer,
                      RbacAuthorizer::PolicySource policy);
  // The policy read through `registry` at each check.
  static std::shared_ptr<RbacEscalationCheck> fromRegistry(
      Registry& registry, std::shared_ptr<const Authorizer> authorizer);

  Status admit(AdmissionRequest& request) override;

 private:
  Status admitRole(const AdmissionRequest& request, bool clusterRole) const;
  Status admitBinding(const AdmissionRequest& request) const;
  // Whether the authorizer allows the requester `verb` on the role resource (Kubernetes'
  // RoleEscalationAuthorized and BindingAuthorized).
  bool allowed(const UserInfo& user, const std::string& verb, const std::string& apiGroup,
               const std::string& resource, const std::string& namespaceName,
               const std::string& name) const;

  std::shared_ptr<const Authorizer> authorizer_;
  RbacAuthorizer::PolicySource policy_;
};

}  // namespace minik8s::apiserver::auth
