// Small string helpers used across rooms. ASCII-only on purpose: Kubernetes names, header
// names, protocols and enum values are ASCII, and the result must not depend on the C locale.
// Pure, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace minik8s {

// "Content-Type" -> "content-type"; bytes outside A-Z are kept as they are.
inline std::string asciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "a,,b" -> {"a", "b"}: the non-empty pieces between separators.
inline std::vector<std::string> splitNonEmpty(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace minik8s
