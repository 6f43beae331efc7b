#include "apiserver/auth/authorization.h"

#include <algorithm>

#include "common/strings.h"

namespace minik8s::apiserver::auth {

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

Attributes requestAttributes(const UserInfo& user, const http::Request& req,
                             const RequestInfo& info) {
  Attributes a;
  a.user = user;
  a.path = req.path;
  if (info.isResourceRequest) {
    a.resourceRequest = true;
    a.verb = info.verb;
    a.apiGroup = info.group;
    a.apiVersion = info.version;
    a.resource = info.resource;
    a.subresource = info.subresource;
    a.namespaceName = info.namespaceName;
    a.name = info.name;
    // The namespace object itself: Kubernetes authorizes /api/v1/namespaces/foo in namespace foo.
    if (info.resource == "namespaces" && !info.name.empty()) a.namespaceName = info.name;
    return a;
  }
  a.verb = asciiLower(req.method);
  return a;
}

Status forbidden(const Attributes& a, const std::string& reason) {
  std::string why = "User " + quote(a.user.name) + " cannot " + a.verb;
  if (!a.resourceRequest) {
    why += " path " + quote(a.path);
  } else {
    std::string resource = a.resource;
    if (!a.subresource.empty()) resource += "/" + a.subresource;
    why += " resource " + quote(resource) + " in API group " + quote(a.apiGroup);
    why += a.namespaceName.empty() ? " at the cluster scope"
                                   : " in the namespace " + quote(a.namespaceName);
  }
  if (!reason.empty()) why += ": " + reason;
  if (!a.resourceRequest || a.resource.empty()) return Status::Forbidden("forbidden: " + why);
  const std::string qualified = a.apiGroup.empty() ? a.resource : a.resource + "." + a.apiGroup;
  std::string message = qualified;
  if (!a.name.empty()) message += " " + quote(a.name);
  Status s = Status::Forbidden(message + " is forbidden: " + why);
  s.withDetails(a.name, a.apiGroup, a.resource);
  return s;
}

Decision UnionAuthorizer::authorize(const Attributes& attributes) const {
  std::string reasons;
  for (const auto& a : authorizers_) {
    if (!a) continue;
    Decision d = a->authorize(attributes);
    if (d.kind != Decision::Kind::kNoOpinion) return d;
    if (!d.reason.empty()) reasons += (reasons.empty() ? "" : ", ") + d.reason;
  }
  return Decision::noOpinion(reasons);
}

UserRules UnionAuthorizer::rulesFor(const UserInfo& user, const std::string& namespaceName) const {
  UserRules out;
  for (const auto& a : authorizers_) {
    if (!a) continue;
    const auto* lister = dynamic_cast<const RuleLister*>(a.get());
    if (!lister) {
      out.incomplete = true;
      continue;
    }
    UserRules part = lister->rulesFor(user, namespaceName);
    out.rules.insert(out.rules.end(), part.rules.begin(), part.rules.end());
    out.incomplete = out.incomplete || part.incomplete;
  }
  return out;
}

}  // namespace minik8s::apiserver::auth
