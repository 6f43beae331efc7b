#include "apiserver/auth/authentication.h"

#include "common/logging.h"

namespace minik8s::apiserver::auth {

namespace {

Status unauthorized() { return Status::Unauthorized("Unauthorized"); }

UserInfo withAuthenticatedGroup(UserInfo user) {
  if (!user.inGroup(kAuthenticated)) user.groups.push_back(kAuthenticated);
  return user;
}

}  // namespace

UserInfo anonymousUser() {
  UserInfo user;
  user.name = kAnonymousUser;
  user.groups = {kUnauthenticated};
  return user;
}

Result<UserInfo> authenticateToken(const std::string& token,
                                   const TokenAuthenticators& authenticators) {
  if (token.empty()) return unauthorized();
  for (const auto& a : authenticators) {
    if (!a) continue;
    auto answer = a->authenticate(token);
    if (!answer) continue;
    if (!answer->ok()) return Status::Unauthorized(answer->status().message());
    return withAuthenticatedGroup(std::move(answer->value()));
  }
  return unauthorized();
}

Result<UserInfo> authenticateRequest(const http::Request& req,
                                     const TokenAuthenticators& authenticators,
                                     bool allowAnonymous) {
  if (req.clientCertificate && !req.clientCertificate->verified) {
    LOG_DEBUG("client certificate of {} not signed by the cluster CA",
              req.clientCertificate->commonName);
    return unauthorized();
  }
  if (req.clientCertificate && !req.clientCertificate->commonName.empty()) {
    UserInfo user;
    user.name = req.clientCertificate->commonName;
    user.groups = req.clientCertificate->organizations;
    return withAuthenticatedGroup(std::move(user));
  }
  const std::string header = req.header("Authorization");
  if (!header.empty()) {
    // "Bearer" is case-insensitive in practice; only bearer tokens are supported.
    if (header.size() > 7 &&
        (header.compare(0, 7, "Bearer ") == 0 || header.compare(0, 7, "bearer ") == 0)) {
      auto user = authenticateToken(header.substr(7), authenticators);
      if (!user.ok()) {
        LOG_DEBUG("bearer token rejected: {}", user.status().message());
        return unauthorized();
      }
      return user;
    }
    // Other schemes (Basic) are not ours to judge: as Kubernetes, treat the request as if it
    // carried no credential.
  }
  if (allowAnonymous) return anonymousUser();
  return unauthorized();
}

}  // namespace minik8s::apiserver::auth
