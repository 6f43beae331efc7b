// Impersonation (`kubectl --as USER [--as-group G]`): the Impersonate-User and Impersonate-Group
// headers make a request act as another user when the caller may "impersonate" that user
// (resource users, or serviceaccounts for system:serviceaccount:<ns>:<name>) and each group
// (resource groups), as Kubernetes checks it. Stateless; thread-safe when the authorizer is.
#pragma once

#include "apiserver/auth/auth.h"
#include "common/http.h"

namespace minik8s::apiserver::auth {

// The caller itself when the request impersonates no one; the impersonated user (with
// system:authenticated, and the service-account groups for a service account); BadRequest for
// Impersonate-Group without Impersonate-User; Forbidden when the caller may not impersonate.
// Without an authorizer every impersonation is allowed.
Result<UserInfo> impersonate(const http::Request& req, const UserInfo& caller,
                             const Authorizer* authorizer);

}  // namespace minik8s::apiserver::auth
