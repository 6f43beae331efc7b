#include "apiserver/auth/review_handlers.h"

#include "apiserver/auth/rbac_authorizer.h"

namespace minik8s::apiserver::auth {

namespace {

std::string field(const json& obj, const char* name) {
  if (!obj.is_object()) return "";
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

Status invalid(const std::string& kind, const std::string& path, const std::string& value,
               const std::string& detail) {
  return Status::Invalid(
      kind, "", {{"FieldValueInvalid", path, "Invalid value: \"" + value + "\": " + detail}});
}

// Attributes of spec.resourceAttributes or spec.nonResourceAttributes (exactly one).
Result<Attributes> specAttributes(const std::string& kind, const json& spec, UserInfo user) {
  const json resource = spec.is_object() ? spec.value("resourceAttributes", json()) : json();
  const json nonResource = spec.is_object() ? spec.value("nonResourceAttributes", json()) : json();
  const bool hasResource = resource.is_object();
  const bool hasNonResource = nonResource.is_object();
  if (hasResource == hasNonResource) {
    return invalid(kind, "spec.resourceAttributes", hasResource ? "{...}" : "null",
                   "exactly one of nonResourceAttributes or resourceAttributes must be specified");
  }
  Attributes a;
  a.user = std::move(user);
  if (hasResource) {
    a.resourceRequest = true;
    a.verb = field(resource, "verb");
    a.apiGroup = field(resource, "group");
    a.apiVersion = field(resource, "version");
    a.resource = field(resource, "resource");
    a.subresource = field(resource, "subresource");
    a.namespaceName = field(resource, "namespace");
    a.name = field(resource, "name");
  } else {
    a.verb = field(nonResource, "verb");
    a.path = field(nonResource, "path");
  }
  return a;
}

json accessStatus(const Authorizer* authorizer, const Attributes& a) {
  if (!authorizer)
    return {{"allowed", true}, {"reason", "no authorizer: every request is allowed"}};
  Decision d = authorizer->authorize(a);
  json status = {{"allowed", d.allowed()}};
  if (d.kind == Decision::Kind::kDeny) status["denied"] = true;
  if (!d.reason.empty()) status["reason"] = d.reason;
  return status;
}

json answer(json body, json status) {
  if (!body.contains("metadata") || !body["metadata"].is_object()) {
    body["metadata"] = json::object();
  }
  body["metadata"]["creationTimestamp"] = nullptr;
  body["status"] = std::move(status);
  return body;
}

UserInfo specUser(const json& spec) {
  UserInfo user;
  user.name = field(spec, "user");
  user.uid = field(spec, "uid");
  for (const auto& g : spec.value("groups", json::array())) {
    if (g.is_string()) user.groups.push_back(g.get<std::string>());
  }
  const json extra = spec.value("extra", json::object());
  if (extra.is_object()) {
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      if (!it->is_array()) continue;
      for (const auto& v : *it) {
        if (v.is_string()) user.extra[it.key()].push_back(v.get<std::string>());
      }
    }
  }
  return user;
}

json rulesStatus(const Authorizer* authorizer, const UserInfo& user, const std::string& ns) {
  json resourceRules = json::array();
  json nonResourceRules = json::array();
  bool incomplete = false;
  std::vector<PolicyRule> rules;
  if (!authorizer) {
    rules.push_back(PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}});
    rules.push_back(PolicyRule{{"*"}, {}, {}, {}, {"*"}});
  } else if (const auto* lister = dynamic_cast<const RuleLister*>(authorizer)) {
    UserRules found = lister->rulesFor(user, ns);
    rules = std::move(found.rules);
    incomplete = found.incomplete;
  } else {
    incomplete = true;
  }
  for (const auto& r : rules) {
    if (!r.nonResourceURLs.empty()) {
      nonResourceRules.push_back({{"verbs", r.verbs}, {"nonResourceURLs", r.nonResourceURLs}});
      continue;
    }
    json rule = {{"verbs", r.verbs}};
    if (!r.apiGroups.empty()) rule["apiGroups"] = r.apiGroups;
    if (!r.resources.empty()) rule["resources"] = r.resources;
    if (!r.resourceNames.empty()) rule["resourceNames"] = r.resourceNames;
    resourceRules.push_back(std::move(rule));
  }
  return {{"resourceRules", resourceRules},
          {"nonResourceRules", nonResourceRules},
          {"incomplete", incomplete}};
}

}  // namespace

