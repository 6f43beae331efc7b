#include "apiserver/join_token.h"

namespace minik8s::apiserver {

std::optional<Result<auth::UserInfo>> JoinTokenAuthenticator::authenticate(
    const std::string& presented) {
  if (joinTokenMatches(token_, presented)) {
    auth::UserInfo user;
    user.name = "system:bootstrap:" + token_.id;
    user.groups = {auth::kBootstrappersGroup};
    return Result<auth::UserInfo>(std::move(user));
  }
  if (looksLikeJoinToken(presented)) {
    return Result<auth::UserInfo>(Status::Unauthorized("Unauthorized"));
  }
  return std::nullopt;
}

}  // namespace minik8s::apiserver
