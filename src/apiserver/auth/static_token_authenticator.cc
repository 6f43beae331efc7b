#include "apiserver/auth/static_token_authenticator.h"

#include <sstream>

namespace minik8s::apiserver::auth {

namespace {

// One CSV line: comma-separated, fields may be double-quoted ("" inside quotes is a quote).
std::vector<std::string> splitCsv(const std::string& line, bool& ok) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  ok = true;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back().push_back(c);
    }
  }
  if (quoted) ok = false;
  return fields;
}

}  // namespace

Result<std::map<std::string, UserInfo>> StaticTokenAuthenticator::parseTokenFile(
    const std::string& text) {
  std::map<std::string, UserInfo> users;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    bool ok = true;
    auto fields = splitCsv(line, ok);
    if (!ok || fields.size() < 2 || fields[0].empty() || fields[1].empty()) {
      return Status::BadRequest("token file line " + std::to_string(number) +
                                ": expected token,user[,uid[,\"group1,group2\"]]");
    }
    UserInfo user;
    user.name = fields[1];
    if (fields.size() > 2) user.uid = fields[2];
    // Groups: the rest of the line, each field possibly a comma-separated quoted list.
    for (size_t i = 3; i < fields.size(); ++i) {
      std::istringstream groups(fields[i]);
      std::string g;
      while (std::getline(groups, g, ',')) {
        if (!g.empty()) user.groups.push_back(g);
      }
    }
    if (!users.emplace(fields[0], std::move(user)).second) {
      return Status::BadRequest("token file line " + std::to_string(number) + ": duplicate token");
    }
  }
  return users;
}

std::map<std::string, UserInfo> StaticTokenAuthenticator::bootstrapUsers(
    const std::vector<std::string>& tokens) {
  std::map<std::string, UserInfo> users;
  for (const auto& token : tokens) {
    if (token.empty()) continue;
    UserInfo user;
    user.name = "system:bootstrap:" + token.substr(0, 6);
    user.groups = {kBootstrappersGroup};
    users.emplace(token, std::move(user));
  }
  return users;
}

std::optional<Result<UserInfo>> StaticTokenAuthenticator::authenticate(const std::string& token) {
  auto it = users_.find(token);
  if (it == users_.end()) return std::nullopt;
  return Result<UserInfo>(it->second);
}

}  // namespace minik8s::apiserver::auth