std::map<std::string, CreateOnlyHandler> reviewHandlers(std::shared_ptr<Authorizer> authorizer,
                                                        TokenAuthenticators authenticators) {
  std::map<std::string, CreateOnlyHandler> handlers;
  handlers["selfsubjectaccessreviews.authorization.k8s.io"] =
      [authorizer](const UserInfo& user, const RequestInfo&, json body) -> Result<json> {
    auto a = specAttributes("SelfSubjectAccessReview", body.value("spec", json()), user);
    if (!a.ok()) return a.status();
    return answer(std::move(body), accessStatus(authorizer.get(), *a));
  };
  handlers["subjectaccessreviews.authorization.k8s.io"] =
      [authorizer](const UserInfo&, const RequestInfo&, json body) -> Result<json> {
    const json spec = body.value("spec", json());
    UserInfo subject = specUser(spec);
    if (subject.name.empty() && subject.groups.empty()) {
      return invalid("SubjectAccessReview", "spec.user", "",
                     "at least one of user or group must be specified");
    }
    auto a = specAttributes("SubjectAccessReview", spec, subject);
    if (!a.ok()) return a.status();
    return answer(std::move(body), accessStatus(authorizer.get(), *a));
  };
  handlers["localsubjectaccessreviews.authorization.k8s.io"] =
      [authorizer](const UserInfo&, const RequestInfo& ri, json body) -> Result<json> {
    const json spec = body.value("spec", json());
    UserInfo subject = specUser(spec);
    if (subject.name.empty() && subject.groups.empty()) {
      return invalid("LocalSubjectAccessReview", "spec.user", "",
                     "at least one of user or group must be specified");
    }
    auto a = specAttributes("LocalSubjectAccessReview", spec, subject);
    if (!a.ok()) return a.status();
    if (!a->resourceRequest) {
      return invalid("LocalSubjectAccessReview", "spec.nonResourceAttributes", "{...}",
                     "disallowed on this kind of request");
    }
    if (!a->namespaceName.empty() && a->namespaceName != ri.namespaceName) {
      return invalid("LocalSubjectAccessReview", "spec.resourceAttributes.namespace",
                     a->namespaceName, "must match metadata.namespace");
    }
    a->namespaceName = ri.namespaceName;
    body["metadata"]["namespace"] = ri.namespaceName;
    return answer(std::move(body), accessStatus(authorizer.get(), *a));
  };
  handlers["selfsubjectrulesreviews.authorization.k8s.io"] =
      [authorizer](const UserInfo& user, const RequestInfo&, json body) -> Result<json> {
    const std::string ns = field(body.value("spec", json()), "namespace");
    return answer(std::move(body), rulesStatus(authorizer.get(), user, ns));
  };
  handlers["selfsubjectreviews.authentication.k8s.io"] =
      [](const UserInfo& user, const RequestInfo&, json body) -> Result<json> {
    return answer(std::move(body), {{"userInfo", user.toJson()}});
  };
  handlers["tokenreviews.authentication.k8s.io"] =
      [authenticators](const UserInfo&, const RequestInfo&, json body) -> Result<json> {
    const json spec = body.value("spec", json());
    auto user = authenticateToken(field(spec, "token"), authenticators);
    json status;
    if (user.ok()) {
      status = {{"authenticated", true}, {"user", user->toJson()}};
      const json audiences = spec.value("audiences", json());
      if (audiences.is_array() && !audiences.empty()) status["audiences"] = audiences;
    } else {
      status = {
          {"authenticated", false}, {"user", json::object()}, {"error", user.status().message()}};
    }
    // The token itself is not echoed back.
    if (body.contains("spec") && body["spec"].is_object()) body["spec"].erase("token");
    return answer(std::move(body), std::move(status));
  };
  return handlers;
}

}  // namespace minik8s::apiserver::auth
