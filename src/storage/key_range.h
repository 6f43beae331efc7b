// Key-range helpers shared by the Store backends. Pure functions, thread-safe.
#pragma once

#include <string>

namespace minik8s::storage {

// The smallest key greater than every key starting with `prefix`: the prefix with its last
// byte below 0xff incremented and what follows dropped. "" when there is none (the prefix is
// empty or all 0xff): the range is then unbounded above.
inline std::string prefixEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

}  // namespace minik8s::storage
