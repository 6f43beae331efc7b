// The create-only review APIs, as ApiServerOptions.createOnlyHandlers entries:
//   selfsubjectaccessreviews.authorization.k8s.io   kubectl auth can-i VERB RESOURCE
//   selfsubjectrulesreviews.authorization.k8s.io    kubectl auth can-i --list
//   subjectaccessreviews.authorization.k8s.io       "may this user/group ...?" (spec.user/groups)
//   localsubjectaccessreviews.authorization.k8s.io  the same, limited to the URL's namespace
//   selfsubjectreviews.authentication.k8s.io        kubectl auth whoami
//   tokenreviews.authentication.k8s.io              "whose token is this?"
// Access reviews ask `authorizer` (null: everything is allowed, as a server without an
// authorizer serves every request); rules reviews list the rules of authorizers implementing
// RuleLister; token reviews ask `authenticators`. The handlers keep shared ownership of both and
// are thread-safe when they are.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "apiserver/auth/auth.h"
#include "apiserver/auth/authentication.h"

namespace minik8s::apiserver::auth {

std::map<std::string, CreateOnlyHandler> reviewHandlers(std::shared_ptr<Authorizer> authorizer,
                                                        TokenAuthenticators authenticators);

}  // namespace minik8s::apiserver::auth
