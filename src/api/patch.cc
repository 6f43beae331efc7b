// JSON merge patch (RFC 7386) and JSON patch (RFC 6902). Strategic merge patch lives in
// strategic_merge_patch.cc.
#include "api/patch.h"

#include <optional>
#include <vector>

namespace minik8s::api {
namespace {

json mergePatchValue(const json& target, const json& patch) {
  if (!patch.is_object()) return patch;
  json result = target.is_object() ? target : json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      result.erase(key);
    } else {
      auto it = result.find(key);
      result[key] = mergePatchValue(it == result.end() ? json() : *it, value);
    }
  }
  return result;
}

Status unprocessable(std::string message) {
  Status s(422, "Invalid", message);
  s.withCauses({Cause{"UnexpectedServerResponse", "", std::move(message)}});
  return s;
}

// A parsed JSON pointer: its reference tokens, unescaped.
Result<std::vector<std::string>> parsePointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return unprocessable("invalid JSON pointer " + json(pointer).dump() + ": must start with '/'");
  }
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(current));
      current.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        current += pointer[++i] == '0' ? '~' : '/';
      } else {
        return unprocessable("invalid JSON pointer " + json(pointer).dump() +
                             ": '~' must be followed by 0 or 1");
      }
    } else {
      current += pointer[i];
    }
  }
  return tokens;
}

// An array index token: digits without leading zeros.
std::optional<size_t> arrayIndex(const std::string& token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  size_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  return v;
}

// Resolves all but the last token: the container the operation acts on, or nullptr.
json* resolveParent(json& doc, const std::vector<std::string>& tokens) {
  json* cur = &doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (cur->is_object()) {
      auto it = cur->find(tokens[i]);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      auto idx = arrayIndex(tokens[i]);
      if (!idx || *idx >= cur->size()) return nullptr;
      cur = &(*cur)[*idx];
    } else {
      return nullptr;
    }
  }
  return cur;
}

// The value at a pointer, or nullptr.
json* resolve(json& doc, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return &doc;
  json* parent = resolveParent(doc, tokens);
  if (parent == nullptr) return nullptr;
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    auto it = parent->find(last);
    return it == parent->end() ? nullptr : &*it;
  }
  if (parent->is_array()) {
    auto idx = arrayIndex(last);
    return idx && *idx < parent->size() ? &(*parent)[*idx] : nullptr;
  }
  return nullptr;
}

Status addValue(json& doc, const std::vector<std::string>& tokens, json value,
                const std::string& op, const std::string& path) {
  if (tokens.empty()) {
    doc = std::move(value);
    return Status::Ok();
  }
  json* parent = resolveParent(doc, tokens);
  if (parent == nullptr) {
    return unprocessable(op + " operation does not apply: doc is missing path: " + path);
  }
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    (*parent)[last] = std::move(value);
    return Status::Ok();
  }
  if (parent->is_array()) {
    if (last == "-") {
      parent->push_back(std::move(value));
      return Status::Ok();
    }
    auto idx = arrayIndex(last);
    if (!idx || *idx > parent->size()) {
      return unprocessable(op + " operation does not apply: index out of range in " + path);
    }
    parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*idx), std::move(value));
    return Status::Ok();
  }
  return unprocessable(op + " operation does not apply: " + path +
                       " is inside a value that is neither an object nor an array");
}

Status removeValue(json& doc, const std::vector<std::string>& tokens, const std::string& op,
                   const std::string& path) {
  if (tokens.empty()) return unprocessable(op + " operation cannot remove the whole document");
  json* parent = resolveParent(doc, tokens);
  const std::string& last = tokens.back();
  if (parent != nullptr && parent->is_object() && parent->contains(last)) {
    parent->erase(last);
    return Status::Ok();
  }
  if (parent != nullptr && parent->is_array()) {
    auto idx = arrayIndex(last);
    if (idx && *idx < parent->size()) {
      parent->erase(*idx);
      return Status::Ok();
    }
  }
  return unprocessable(op + " operation does not apply: doc is missing path: " + path);
}

