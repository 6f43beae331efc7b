#include "api/validation/field_errors.h"

#include <algorithm>
#include <cstdio>

namespace minik8s::api::validation {

std::string child(const std::string& path, std::string_view name) {
  if (path.empty()) return std::string(name);
  return path + "." + std::string(name);
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string key(const std::string& path, std::string_view k) {
  return path + "[" + std::string(k) + "]";
}

std::string goQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string goValue(const json& value) {
  if (value.is_string()) return goQuote(value.get_ref<const std::string&>());
  std::string out = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (value.is_structured()) {
    // Go's json.Marshal escapes these for HTML safety; they only occur inside strings.
    std::string escaped;
    for (char c : out) {
      if (c == '<')
        escaped += "\\u003c";
      else if (c == '>')
        escaped += "\\u003e";
      else if (c == '&')
        escaped += "\\u0026";
      else
        escaped += c;
    }
    return escaped;
  }
  return out;
}

void FieldErrors::add(const char* reason, const std::string& path, std::string message) {
  causes_.push_back(Cause{reason, path, std::move(message)});
}

void FieldErrors::required(const std::string& path, const std::string& detail) {
  add("FieldValueRequired", path, detail.empty() ? "Required value" : "Required value: " + detail);
}

void FieldErrors::invalidShown(const std::string& path, const std::string& shownValue,
                               const std::string& detail) {
  std::string msg = "Invalid value: " + shownValue;
  if (!detail.empty()) msg += ": " + detail;
  add("FieldValueInvalid", path, std::move(msg));
}

void FieldErrors::duplicate(const std::string& path, const json& value) {
  add("FieldValueDuplicate", path, "Duplicate value: " + goValue(value));
}

void FieldErrors::duplicateShown(const std::string& path, const std::string& shownValue) {
  add("FieldValueDuplicate", path, "Duplicate value: " + shownValue);
}

void FieldErrors::notSupported(const std::string& path, const json& value,
                               const std::vector<std::string>& supported) {
  std::string msg = "Unsupported value: " + goValue(value);
  if (!supported.empty()) {
    msg += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i) msg += ", ";
      msg += goQuote(supported[i]);
    }
  }
  add("FieldValueNotSupported", path, std::move(msg));
}

void FieldErrors::forbidden(const std::string& path, const std::string& detail) {
  add("FieldValueForbidden", path, detail.empty() ? "Forbidden" : "Forbidden: " + detail);
}

void FieldErrors::notFound(const std::string& path, const json& value) {
  add("FieldValueNotFound", path, "Not found: " + goValue(value));
}

void FieldErrors::tooLong(const std::string& path, int64_t maxBytes) {
  add("FieldValueTooLong", path,
      "Too long: may not be more than " + std::to_string(maxBytes) +
          (maxBytes == 1 ? " byte" : " bytes"));
}

void FieldErrors::tooMany(const std::string& path, int64_t actual, int64_t max) {
  add("FieldValueTooMany", path,
      "Too many: " + std::to_string(actual) + ": must have at most " + std::to_string(max) +
          (max == 1 ? " item" : " items"));
}

void FieldErrors::typeInvalid(const std::string& path, const json& value, const std::string& type) {
  add("FieldValueTypeInvalid", path,
      "Invalid value: " + goValue(value) + ": must be of type " + type);
}

void FieldErrors::invalidEach(const std::string& path, const json& value,
                              const std::vector<std::string>& messages) {
  for (const auto& m : messages) invalid(path, value, m);
}

const json* FieldErrors::lookup(const json& obj, std::string_view name) const {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const json* FieldErrors::object(const json& obj, std::string_view name, const std::string& path) {
  const json* v = lookup(obj, name);
  if (v && !v->is_object()) {
    typeInvalid(path, *v, "object");
    return nullptr;
  }
  return v;
}

const json* FieldErrors::array(const json& obj, std::string_view name, const std::string& path) {
  const json* v = lookup(obj, name);
  if (v && !v->is_array()) {
    typeInvalid(path, *v, "array");
    return nullptr;
  }
  return v;
}

std::optional<std::string> FieldErrors::string(const json& obj, std::string_view name,
                                               const std::string& path) {
  const json* v = lookup(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    typeInvalid(path, *v, "string");
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<int64_t> FieldErrors::integer(const json& obj, std::string_view name,
                                            const std::string& path) {
  const json* v = lookup(obj, name);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    // Values above int64 cannot be any valid Kubernetes integer field.
    if (v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      typeInvalid(path, *v, "integer");
      return std::nullopt;
    }
    return static_cast<int64_t>(v->get<uint64_t>());
  }
  if (!v->is_number_integer()) {
    typeInvalid(path, *v, "integer");
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<bool> FieldErrors::boolean(const json& obj, std::string_view name,
                                         const std::string& path) {
  const json* v = lookup(obj, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    typeInvalid(path, *v, "boolean");
    return std::nullopt;
  }
  return v->get<bool>();
}

const json* FieldErrors::intOrString(const json& obj, std::string_view name,
                                     const std::string& path) {
  const json* v = lookup(obj, name);
  if (v && !v->is_string() && !v->is_number_integer()) {
    typeInvalid(path, *v, "integer or string");
    return nullptr;
  }
  return v;
}

const json* FieldErrors::stringMap(const json& obj, std::string_view name,
                                   const std::string& path) {
  const json* v = object(obj, name, path);
  if (!v) return nullptr;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) {
      typeInvalid(key(path, it.key()), *it, "string");
      return nullptr;
    }
  }
  return v;
}

}  // namespace minik8s::api::validation
