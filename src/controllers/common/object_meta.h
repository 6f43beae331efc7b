// Object accessors the workload controllers share on informer items: a string at a JSON
// pointer (empty when absent or not a string), namespace, name, uid and a label value. Pure,
// thread-safe.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::controllers {

inline std::string stringAt(const json& o, const json::json_pointer& p) {
  const json v = o.value(p, json());
  return v.is_string() ? v.get<std::string>() : std::string();
}
inline std::string nsOf(const json& o) { return stringAt(o, "/metadata/namespace"_json_pointer); }
inline std::string nameOf(const json& o) { return stringAt(o, "/metadata/name"_json_pointer); }
inline std::string uidOf(const json& o) { return stringAt(o, "/metadata/uid"_json_pointer); }
inline std::string labelValue(const json& o, const std::string& key) {
  json::json_pointer p("/metadata/labels");
  return stringAt(o, p / key);
}

}  // namespace minik8s::controllers
