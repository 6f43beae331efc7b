#include "apiserver/auth/rbac_escalation.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "api/object_meta.h"
#include "api/validation/field_errors.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::auth {

namespace {

using api::validation::goQuote;  // Go's %q of a string, as Kubernetes' messages print names

std::string goQuote(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? " " : "") + goQuote(list[i]);
  return out + "]";
}

bool has(const std::vector<std::string>& set, const std::string& value) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

bool hasAll(const std::vector<std::string>& set, const std::vector<std::string>& values) {
  return std::all_of(values.begin(), values.end(),
                     [&](const std::string& v) { return has(set, v); });
}

bool resourcesCoverAll(const std::vector<std::string>& owner,
                       const std::vector<std::string>& wanted) {
  if (has(owner, "*") || hasAll(owner, wanted)) return true;
  for (const auto& path : wanted) {
    if (has(owner, path)) continue;
    // A subresource is also covered by "*/<subresource>"; a resource only by its name or "*".
    const auto slash = path.find('/');
    if (slash == std::string::npos || !has(owner, "*" + path.substr(slash))) return false;
  }
  return true;
}

bool urlCovers(const std::string& owner, const std::string& path) {
  if (owner == path) return true;
  if (owner.empty() || owner.back() != '*') return false;
  const std::string prefix = owner.substr(0, owner.find_last_not_of('*') + 1);
  return path.starts_with(prefix);
}

bool urlsCoverAll(const std::vector<std::string>& owner, const std::vector<std::string>& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& path) {
    return std::any_of(owner.begin(), owner.end(),
                       [&](const std::string& o) { return urlCovers(o, path); });
  });
}

// Kubernetes' BreakdownRule: one piece per (API group, resource, verb[, resource name]) and per
// (non-resource URL, verb).
std::vector<PolicyRule> breakdown(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const auto& group : rule.apiGroups) {
    for (const auto& resource : rule.resources) {
      for (const auto& verb : rule.verbs) {
        if (rule.resourceNames.empty()) {
          out.push_back(PolicyRule{{verb}, {group}, {resource}, {}, {}});
          continue;
        }
        for (const auto& name : rule.resourceNames) {
          out.push_back(PolicyRule{{verb}, {group}, {resource}, {name}, {}});
        }
      }
    }
  }
  for (const auto& url : rule.nonResourceURLs) {
    for (const auto& verb : rule.verbs) out.push_back(PolicyRule{{verb}, {}, {}, {}, {url}});
  }
  return out;
}

bool hasAggregationRule(const json* role) {
  if (!role || !role->is_object()) return false;
  const json selectors =
      role->value(json::json_pointer("/aggregationRule/clusterRoleSelectors"), json());
  return selectors.is_array() && !selectors.empty();
}

// Kubernetes' IsOnlyMutatingGCFields: the objects differ at most in what the garbage collector
// writes (and in what the server maintains).
bool onlyGcFieldsChange(const json& next, const json& current) {
  auto strip = [](json obj) {
    if (auto meta = obj.find("metadata"); meta != obj.end() && meta->is_object()) {
      for (const char* key :
           {"ownerReferences", "finalizers", "selfLink", "managedFields", "resourceVersion"}) {
        meta->erase(key);
      }
    }
    return obj;
  };
  return next.is_object() && current.is_object() && strip(next) == strip(current);
}

// What the requester must hold to set an aggregationRule: everything.
const std::vector<PolicyRule>& fullAuthority() {
  static const std::vector<PolicyRule> kAll = {PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}},
                                               PolicyRule{{"*"}, {}, {}, {}, {"*"}}};
  return kAll;
}

// errors.NewForbidden(rbac.Resource(resource), name, why).
Status forbiddenGrant(const std::string& resource, const std::string& name,
                      const std::string& why) {
  std::string message = resource + "." + kRbacGroup;
  if (!name.empty()) message += " " + goQuote(name);
  Status s = Status::Forbidden(message + " is forbidden: " + why);
  s.withDetails(name, kRbacGroup, resource);
  return s;
}

}  // namespace

