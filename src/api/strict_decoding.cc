#include "api/strict_decoding.h"

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "api/custom_resource.h"
#include "api/schema/definitions.h"

namespace minik8s::api {
namespace {

const std::string kRefPrefix = kSchemaRefPrefix;

// The definition a field schema points to ($ref directly or through a one-element allOf); its name
// in *name (a view into the schema, which lives as long as the definitions do).
const json* referencedDefinition(const json& schema, std::string_view* name) {
  const json* s = &schema;
  auto allOf = s->find("allOf");
  if (allOf != s->end() && allOf->is_array() && allOf->size() == 1) s = &(*allOf)[0];
  auto ref = s->find("$ref");
  if (ref == s->end() || !ref->is_string()) return nullptr;
  std::string_view full = ref->get_ref<const std::string&>();
  if (full.starts_with(kRefPrefix)) full.remove_prefix(kRefPrefix.size());
  const json& defs = schemaDefinitions();
  auto def = defs.find(full);
  if (def == defs.end()) return nullptr;
  if (name) *name = full;
  return &*def;
}

std::string_view shortName(std::string_view definition) {
  return definition.substr(definition.rfind('.') + 1);
}

// A string member of a schema ("" when absent or not a string), read in place.
std::string_view text(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                               : std::string_view();
}

bool flag(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

// "v1.PodSpec" from "io.k8s.api.core.v1.PodSpec": the Go type Kubernetes would name.
std::string goDefinitionType(std::string_view definition) {
  if (definition == kQuantityDefinition) return "resource.Quantity";
  if (definition == kIntOrStringDefinition) return "intstr.IntOrString";
  size_t last = definition.rfind('.');
  size_t prev = definition.rfind('.', last - 1);
  return std::string(definition.substr(prev + 1));
}

std::string goType(const json& schema) {
  std::string_view ref;
  if (referencedDefinition(schema, &ref)) return goDefinitionType(ref);
  if (flag(schema, "x-kubernetes-int-or-string")) return "intstr.IntOrString";
  std::string_view type = text(schema, "type");
  if (type == "integer") return schema.value("format", "int64");
  if (type == "number") return "float64";
  if (type == "boolean") return "bool";
  if (type == "string") return "string";
  if (type == "array" && schema.contains("items")) return "[]" + goType(schema["items"]);
  if (type == "object" && schema.contains("additionalProperties")) {
    return "map[string]" + goType(schema["additionalProperties"]);
  }
  return "map[string]interface {}";
}

// How Go's decoder names a JSON value in its errors.
std::string jsonKind(const json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  if (v.is_number_float()) return "number " + v.dump();
  return "number";
}

// Where the walk is: a chain of frames on the stack, made into the printed paths only for a
// finding (the walk itself allocates nothing). A struct field is in both paths; a map key and a
// list index only in `path` (Go's field stack has JSON names only).
struct Frame {
  enum Kind { kField, kMapKey, kIndex };
  const Frame* parent = nullptr;
  Kind kind = kField;
  std::string_view key;
  size_t index = 0;
};

// "spec.containers[0].name": fields and map keys joined by dots, indexes in brackets.
std::string pathOf(const Frame* f) {
  std::vector<const Frame*> chain;
  for (; f; f = f->parent) chain.push_back(f);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Frame& fr = **it;
    if (fr.kind == Frame::kIndex) {
      out += "[" + std::to_string(fr.index) + "]";
    } else {
      if (!out.empty()) out += '.';
      out += fr.key;
    }
  }
  return out;
}

// Go's field stack: the struct fields only, joined by dots.
std::string goPathOf(const Frame* f) {
  std::vector<std::string_view> keys;
  for (; f; f = f->parent) {
    if (f->kind == Frame::kField) keys.push_back(f->key);
  }
  std::string out;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += *it;
  }
  return out;
}

class Checker {
 public:
  explicit Checker(SchemaFindings& out) : out_(out) {}

