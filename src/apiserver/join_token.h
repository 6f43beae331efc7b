// JoinTokenAuthenticator: bearer tokens checked against the cluster's join token
// (common/join_token.h). The token, whole or as "<id>.<secret>", authenticates as user
// "system:bootstrap:<id>" in group "system:bootstrappers"; tokens that look like join tokens
// but do not match get Unauthorized; anything else is left to the next authenticator.
// Thread-safe (immutable).
#pragma once

#include <optional>
#include <string>

#include "apiserver/auth/auth.h"
#include "common/join_token.h"

namespace minik8s::apiserver {

class JoinTokenAuthenticator : public auth::TokenAuthenticator {
 public:
  explicit JoinTokenAuthenticator(JoinToken token) : token_(std::move(token)) {}
  std::optional<Result<auth::UserInfo>> authenticate(const std::string& token) override;

 private:
  JoinToken token_;
};

}  // namespace minik8s::apiserver