bool ruleCovers(const PolicyRule& owner, const PolicyRule& subrule) {
  const bool verbs = has(owner.verbs, "*") || hasAll(owner.verbs, subrule.verbs);
  const bool groups = has(owner.apiGroups, "*") || hasAll(owner.apiGroups, subrule.apiGroups);
  const bool resources = resourcesCoverAll(owner.resources, subrule.resources);
  const bool urls = urlsCoverAll(owner.nonResourceURLs, subrule.nonResourceURLs);
  // An owner rule limited to names covers only those names; an unlimited one covers any.
  const bool names =
      owner.resourceNames.empty() ||
      (!subrule.resourceNames.empty() && hasAll(owner.resourceNames, subrule.resourceNames));
  return verbs && groups && resources && urls && names;
}

std::vector<PolicyRule> uncoveredRules(const std::vector<PolicyRule>& ownerRules,
                                       const std::vector<PolicyRule>& servantRules) {
  std::vector<PolicyRule> uncovered;
  for (const auto& servant : servantRules) {
    for (auto& piece : breakdown(servant)) {
      const bool covered = std::any_of(ownerRules.begin(), ownerRules.end(),
                                       [&](const PolicyRule& o) { return ruleCovers(o, piece); });
      if (!covered) uncovered.push_back(std::move(piece));
    }
  }
  return uncovered;
}

std::vector<PolicyRule> compactRules(const std::vector<PolicyRule>& rules) {
  std::vector<PolicyRule> out;
  // (group, resource, has a name, name) -> index in `out`
  std::map<std::tuple<std::string, std::string, bool, std::string>, size_t> simple;
  for (const auto& rule : rules) {
    const bool isSimple = rule.resourceNames.size() <= 1 && rule.nonResourceURLs.empty() &&
                          rule.apiGroups.size() == 1 && rule.resources.size() == 1;
    if (!isSimple) {
      out.push_back(rule);
      continue;
    }
    const bool named = !rule.resourceNames.empty();
    auto key = std::make_tuple(rule.apiGroups[0], rule.resources[0], named,
                               named ? rule.resourceNames[0] : std::string());
    if (auto it = simple.find(key); it != simple.end()) {
      auto& verbs = out[it->second].verbs;
      verbs.insert(verbs.end(), rule.verbs.begin(), rule.verbs.end());
    } else {
      simple.emplace(std::move(key), out.size());
      out.push_back(rule);
    }
  }
  return out;
}

std::string compactString(const PolicyRule& rule) {
  std::vector<std::string> parts;
  auto add = [&](const char* name, const std::vector<std::string>& values) {
    if (!values.empty()) parts.push_back(std::string(name) + ":" + goQuote(values));
  };
  add("APIGroups", rule.apiGroups);
  add("Resources", rule.resources);
  add("NonResourceURLs", rule.nonResourceURLs);
  add("ResourceNames", rule.resourceNames);
  add("Verbs", rule.verbs);
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + "}";
}

std::string escalationError(const UserInfo& user, const std::vector<PolicyRule>& ownerRules,
                            const std::vector<PolicyRule>& rules) {
  const auto missing = uncoveredRules(ownerRules, rules);
  if (missing.empty()) return "";
  std::set<std::string> descriptions;  // sorted and unique, as Kubernetes lists them
  for (const auto& rule : compactRules(missing)) descriptions.insert(compactString(rule));
  std::string out = "user " + goQuote(user.name) + " (groups=" + goQuote(user.groups) +
                    ") is attempting to grant RBAC permissions not currently held:";
  for (const auto& d : descriptions) out += "\n" + d;
  return out;
}

RbacEscalationCheck::RbacEscalationCheck(std::shared_ptr<const Authorizer> authorizer,
                                         RbacAuthorizer::PolicySource policy)
    : authorizer_(std::move(authorizer)), policy_(std::move(policy)) {}

std::shared_ptr<RbacEscalationCheck> RbacEscalationCheck::fromRegistry(
    Registry& registry, std::shared_ptr<const Authorizer> authorizer) {
  Registry* reg = &registry;
  return std::make_shared<RbacEscalationCheck>(std::move(authorizer),
                                               [reg]() { return loadRbacPolicy(*reg); });
}