Result<std::string> stringMember(const json& operation, const char* name, size_t index) {
  auto it = operation.find(name);
  if (it == operation.end() || !it->is_string()) {
    return unprocessable("operation " + std::to_string(index) + " has no string \"" + name +
                         "\" field");
  }
  return it->get<std::string>();
}

Status applyOperation(json& doc, const json& operation, size_t index) {
  auto op = stringMember(operation, "op", index);
  if (!op.ok()) return op.status();
  auto path = stringMember(operation, "path", index);
  if (!path.ok()) return path.status();
  auto tokens = parsePointer(*path);
  if (!tokens.ok()) return tokens.status();
  auto valueIt = operation.find("value");
  auto needValue = [&]() -> Status {
    if (valueIt == operation.end()) {
      return unprocessable(*op + " operation " + std::to_string(index) + " has no \"value\"");
    }
    return Status::Ok();
  };

  if (*op == "add") {
    if (Status s = needValue(); !s.ok()) return s;
    return addValue(doc, *tokens, *valueIt, *op, *path);
  }
  if (*op == "remove") return removeValue(doc, *tokens, *op, *path);
  if (*op == "replace") {
    if (Status s = needValue(); !s.ok()) return s;
    json* target = resolve(doc, *tokens);
    if (target == nullptr) {
      return unprocessable("replace operation does not apply: doc is missing key: " + *path);
    }
    *target = *valueIt;
    return Status::Ok();
  }
  if (*op == "test") {
    if (Status s = needValue(); !s.ok()) return s;
    json* target = resolve(doc, *tokens);
    if (target == nullptr) {
      if (valueIt->is_null()) return Status::Ok();  // absent tests equal to null, as Kubernetes
      return unprocessable("testing value " + *path + " failed: the path does not exist");
    }
    if (*target != *valueIt) {
      return unprocessable("testing value " + *path + " failed: it is " + target->dump() +
                           ", not " + valueIt->dump());
    }
    return Status::Ok();
  }
  if (*op == "move" || *op == "copy") {
    auto from = stringMember(operation, "from", index);
    if (!from.ok()) return from.status();
    auto fromTokens = parsePointer(*from);
    if (!fromTokens.ok()) return fromTokens.status();
    json* source = resolve(doc, *fromTokens);
    if (source == nullptr) {
      return unprocessable(*op + " operation does not apply: doc is missing from path: " + *from);
    }
    json value = *source;
    if (*op == "move") {
      if (*from == *path) return Status::Ok();
      if (path->size() > from->size() && path->starts_with(*from) && (*path)[from->size()] == '/') {
        return unprocessable("move operation cannot move " + *from + " into its own child " +
                             *path);
      }
      if (Status s = removeValue(doc, *fromTokens, *op, *from); !s.ok()) return s;
    }
    return addValue(doc, *tokens, std::move(value), *op, *path);
  }
  return unprocessable("unexpected kind of operation: " + json(*op).dump() +
                       " (want add, remove, replace, move, copy or test)");
}

}  // namespace

Result<json> applyMergePatch(const json& target, const json& patch) {
  return mergePatchValue(target, patch);
}

Result<json> applyJsonPatch(const json& target, const json& patch) {
  if (!patch.is_array()) {
    return Status::BadRequest("a JSON patch must be a list of operations, got " +
                              std::string(patch.type_name()));
  }
  for (const auto& operation : patch) {
    if (!operation.is_object()) {
      return Status::BadRequest("every JSON patch operation must be an object");
    }
  }
  json doc = target;
  for (size_t i = 0; i < patch.size(); ++i) {
    if (Status s = applyOperation(doc, patch[i], i); !s.ok()) return s;
  }
  return doc;
}

}  // namespace minik8s::api
