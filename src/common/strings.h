// Small string helpers used across rooms. ASCII-only on purpose: Kubernetes names, header
// names, protocols and enum values are ASCII, and the result must not depend on the C locale.
// Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace minik8s {

// "Content-Type" -> "content-type"; bytes outside A-Z are kept as they are.
inline std::string asciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace minik8s