Status RbacEscalationCheck::admit(AdmissionRequest& request) {
  const RequestInfo& ri = request.request;
  if (ri.group != kRbacGroup || !ri.subresource.empty() || request.newObject == nullptr) {
    return Status::Ok();
  }
  if (request.operation != "CREATE" && request.operation != "UPDATE") return Status::Ok();
  const bool role = ri.resource == "roles" || ri.resource == "clusterroles";
  const bool binding = ri.resource == "rolebindings" || ri.resource == "clusterrolebindings";
  if (!role && !binding) return Status::Ok();
  // Kubernetes' EscalationAllowed: system:masters may do anything.
  if (request.user.inGroup(kSystemMasters)) return Status::Ok();
  return role ? admitRole(request, ri.resource == "clusterroles") : admitBinding(request);
}

Status RbacEscalationCheck::admitRole(const AdmissionRequest& request, bool clusterRole) const {
  const RequestInfo& ri = request.request;
  const UserInfo& user = request.user;
  if (allowed(user, "escalate", ri.group, ri.resource, ri.namespaceName, ri.name)) {
    return Status::Ok();
  }
  const json& next = *request.newObject;
  const json* current = request.operation == "UPDATE" ? request.oldObject : nullptr;
  if (current && onlyGcFieldsChange(next, *current)) return Status::Ok();
  auto policy = policy_();
  if (!policy.ok()) return policy.status();
  const auto owned = policy->rulesFor(user, ri.namespaceName);
  const std::string name = api::stringAt(next, "/metadata/name");
  if (std::string why = escalationError(user, owned, policyRules(next)); !why.empty()) {
    return forbiddenGrant(ri.resource, name, why);
  }
  // An aggregationRule can gather any rule (and keep a role from being tightened).
  if (clusterRole && (hasAggregationRule(&next) || hasAggregationRule(current)) &&
      !uncoveredRules(owned, fullAuthority()).empty()) {
    return forbiddenGrant(ri.resource, name,
                          "must have cluster-admin privileges to use the aggregationRule");
  }
  return Status::Ok();
}

Status RbacEscalationCheck::admitBinding(const AdmissionRequest& request) const {
  const RequestInfo& ri = request.request;
  const UserInfo& user = request.user;
  const json& next = *request.newObject;
  if (request.operation == "UPDATE" && request.oldObject &&
      onlyGcFieldsChange(next, *request.oldObject)) {
    return Status::Ok();
  }
  // The binding's namespace ("" for ClusterRoleBindings): where `bind` is asked and where the
  // requester's rules count.
  const std::string& ns = ri.namespaceName;
  const std::string kind = api::stringAt(next, "/roleRef/kind");
  const std::string roleName = api::stringAt(next, "/roleRef/name");
  const std::string roleResource =
      kind == "ClusterRole" ? "clusterroles" : (kind == "Role" ? "roles" : "");
  if (roleResource.empty()) {
    return Status::BadRequest("unsupported role reference kind: " + goQuote(kind));
  }
  if (allowed(user, "bind", api::stringAt(next, "/roleRef/apiGroup"), roleResource, ns, roleName)) {
    return Status::Ok();
  }
  auto policy = policy_();
  if (!policy.ok()) return policy.status();
  const auto* granted = policy->roleReferenceRules(kind, roleName, ns);
  if (!granted) {
    Status s = Status::NotFound(roleResource + "." + kRbacGroup, roleName);
    s.withDetails(roleName, kRbacGroup, roleResource);
    return s;
  }
  if (std::string why = escalationError(user, policy->rulesFor(user, ns), *granted); !why.empty()) {
    return forbiddenGrant(ri.resource, api::stringAt(next, "/metadata/name"), why);
  }
  return Status::Ok();
}

bool RbacEscalationCheck::allowed(const UserInfo& user, const std::string& verb,
                                  const std::string& apiGroup, const std::string& resource,
                                  const std::string& namespaceName, const std::string& name) const {
  if (!authorizer_) return false;
  Attributes a;
  a.user = user;
  a.verb = verb;
  a.resourceRequest = true;
  a.apiGroup = apiGroup;
  a.apiVersion = "*";
  a.resource = resource;
  a.namespaceName = namespaceName;
  a.name = name;
  return authorizer_->authorize(a).allowed();
}

}  // namespace minik8s::apiserver::auth