  // `at` is where `value` lies; `goStruct` the innermost struct, for type errors.
  void check(const json& schema, const json& value, const Frame& at, std::string_view goStruct) {
    if (value.is_null()) return;
    std::string_view defName;
    if (const json* def = referencedDefinition(schema, &defName)) {
      if (defName == kIntOrStringDefinition) {
        if (!value.is_string() && !isInteger(value)) typeError(value, schema, at, goStruct);
        return;
      }
      if (defName == kQuantityDefinition) {
        if (!value.is_string() && !value.is_number()) typeError(value, schema, at, goStruct);
        return;
      }
      checkStruct(*def, shortName(defName), value, at, goStruct, schema);
      return;
    }
    if (flag(schema, "x-kubernetes-int-or-string")) {
      if (!value.is_string() && !isInteger(value)) typeError(value, schema, at, goStruct);
      return;
    }
    std::string_view type = text(schema, "type");
    if (type == "integer") {
      std::string_view format = text(schema, "format");
      if (!isInteger(value) || !fits(value, format.empty() ? "int64" : format)) {
        typeError(value, schema, at, goStruct);
      }
    } else if (type == "number") {
      if (!value.is_number()) typeError(value, schema, at, goStruct);
    } else if (type == "boolean") {
      if (!value.is_boolean()) typeError(value, schema, at, goStruct);
    } else if (type == "string") {
      if (!value.is_string()) typeError(value, schema, at, goStruct);
    } else if (type == "array") {
      if (!value.is_array()) return typeError(value, schema, at, goStruct);
      auto items = schema.find("items");
      if (items == schema.end()) return;
      for (size_t i = 0; i < value.size(); ++i) {
        check(*items, value[i], Frame{&at, Frame::kIndex, {}, i}, goStruct);
      }
    } else if (type == "object") {
      if (schema.contains("properties")) {
        checkStruct(schema, goStruct, value, at, goStruct, schema);
      } else if (auto additional = schema.find("additionalProperties");
                 additional != schema.end()) {
        if (!value.is_object()) return typeError(value, schema, at, goStruct);
        for (const auto& [key, child] : value.items()) {
          check(*additional, child, Frame{&at, Frame::kMapKey, key}, goStruct);
        }
      }
      // else free-form: anything goes
    }
  }

  void checkStruct(const json& def, std::string_view structName, const json& value, const Frame& at,
                   std::string_view outerStruct, const json& fieldSchema) {
    if (!value.is_object()) return typeError(value, fieldSchema, at, outerStruct);
    const bool preserve = flag(def, "x-kubernetes-preserve-unknown-fields");
    auto propsIt = def.find("properties");
    const json& props = propsIt != def.end() ? *propsIt : kNoProperties;
    for (const auto& [key, child] : value.items()) {
      const Frame here{&at, Frame::kField, key};
      auto prop = props.find(key);
      if (prop == props.end()) {
        if (!preserve) out_.unknownFields.push_back(pathOf(&here));
        continue;
      }
      check(*prop, child, here, structName);
    }
  }

 private:
  static bool isInteger(const json& v) {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }

  static bool fits(const json& v, std::string_view format) {
    if (format != "int32") return !v.is_number_float() || std::fabs(v.get<double>()) < 9.3e18;
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= INT32_MAX;
    double d = v.get<double>();
    return d >= INT32_MIN && d <= INT32_MAX;
  }

  void typeError(const json& value, const json& schema, const Frame& at,
                 std::string_view goStruct) {
    out_.typeErrors.push_back("json: cannot unmarshal " + jsonKind(value) +
                              " into Go struct field " + std::string(goStruct) + "." +
                              goPathOf(&at) + " of type " + goType(schema));
  }

  inline static const json kNoProperties = json::object();
  SchemaFindings& out_;
};

}  // namespace

SchemaFindings checkAgainstSchema(const ResourceInfo& resource, const json& obj) {
  SchemaFindings findings;
  if (resource.custom) {
    if (obj.is_object()) findings.unknownFields = resource.custom->unknownFields(obj);
    return findings;
  }
  const json& defs = schemaDefinitions();
  auto def = defs.find(definitionName(resource));
  if (def == defs.end() || !obj.is_object()) return findings;
  Checker checker(findings);
  const json& props = (*def)["properties"];
  for (const auto& [key, child] : obj.items()) {
    auto prop = props.find(key);
    if (prop != props.end()) {
      checker.check(*prop, child, Frame{nullptr, Frame::kField, key}, resource.kind);
    } else if (key != "status" && key != "apiVersion" && key != "kind" && key != "metadata") {
      findings.unknownFields.push_back(key);
    }
  }
  return findings;
}

}  // namespace minik8s::api
