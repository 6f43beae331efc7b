#include "apiserver/auth/impersonation.h"

#include <algorithm>

#include "apiserver/auth/authorization.h"

namespace minik8s::apiserver::auth {

namespace {

Status mayImpersonate(const UserInfo& caller, const Authorizer* authorizer,
                      const std::string& resource, const std::string& ns, const std::string& name) {
  if (!authorizer) return Status::Ok();
  Attributes a;
  a.user = caller;
  a.verb = "impersonate";
  a.resourceRequest = true;
  a.apiVersion = "v1";
  a.resource = resource;
  a.namespaceName = ns;
  a.name = name;
  Decision d = authorizer->authorize(a);
  return d.allowed() ? Status::Ok() : forbidden(a, d.reason);
}

void addGroup(UserInfo& u, const std::string& g) {
  if (!g.empty() && !u.inGroup(g)) u.groups.push_back(g);
}

}  // namespace

Result<UserInfo> impersonate(const http::Request& req, const UserInfo& caller,
                             const Authorizer* authorizer) {
  const std::string user = req.header("Impersonate-User");
  const std::string group = req.header("Impersonate-Group");
  if (user.empty()) {
    if (!group.empty()) return Status::BadRequest("Impersonate-Group requires Impersonate-User");
    return caller;
  }
  UserInfo out;
  out.name = user;
  const std::string saPrefix = kServiceAccountUserPrefix;
  if (user.starts_with(saPrefix)) {
    const std::string rest = user.substr(saPrefix.size());
    const size_t colon = rest.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
      return Status::BadRequest("Impersonate-User " + user +
                                " is not system:serviceaccount:<namespace>:<name>");
    const std::string ns = rest.substr(0, colon), name = rest.substr(colon + 1);
    if (Status s = mayImpersonate(caller, authorizer, "serviceaccounts", ns, name); !s.ok())
      return s;
    addGroup(out, kServiceAccountsGroup);
    addGroup(out, std::string(kServiceAccountsGroup) + ":" + ns);
  } else if (Status s = mayImpersonate(caller, authorizer, "users", "", user); !s.ok()) {
    return s;
  }
  if (!group.empty()) {
    if (Status s = mayImpersonate(caller, authorizer, "groups", "", group); !s.ok()) return s;
    addGroup(out, group);
  }
  if (user != kAnonymousUser) addGroup(out, kAuthenticated);
  return out;
}

}  // namespace minik8s::apiserver::auth
