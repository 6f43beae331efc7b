#include "api/object_meta.h"

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

}  // namespace minik8s::api
