#include "api/object_meta.h"

#include "common/json_pointer.h"

namespace minik8s::api {

std::string stringAt(const json& obj, const json::json_pointer& ptr) {
  try {
    if (!obj.contains(ptr)) return "";
    const json& v = obj.at(ptr);
    return v.is_string() ? v.get<std::string>() : "";
  } catch (const json::exception&) {
    return "";
  }
}

std::string stringAt(const json& obj, const char* pointer) {
  const json* v = findPointer(obj, pointer);
  return v && v->is_string() ? v->get<std::string>() : "";
}

const json& member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string stringMember(const json& obj, const char* key) {
  const json& v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

}  // namespace minik8s::api
