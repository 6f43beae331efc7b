#include "apiserver/auth/auth.h"

#include <algorithm>

namespace minik8s::apiserver::auth {

bool UserInfo::inGroup(const std::string& group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

json UserInfo::toJson() const {
  json out = {{"username", name}, {"groups", groups}};
  if (!uid.empty()) out["uid"] = uid;
  if (!extra.empty()) out["extra"] = extra;
  return out;
}

}  // namespace minik8s::apiserver::auth
