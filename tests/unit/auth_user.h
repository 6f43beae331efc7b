// The authenticated user a request of a test comes from: a name and its groups.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "apiserver/auth/auth.h"

namespace minik8s::testing {

inline apiserver::auth::UserInfo user(std::string name, std::vector<std::string> groups = {}) {
  apiserver::auth::UserInfo u;
  u.name = std::move(name);
  u.groups = std::move(groups);
  return u;
}

}  // namespace minik8s::testing
