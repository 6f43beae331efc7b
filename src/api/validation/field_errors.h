// FieldErrors: collects validation Causes worded exactly as Kubernetes' field.Error renders them.
//
// Kubernetes prints a bad value with Go's formatting ("Invalid value: \"Foo\": ...", "-1",
// {"app":"x"}); goValue() reproduces that for JSON values so kubectl shows the same text it
// would show against kube-apiserver. The typed getters read a field of a JSON object
// and report a FieldValueTypeInvalid cause (instead of throwing) when the field has the wrong
// JSON type, so validators can walk arbitrary user input safely. Not thread-safe: one instance
// per validate() call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::api::validation {

// Field paths as Kubernetes prints them: "spec", "spec.containers[0]", "data[key]".
std::string child(const std::string& path, std::string_view name);
std::string index(const std::string& path, size_t i);
std::string key(const std::string& path, std::string_view k);

// Go's %q quoting of a string.
std::string goQuote(std::string_view s);
// How Kubernetes prints a bad value: strings %q-quoted, numbers and booleans bare, anything else
// as Go's json.Marshal would write it (compact, <>& escaped).
std::string goValue(const json& value);

class FieldErrors {
 public:
  void required(const std::string& path, const std::string& detail = "");
  // `shownValue` is the already formatted value (goValue() of the JSON value usually).
  void invalidShown(const std::string& path, const std::string& shownValue,
                    const std::string& detail);
  void invalid(const std::string& path, const json& value, const std::string& detail) {
    invalidShown(path, goValue(value), detail);
  }
  void duplicate(const std::string& path, const json& value);
  void duplicateShown(const std::string& path, const std::string& shownValue);
  void notSupported(const std::string& path, const json& value,
                    const std::vector<std::string>& supported);
  void forbidden(const std::string& path, const std::string& detail);
  void notFound(const std::string& path, const json& value);
  void tooLong(const std::string& path, int64_t maxBytes);
  void tooMany(const std::string& path, int64_t actual, int64_t max);
  void typeInvalid(const std::string& path, const json& value, const std::string& type);
  // Invalid for each message of a name/format check (IsDNS1123Label and friends).
  void invalidEach(const std::string& path, const json& value,
                   const std::vector<std::string>& messages);

  // Typed access to obj[name] at `path` (the path of the field itself). Absent or null fields
  // yield nullopt/nullptr silently; a value of the wrong JSON type yields nullopt/nullptr and a
  // FieldValueTypeInvalid cause. A non-object `obj` yields nothing and no cause.
  const json* object(const json& obj, std::string_view name, const std::string& path);
  const json* array(const json& obj, std::string_view name, const std::string& path);
  std::optional<std::string> string(const json& obj, std::string_view name,
                                    const std::string& path);
  std::optional<int64_t> integer(const json& obj, std::string_view name, const std::string& path);
  std::optional<bool> boolean(const json& obj, std::string_view name, const std::string& path);
  // An int-or-string field (targetPort, maxSurge): a string or an integer, else a type error.
  const json* intOrString(const json& obj, std::string_view name, const std::string& path);
  // A map of string to string (labels, selectors, data): object whose values are all strings.
  const json* stringMap(const json& obj, std::string_view name, const std::string& path);

  // A cause produced elsewhere (the schema checks of api/json_schema.h).
  void append(Cause cause) { causes_.push_back(std::move(cause)); }

  const std::vector<Cause>& causes() const { return causes_; }
  std::vector<Cause> take() { return std::move(causes_); }
  size_t size() const { return causes_.size(); }

 private:
  void add(const char* reason, const std::string& path, std::string message);
  const json* lookup(const json& obj, std::string_view name) const;

  std::vector<Cause> causes_;
};

}  // namespace minik8s::api::validation
