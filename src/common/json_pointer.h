// Reading a value by JSON pointer text without exceptions or allocations.
//
// nlohmann's `obj.value("/a/b"_json_pointer, fallback)` splits the pointer into a vector of
// strings on every call and, when the path is absent (an unset optional field: most of them),
// throws out_of_range and catches it: the controllers' and scheduler's reads of ownerReferences,
// deletionTimestamp, nodeName and the like were ~4% of the server's CPU in exceptions alone under
// the creates benchmark. findPointer walks the text in place; valueAt is value() on top of it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s {

// The value at `pointer` (RFC 6901 text: "/spec/containers/0/name", ~0 and ~1 escapes), or
// nullptr when a member or index is absent, the path crosses a scalar, or the text is malformed.
// "" is the whole document.
const json* findPointer(const json& obj, std::string_view pointer);

// obj.value(pointer, fallback) without the throw: the fallback when absent, else the value as T
// (a value of another type still throws type_error, as value() does).
template <class T>
T valueAt(const json& obj, std::string_view pointer, const T& fallback) {
  const json* v = findPointer(obj, pointer);
  return v ? v->get<T>() : fallback;
}
inline std::string valueAt(const json& obj, std::string_view pointer, const char* fallback) {
  const json* v = findPointer(obj, pointer);
  return v ? v->get<std::string>() : std::string(fallback);
}

}  // namespace minik8s
