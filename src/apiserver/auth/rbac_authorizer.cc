#include "apiserver/auth/rbac_authorizer.h"

#include <algorithm>

#include "api/object_meta.h"
#include "api/selector.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::auth {

namespace {

std::vector<std::string> strings(const json& obj, const char* name) {
  std::vector<std::string> out;
  if (!obj.is_object()) return out;
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool hasWildcardOr(const std::vector<std::string>& list, const std::string& value) {
  return contains(list, "*") || contains(list, value);
}

bool resourceMatches(const PolicyRule& rule, const Attributes& a) {
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  for (const auto& r : rule.resources) {
    if (r == "*" || r == combined) return true;
    // "*/scale": the subresource of any resource.
    if (!a.subresource.empty() && r == "*/" + a.subresource) return true;
  }
  return false;
}

bool urlMatches(const std::vector<std::string>& urls, const std::string& path) {
  for (const auto& u : urls) {
    if (u == "*" || u == path) return true;
    if (!u.empty() && u.back() == '*' && path.starts_with(u.substr(0, u.size() - 1))) return true;
  }
  return false;
}

}  // namespace

PolicyRule PolicyRule::fromJson(const json& rule) {
  PolicyRule r;
  r.verbs = strings(rule, "verbs");
  r.apiGroups = strings(rule, "apiGroups");
  r.resources = strings(rule, "resources");
  r.resourceNames = strings(rule, "resourceNames");
  r.nonResourceURLs = strings(rule, "nonResourceURLs");
  return r;
}

json PolicyRule::toJson() const {
  json out = {{"verbs", verbs}};
  if (!apiGroups.empty()) out["apiGroups"] = apiGroups;
  if (!resources.empty()) out["resources"] = resources;
  if (!resourceNames.empty()) out["resourceNames"] = resourceNames;
  if (!nonResourceURLs.empty()) out["nonResourceURLs"] = nonResourceURLs;
  return out;
}

bool PolicyRule::allows(const Attributes& a) const {
  if (!hasWildcardOr(verbs, a.verb)) return false;
  if (!a.resourceRequest) return urlMatches(nonResourceURLs, a.path);
  if (!hasWildcardOr(apiGroups, a.apiGroup) || !resourceMatches(*this, a)) return false;
  // resourceNames limit the rule to named objects: a list or create (no name) is not one.
  return resourceNames.empty() || (!a.name.empty() && contains(resourceNames, a.name));
}

std::vector<PolicyRule> policyRules(const json& role) {
  std::vector<PolicyRule> rules;
  if (!role.is_object()) return rules;
  const json r = role.value("rules", json::array());
  if (r.is_array()) {
    for (const auto& rule : r) rules.push_back(PolicyRule::fromJson(rule));
  }
  return rules;
}

RbacPolicy::RbacPolicy(const std::vector<json>& clusterRoles, const std::vector<json>& roles,
                       const std::vector<json>& clusterRoleBindings,
                       const std::vector<json>& roleBindings) {
  for (const auto& role : clusterRoles) {
    clusterRoles_[api::stringAt(role, "/metadata/name")] = policyRules(role);
  }
  // Aggregation: a ClusterRole with an aggregationRule also has the rules of every ClusterRole
  // one of its selectors matches (one level, as the aggregation controller keeps it).
  for (const auto& role : clusterRoles) {
    const json selectors =
        role.value(json::json_pointer("/aggregationRule/clusterRoleSelectors"), json());
    if (!selectors.is_array()) continue;
    auto& target = clusterRoles_[api::stringAt(role, "/metadata/name")];
    for (const auto& selectorJson : selectors) {
      auto selector = api::LabelSelector::fromJson(selectorJson);
      if (!selector.ok() || selector->empty()) continue;
      for (const auto& other : clusterRoles) {
        if (&other == &role) continue;
        if (!selector->matches(other.value(json::json_pointer("/metadata/labels"), json()))) {
          continue;
        }
        auto more = policyRules(other);
        target.insert(target.end(), more.begin(), more.end());
      }
    }
  }
  for (const auto& role : roles) {
    roles_[api::stringAt(role, "/metadata/namespace") + "/" +
           api::stringAt(role, "/metadata/name")] = policyRules(role);
  }
  auto bindingOf = [](const json& b, std::string ns) {
    Binding binding;
    binding.namespaceName = std::move(ns);
    binding.roleKind = api::stringAt(b, "/roleRef/kind");
    binding.roleName = api::stringAt(b, "/roleRef/name");
    const json subjects = b.value("subjects", json::array());
    if (subjects.is_array()) binding.subjects.assign(subjects.begin(), subjects.end());
    return binding;
  };
  for (const auto& b : clusterRoleBindings) clusterBindings_.push_back(bindingOf(b, ""));
  for (const auto& b : roleBindings) {
    std::string ns = api::stringAt(b, "/metadata/namespace");
    roleBindings_[ns].push_back(bindingOf(b, ns));
  }
}

bool RbacPolicy::appliesTo(const Binding& binding, const UserInfo& user) const {
  for (const auto& s : binding.subjects) {
    if (!s.is_object()) continue;
    const std::string kind = s.value("kind", "");
    const std::string name = s.value("name", "");
    if (kind == "User" && name == user.name) return true;
    if (kind == "Group" && user.inGroup(name)) return true;
    if (kind == "ServiceAccount") {
      std::string ns = s.value("namespace", "");
      if (ns.empty()) ns = binding.namespaceName;
      if (user.name == std::string(kServiceAccountUserPrefix) + ns + ":" + name) return true;
    }
  }
  return false;
}

const std::vector<PolicyRule>* RbacPolicy::roleRules(const Binding& binding) const {
  return roleReferenceRules(binding.roleKind, binding.roleName, binding.namespaceName);
}

const std::vector<PolicyRule>* RbacPolicy::roleReferenceRules(
    const std::string& kind, const std::string& name, const std::string& bindingNamespace) const {
  if (kind == "ClusterRole") {
    auto it = clusterRoles_.find(name);
    return it == clusterRoles_.end() ? nullptr : &it->second;
  }
  if (kind == "Role" && !bindingNamespace.empty()) {
    auto it = roles_.find(bindingNamespace + "/" + name);
    return it == roles_.end() ? nullptr : &it->second;
  }
  return nullptr;
}

std::vector<PolicyRule> RbacPolicy::rulesFor(const UserInfo& user,
                                             const std::string& namespaceName) const {
  std::vector<PolicyRule> out;
  auto add = [&](const Binding& b) {
    if (!appliesTo(b, user)) return;
    if (const auto* rules = roleRules(b)) out.insert(out.end(), rules->begin(), rules->end());
  };
  for (const auto& b : clusterBindings_) add(b);
  if (!namespaceName.empty()) {
    if (auto it = roleBindings_.find(namespaceName); it != roleBindings_.end()) {
      for (const auto& b : it->second) add(b);
    }
  }
  return out;
}

Decision RbacPolicy::authorize(const Attributes& a) const {
  auto check = [&](const Binding& b) -> std::optional<Decision> {
    if (!appliesTo(b, a.user)) return std::nullopt;
    const auto* rules = roleRules(b);
    if (!rules) return std::nullopt;
    for (const auto& rule : *rules) {
      if (rule.allows(a)) {
        const char* kind = b.namespaceName.empty() ? "ClusterRoleBinding" : "RoleBinding";
        return Decision::allow(std::string("RBAC: allowed by ") + kind + " of " + b.roleKind +
                               " \"" + b.roleName + "\"");
      }
    }
    return std::nullopt;
  };
  for (const auto& b : clusterBindings_) {
    if (auto d = check(b)) return *d;
  }
  if (a.resourceRequest && !a.namespaceName.empty()) {
    if (auto it = roleBindings_.find(a.namespaceName); it != roleBindings_.end()) {
      for (const auto& b : it->second) {
        if (auto d = check(b)) return *d;
      }
    }
  }
  return Decision::noOpinion();
}

RbacAuthorizer::RbacAuthorizer(PolicySource source, std::chrono::milliseconds maxStaleness)
    : source_(std::move(source)), maxStaleness_(maxStaleness) {}

Result<RbacPolicy> loadRbacPolicy(Registry& registry) {
  std::vector<json> lists[4];
  const char* plurals[4] = {"clusterroles", "roles", "clusterrolebindings", "rolebindings"};
  for (int i = 0; i < 4; ++i) {
    const auto* info = registry.scheme().byResource(kRbacGroup, "v1", plurals[i]);
    if (!info) return Status::Internal(std::string("the scheme has no ") + plurals[i]);
    auto page = registry.list(*info, "", {});
    if (!page.ok()) return page.status();
    lists[i] = std::move(page->items);
  }
  return RbacPolicy(lists[0], lists[1], lists[2], lists[3]);
}

std::shared_ptr<RbacAuthorizer> RbacAuthorizer::fromRegistry(
    Registry& registry, std::chrono::milliseconds maxStaleness) {
  Registry* reg = &registry;
  PolicySource source = [reg]() { return loadRbacPolicy(*reg); };
  return std::make_shared<RbacAuthorizer>(std::move(source), maxStaleness);
}

std::shared_ptr<const RbacPolicy> RbacAuthorizer::policy() const {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (policy_ && now - loadedAt_ < maxStaleness_) return policy_;
  auto loaded = source_();
  // A failed reload keeps the last good policy (and retries on the next request).
  if (loaded.ok()) {
    policy_ = std::make_shared<const RbacPolicy>(std::move(loaded.value()));
    loadedAt_ = now;
  } else if (!policy_) {
    return std::make_shared<const RbacPolicy>();
  }
  return policy_;
}

Decision RbacAuthorizer::authorize(const Attributes& attributes) const {
  return policy()->authorize(attributes);
}

UserRules RbacAuthorizer::rulesFor(const UserInfo& user, const std::string& namespaceName) const {
  return UserRules{policy()->rulesFor(user, namespaceName), false};
}

}  // namespace minik8s::apiserver::auth
