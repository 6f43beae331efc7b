// Authorization helpers shared by the API server and the authorizers: the Attributes of an HTTP
// request, the 403 Status worded as Kubernetes words it, and the union of several authorizers
// (the first Allow or Deny wins, as kube-apiserver's --authorization-mode=Node,RBAC).
// Stateless functions; UnionAuthorizer is immutable and thread-safe when its members are.
#pragma once

#include <memory>
#include <vector>

#include "apiserver/auth/auth.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "common/http.h"

namespace minik8s::apiserver::auth {

// What `req` asks, as authorizers see it. For resource requests the verb is the RequestInfo's;
// otherwise the lower-case HTTP method ("get", "post", ...) on the path.
Attributes requestAttributes(const UserInfo& user, const http::Request& req,
                             const RequestInfo& info);

// 403 Forbidden, e.g. `pods "web" is forbidden: User "alice" cannot get resource "pods" in API
// group "" in the namespace "default"` (": <reason>" appended when the reason is not empty),
// `forbidden: User "alice" cannot get path "/metrics"` for non-resource requests.
Status forbidden(const Attributes& attributes, const std::string& reason = "");

class UnionAuthorizer : public Authorizer, public RuleLister {
 public:
  explicit UnionAuthorizer(std::vector<std::shared_ptr<Authorizer>> authorizers)
      : authorizers_(std::move(authorizers)) {}
  // Asks each in order; the first Allow or Deny decides. Otherwise NoOpinion with the reasons
  // of those that gave one, joined by ", ".
  Decision authorize(const Attributes& attributes) const override;
  // The rules of the members that list theirs; incomplete when one cannot.
  UserRules rulesFor(const UserInfo& user, const std::string& namespaceName) const override;

 private:
  std::vector<std::shared_ptr<Authorizer>> authorizers_;
};

}  // namespace minik8s::apiserver::auth
