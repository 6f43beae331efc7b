#include "common/json_compact.h"

namespace minik8s {

void shrinkToFit(json& value) {
  if (value.is_object()) {
    auto& members = value.get_ref<json::object_t&>();
    members.shrink_to_fit();
    for (auto& [key, member] : members) shrinkToFit(member);
  } else if (value.is_array()) {
    auto& items = value.get_ref<json::array_t&>();
    items.shrink_to_fit();
    for (auto& item : items) shrinkToFit(item);
  }
}

}  // namespace minik8s
