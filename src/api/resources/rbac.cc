// rbac.authorization.k8s.io/v1 roles and bindings, and the access and token reviews of
// authorization.k8s.io/v1 and authentication.k8s.io/v1.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

std::vector<TableColumn> roleBindingColumns() {
  return {nameColumn(),
          col("Role", "The role bound."),
          ageColumn(),
          wide("Users", "Users in the binding"),
          wide("Groups", "Groups in the binding"),
          wide("ServiceAccounts", "ServiceAccounts in the binding")};
}

json roleBindingCells(const json& obj, const json& meta, TimePoint now) {
  const json& ref = object(obj, "roleRef");
  std::string users, groups, sas;
  auto add = [](std::string& list, const std::string& item) {
    list += (list.empty() ? "" : ", ") + item;
  };
  for (const auto& s : array(obj, "subjects")) {
    std::string kind = str(s, "kind");
    if (kind == "User") add(users, str(s, "name"));
    if (kind == "Group") add(groups, str(s, "name"));
    if (kind == "ServiceAccount") add(sas, str(s, "namespace") + ":" + str(s, "name"));
  }
  return json::array({str(meta, "name"), str(ref, "kind") + "/" + str(ref, "name"), age(meta, now),
                      users, groups, sas});
}

// authorization.k8s.io and authentication.k8s.io reviews: create-only, never stored.
ResourceInfo review(const char* group, const char* kind, const char* plural, const char* singular,
                    bool namespaced) {
  ResourceInfo r = resource(group, "v1", kind, plural, singular);
  r.namespaced = namespaced;
  r.verbs = {"create"};
  return r;
}

ResourceType clusterRoleBinding() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
               "clusterrolebinding");
  r.namespaced = false;
  t.validate = validation::validateClusterRoleBinding;
  t.columns = roleBindingColumns();
  t.cells = roleBindingCells;
  return t;
}

ResourceType clusterRole() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole");
  r.namespaced = false;
  t.validate = validation::validateClusterRole;
  return t;
}

ResourceType roleBinding() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding");
  t.validate = validation::validateRoleBinding;
  t.columns = roleBindingColumns();
  t.cells = roleBindingCells;
  return t;
}

ResourceType role() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("rbac.authorization.k8s.io", "v1", "Role", "roles", "role");
  t.validate = validation::validateRole;
  return t;
}

ResourceType localSubjectAccessReview() {
  ResourceType t;
  t.info = review("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews",
                  "localsubjectaccessreview", true);
  return t;
}

ResourceType selfSubjectAccessReview() {
  ResourceType t;
  t.info = review("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews",
                  "selfsubjectaccessreview", false);
  return t;
}

ResourceType selfSubjectRulesReview() {
  ResourceType t;
  t.info = review("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews",
                  "selfsubjectrulesreview", false);
  return t;
}

ResourceType subjectAccessReview() {
  ResourceType t;
  t.info = review("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews",
                  "subjectaccessreview", false);
  return t;
}

ResourceType selfSubjectReview() {
  ResourceType t;
  t.info = review("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews",
                  "selfsubjectreview", false);
  return t;
}

ResourceType tokenReview() {
  ResourceType t;
  t.info = review("authentication.k8s.io", "TokenReview", "tokenreviews", "tokenreview", false);
  return t;
}

}  // namespace

void addRbacResources(std::vector<ResourceType>& out) {
  out.push_back(clusterRoleBinding());
  out.push_back(clusterRole());
  out.push_back(roleBinding());
  out.push_back(role());
  out.push_back(localSubjectAccessReview());
  out.push_back(selfSubjectAccessReview());
  out.push_back(selfSubjectRulesReview());
  out.push_back(subjectAccessReview());
  out.push_back(selfSubjectReview());
  out.push_back(tokenReview());
}

}  // namespace minik8s::api::resources
