#include "api/strict_decoding.h"

#include <cmath>
#include <cstdint>

#include "api/custom_resource.h"
#include "api/schema/definitions.h"

namespace minik8s::api {
namespace {

const std::string kRefPrefix = kSchemaRefPrefix;

// The definition a field schema points to ($ref directly or through a one-element allOf).
const json* referencedDefinition(const json& schema, std::string* name) {
  const json* s = &schema;
  auto allOf = s->find("allOf");
  if (allOf != s->end() && allOf->is_array() && allOf->size() == 1) s = &(*allOf)[0];
  auto ref = s->find("$ref");
  if (ref == s->end() || !ref->is_string()) return nullptr;
  std::string full = ref->get<std::string>();
  if (full.rfind(kRefPrefix, 0) == 0) full = full.substr(kRefPrefix.size());
  const json& defs = schemaDefinitions();
  auto def = defs.find(full);
  if (def == defs.end()) return nullptr;
  if (name) *name = full;
  return &*def;
}

std::string shortName(const std::string& definition) {
  return definition.substr(definition.rfind('.') + 1);
}

// "v1.PodSpec" from "io.k8s.api.core.v1.PodSpec": the Go type Kubernetes would name.
std::string goDefinitionType(const std::string& definition) {
  if (definition == kQuantityDefinition) return "resource.Quantity";
  if (definition == kIntOrStringDefinition) return "intstr.IntOrString";
  size_t last = definition.rfind('.');
  size_t prev = definition.rfind('.', last - 1);
  return definition.substr(prev + 1);
}

std::string goType(const json& schema) {
  std::string ref;
  if (referencedDefinition(schema, &ref)) return goDefinitionType(ref);
  if (schema.value("x-kubernetes-int-or-string", false)) return "intstr.IntOrString";
  std::string type = schema.value("type", "");
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

class Checker {
 public:
  explicit Checker(SchemaFindings& out) : out_(out) {}

  // `path` has list indexes and is what unknown-field messages print; `goPath` is Go's field
  // stack (JSON names only) and `goStruct` the innermost struct, for type errors.
  void check(const json& schema, const json& value, const std::string& path,
             const std::string& goPath, const std::string& goStruct) {
    if (value.is_null()) return;
    std::string defName;
    if (const json* def = referencedDefinition(schema, &defName)) {
      if (defName == kIntOrStringDefinition) {
        if (!value.is_string() && !isInteger(value)) typeError(value, schema, goPath, goStruct);
        return;
      }
      if (defName == kQuantityDefinition) {
        if (!value.is_string() && !value.is_number()) typeError(value, schema, goPath, goStruct);
        return;
      }
      checkStruct(*def, shortName(defName), value, path, goPath, goStruct, schema);
      return;
    }
    if (schema.value("x-kubernetes-int-or-string", false)) {
      if (!value.is_string() && !isInteger(value)) typeError(value, schema, goPath, goStruct);
      return;
    }
    std::string type = schema.value("type", "");
    if (type == "integer") {
      if (!isInteger(value) || !fits(value, schema.value("format", "int64"))) {
        typeError(value, schema, goPath, goStruct);
      }
    } else if (type == "number") {
      if (!value.is_number()) typeError(value, schema, goPath, goStruct);
    } else if (type == "boolean") {
      if (!value.is_boolean()) typeError(value, schema, goPath, goStruct);
    } else if (type == "string") {
      if (!value.is_string()) typeError(value, schema, goPath, goStruct);
    } else if (type == "array") {
      if (!value.is_array()) return typeError(value, schema, goPath, goStruct);
      if (!schema.contains("items")) return;
      for (size_t i = 0; i < value.size(); ++i) {
        check(schema["items"], value[i], path + "[" + std::to_string(i) + "]", goPath, goStruct);
      }
    } else if (type == "object") {
      if (schema.contains("properties")) {
        checkStruct(schema, goStruct, value, path, goPath, goStruct, schema);
      } else if (schema.contains("additionalProperties")) {
        if (!value.is_object()) return typeError(value, schema, goPath, goStruct);
        for (const auto& [key, child] : value.items()) {
          check(schema["additionalProperties"], child, join(path, key), goPath, goStruct);
        }
      }
      // else free-form: anything goes
    }
  }

  void checkStruct(const json& def, const std::string& structName, const json& value,
                   const std::string& path, const std::string& goPath,
                   const std::string& outerStruct, const json& fieldSchema) {
    if (!value.is_object()) return typeError(value, fieldSchema, goPath, outerStruct);
    const bool preserve = def.value("x-kubernetes-preserve-unknown-fields", false);
    const json& props = def.contains("properties") ? def["properties"] : kNoProperties;
    for (const auto& [key, child] : value.items()) {
      auto prop = props.find(key);
      if (prop == props.end()) {
        if (!preserve) out_.unknownFields.push_back(join(path, key));
        continue;
      }
      check(*prop, child, join(path, key), join(goPath, key), structName);
    }
  }

 private:
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  static bool isInteger(const json& v) {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }

  static bool fits(const json& v, const std::string& format) {
    if (format != "int32") return !v.is_number_float() || std::fabs(v.get<double>()) < 9.3e18;
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= INT32_MAX;
    double d = v.get<double>();
    return d >= INT32_MIN && d <= INT32_MAX;
  }

  void typeError(const json& value, const json& schema, const std::string& goPath,
                 const std::string& goStruct) {
    out_.typeErrors.push_back("json: cannot unmarshal " + jsonKind(value) +
                              " into Go struct field " + goStruct + "." + goPath + " of type " +
                              goType(schema));
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
      checker.check(*prop, child, key, key, resource.kind);
    } else if (key != "status" && key != "apiVersion" && key != "kind" && key != "metadata") {
      findings.unknownFields.push_back(key);
    }
  }
  return findings;
}

}  // namespace minik8s::api
