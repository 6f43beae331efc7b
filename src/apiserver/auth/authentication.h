// Request authentication: who sent a request. In order: a verified TLS client certificate (user =
// CN, groups = O), else an "Authorization: Bearer" token recognised by the first of the token
// authenticators that knows its kind, else anonymous (system:anonymous in
// system:unauthenticated) when allowed. A bearer token nobody recognises is 401 even when
// anonymous requests are allowed, as in Kubernetes. Every authenticated user gets the group
// system:authenticated. Stateless functions; thread-safe when the authenticators are.
#pragma once

#include <memory>
#include <vector>

#include "apiserver/auth/auth.h"
#include "common/http.h"

namespace minik8s::apiserver::auth {

using TokenAuthenticators = std::vector<std::shared_ptr<TokenAuthenticator>>;

// The user of a bearer token; Unauthorized when no authenticator accepts it.
Result<UserInfo> authenticateToken(const std::string& token,
                                   const TokenAuthenticators& authenticators);

// The user of a request, or a 401 Status (reason Unauthorized, message "Unauthorized").
Result<UserInfo> authenticateRequest(const http::Request& req,
                                     const TokenAuthenticators& authenticators,
                                     bool allowAnonymous);

// The anonymous user.
UserInfo anonymousUser();

}  // namespace minik8s::apiserver::auth
