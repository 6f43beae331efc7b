// RBAC: rbac.authorization.k8s.io Roles, ClusterRoles and their bindings decide what a user may
// do, as Kubernetes' RBAC authorizer does. Rules match verbs, API groups, resources
// ("pods/log" for a subresource, "*/scale" for a subresource of any resource), resourceNames
// and, for non-resource requests, nonResourceURLs (a trailing "*" matches a prefix); "*" is a
// wildcard everywhere. RoleBindings grant in their namespace, ClusterRoleBindings everywhere.
// RBAC only allows: an unmatched request gets NoOpinion. ClusterRoles with an aggregationRule
// get the rules of the ClusterRoles their selectors match.
//
// RbacPolicy is an immutable snapshot; RbacAuthorizer reloads it from its source when it is older
// than `maxStaleness`, so changes show within that time. RbacAuthorizer is thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"

namespace minik8s::apiserver {
class Registry;
}

namespace minik8s::apiserver::auth {

inline constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";

struct PolicyRule {
  std::vector<std::string> verbs, apiGroups, resources, resourceNames, nonResourceURLs;

  static PolicyRule fromJson(const json& rule);  // tolerant: wrong types read as empty
  json toJson() const;                           // rbac/v1 PolicyRule (empty lists omitted)
  bool allows(const Attributes& attributes) const;
};

// The `rules` of a Role or ClusterRole object (rbac/v1 JSON); none when absent or malformed.
std::vector<PolicyRule> policyRules(const json& role);

// The rules a user has somewhere, as a SelfSubjectRulesReview reports them.
struct UserRules {
  std::vector<PolicyRule> rules;
  bool incomplete = false;  // an authorizer that cannot list its rules took part
};

// Authorizers that can list a user's rules (for SelfSubjectRulesReview).
class RuleLister {
 public:
  virtual ~RuleLister() = default;
  virtual UserRules rulesFor(const UserInfo& user, const std::string& namespaceName) const = 0;
};

class RbacPolicy {
 public:
  // From the stored objects (rbac/v1 JSON). Aggregation rules are resolved here.
  RbacPolicy(const std::vector<json>& clusterRoles, const std::vector<json>& roles,
             const std::vector<json>& clusterRoleBindings, const std::vector<json>& roleBindings);
  RbacPolicy() = default;

  // The rules granted to `user` by ClusterRoleBindings and by the RoleBindings of
  // `namespaceName` ("" = cluster bindings only).
  std::vector<PolicyRule> rulesFor(const UserInfo& user, const std::string& namespaceName) const;
  // Allow when a rule granted to the user matches; NoOpinion otherwise.
  Decision authorize(const Attributes& attributes) const;
  // The rules of the role a binding in `bindingNamespace` ("" for a ClusterRoleBinding) refers
  // to: kind "Role" (in that namespace) or "ClusterRole" (aggregation resolved). Null when there
  // is no such role.
  const std::vector<PolicyRule>* roleReferenceRules(const std::string& kind,
                                                    const std::string& name,
                                                    const std::string& bindingNamespace) const;

 private:
  struct Binding {
    std::string namespaceName;  // "" for ClusterRoleBindings
    std::string roleKind, roleName;
    std::vector<json> subjects;
  };
  bool appliesTo(const Binding& binding, const UserInfo& user) const;
  const std::vector<PolicyRule>* roleRules(const Binding& binding) const;

  std::map<std::string, std::vector<PolicyRule>> clusterRoles_;
  std::map<std::string, std::vector<PolicyRule>> roles_;  // "namespace/name"
  std::vector<Binding> clusterBindings_;
  std::map<std::string, std::vector<Binding>> roleBindings_;  // by namespace
};

// The four kinds read through `registry` now (what RbacAuthorizer::fromRegistry reloads).
Result<RbacPolicy> loadRbacPolicy(Registry& registry);

class RbacAuthorizer : public Authorizer, public RuleLister {
 public:
  using PolicySource = std::function<Result<RbacPolicy>()>;

  explicit RbacAuthorizer(PolicySource source,
                          std::chrono::milliseconds maxStaleness = std::chrono::milliseconds(500));
  // Reads the four kinds through the registry.
  static std::shared_ptr<RbacAuthorizer> fromRegistry(
      Registry& registry, std::chrono::milliseconds maxStaleness = std::chrono::milliseconds(500));

  Decision authorize(const Attributes& attributes) const override;
  UserRules rulesFor(const UserInfo& user, const std::string& namespaceName) const override;

 private:
  std::shared_ptr<const RbacPolicy> policy() const;

  PolicySource source_;
  std::chrono::milliseconds maxStaleness_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const RbacPolicy> policy_;
  mutable std::chrono::steady_clock::time_point loadedAt_;
};

}  // namespace minik8s::apiserver::auth
