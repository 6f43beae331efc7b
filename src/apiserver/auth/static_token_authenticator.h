// StaticTokenAuthenticator: bearer tokens known in advance, each mapped to a user, like
// kube-apiserver's --token-auth-file. Lines of the file are CSV:
//   token,user,uid,"group1,group2"
// (uid and groups optional; blank lines and lines starting with '#' are skipped). Also turns
// the server's legacy list of bearer tokens (the node join token) into bootstrap users:
// "system:bootstrap:<first 6 characters>" in group system:bootstrappers.
// Immutable after construction; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"

namespace minik8s::apiserver::auth {

class StaticTokenAuthenticator : public TokenAuthenticator {
 public:
  explicit StaticTokenAuthenticator(std::map<std::string, UserInfo> users)
      : users_(std::move(users)) {}

  // Parses the CSV text of a token file; BadRequest names the bad line.
  static Result<std::map<std::string, UserInfo>> parseTokenFile(const std::string& text);
  // Each token as a bootstrap user (see above).
  static std::map<std::string, UserInfo> bootstrapUsers(const std::vector<std::string>& tokens);

  // A known token -> its user; anything else -> nullopt (the next authenticator decides).
  std::optional<Result<UserInfo>> authenticate(const std::string& token) override;

 private:
  std::map<std::string, UserInfo> users_;
};

}  // namespace minik8s::apiserver::auth
