#include "common/json_pointer.h"

#include <charconv>

namespace minik8s {

namespace {

// One reference token, unescaped (~1 is '/', ~0 is '~'); false when an escape is malformed.
bool unescape(std::string_view token, std::string& out) {
  out.clear();
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '~') {
      out += token[i];
      continue;
    }
    if (i + 1 == token.size() || (token[i + 1] != '0' && token[i + 1] != '1')) return false;
    out += token[i + 1] == '0' ? '~' : '/';
    ++i;
  }
  return true;
}

const json* step(const json& node, std::string_view token) {
  if (node.is_object()) {
    auto it = node.find(token);
    return it == node.end() ? nullptr : &*it;
  }
  if (node.is_array()) {
    // An index: digits without a leading zero ("-", past the end, is absent here).
    if (token.empty() || (token.size() > 1 && token[0] == '0')) return nullptr;
    size_t index = 0;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
    if (ec != std::errc() || end != token.data() + token.size() || index >= node.size()) {
      return nullptr;
    }
    return &node[index];
  }
  return nullptr;
}

}  // namespace

const json* findPointer(const json& obj, std::string_view pointer) {
  if (pointer.empty()) return &obj;
  if (pointer[0] != '/') return nullptr;
  const json* node = &obj;
  std::string unescaped;
  size_t start = 1;
  while (node) {
    const size_t slash = pointer.find('/', start);
    std::string_view token = pointer.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (token.find('~') != std::string_view::npos) {
      if (!unescape(token, unescaped)) return nullptr;
      token = unescaped;
    }
    node = step(*node, token);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return node;
}

}  // namespace minik8s
