#include "api/schema/schema_dsl.h"

#include <sstream>

#include "api/schema/definitions.h"

namespace minik8s::api::schema {
namespace {

// Unresolved references carry the package they were written in: "?<package>|<name>".
constexpr char kPending = '?';

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

json withDescription(json schema, const std::string& description) {
  if (!description.empty()) schema["description"] = description;
  return schema;
}

json typeSchema(const std::string& type, const std::string& package) {
  if (type.rfind("[]", 0) == 0) {
    return {{"type", "array"}, {"items", typeSchema(type.substr(2), package)}};
  }
  if (type.rfind("map[", 0) == 0 && type.back() == ']') {
    return {{"type", "object"},
            {"additionalProperties", typeSchema(type.substr(4, type.size() - 5), package)}};
  }
  if (type == "string") return {{"type", "string"}};
  if (type == "boolean") return {{"type", "boolean"}};
  if (type == "int32" || type == "int64") return {{"type", "integer"}, {"format", type}};
  if (type == "number") return {{"type", "number"}, {"format", "double"}};
  if (type == "date-time") return {{"type", "string"}, {"format", "date-time"}};
  if (type == "byte") return {{"type", "string"}, {"format", "byte"}};
  if (type == "int-or-string") {
    return {{"$ref", std::string(kSchemaRefPrefix) + kIntOrStringDefinition}};
  }
  if (type == "object") return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  if (type == "quantity") return {{"$ref", std::string(kSchemaRefPrefix) + kQuantityDefinition}};
  return {{"$ref", std::string(1, kPending) + package + "|" + type}};
}

// A field of a struct: a plain reference with a description is wrapped in allOf, since OpenAPI
// 3.0 ignores siblings of $ref.
json fieldSchema(const std::string& type, const std::string& package,
                 const std::string& description) {
  json s = typeSchema(type, package);
  if (s.contains("$ref")) s = json{{"allOf", json::array({s})}};
  if (type == "int-or-string") s["x-kubernetes-int-or-string"] = true;
  return withDescription(std::move(s), description);
}

void addTypeMeta(json& def, const std::string& group, const std::string& version,
                 const std::string& kind) {
  def["x-kubernetes-group-version-kind"] =
      json::array({{{"group", group}, {"version", version}, {"kind", kind}}});
  def["properties"]["apiVersion"] = {
      {"type", "string"},
      {"description",
       "APIVersion names the versioned schema of this object (group/version). The server "
       "converts recognized versions and rejects unknown ones."}};
  def["properties"]["kind"] = {
      {"type", "string"},
      {"description", "Kind is the REST resource type this object represents, in CamelCase."}};
}

struct Header {
  std::string name, group, version, description;
  bool hasGvk = false, list = false, preserve = false;
};

Header parseHeader(const std::string& line) {
  Header h;
  size_t colon = line.find(':');
  std::string head = trim(line.substr(0, colon));
  if (colon != std::string::npos) h.description = trim(line.substr(colon + 1));
  std::istringstream in(head);
  in >> h.name;
  std::string word;
  while (in >> word) {
    if (word[0] == '@') {
      std::string gv = word.substr(1);
      size_t slash = gv.find('/');
      h.hasGvk = true;
      h.group = slash == std::string::npos ? "" : gv.substr(0, slash);
      h.version = slash == std::string::npos ? gv : gv.substr(slash + 1);
    } else if (word == "+list") {
      h.list = true;
    } else if (word == "+preserve") {
      h.preserve = true;
    }
  }
  return h;
}

}  // namespace

void parseSchemaText(std::string_view text, json& defs) {
  std::string package;
  json* current = nullptr;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    if (line.rfind("package ", 0) == 0) {
      package = trim(line.substr(8));
      current = nullptr;
      continue;
    }
    if (line[0] != ' ') {
      Header h = parseHeader(line);
      json def = {{"type", "object"}, {"description", h.description}};
      if (h.preserve) def["x-kubernetes-preserve-unknown-fields"] = true;
      if (h.hasGvk) {
        addTypeMeta(def, h.group, h.version, h.name);
        def["properties"]["metadata"] =
            fieldSchema("ObjectMeta", package,
                        "Standard object metadata: name, namespace, labels, annotations, owners.");
      }
      if (h.list) {
        json list = {{"type", "object"},
                     {"description", h.name + "List is a list of " + h.name + " objects."},
                     {"required", json::array({"items"})}};
        addTypeMeta(list, h.group, h.version, h.name + "List");
        list["properties"]["metadata"] =
            fieldSchema("ListMeta", package, "Standard list metadata: resourceVersion, continue.");
        list["properties"]["items"] =
            fieldSchema("[]" + h.name, package, "The " + h.name + " objects of the list.");
        defs[package + "." + h.name + "List"] = std::move(list);
      }
      defs[package + "." + h.name] = std::move(def);
      current = &defs[package + "." + h.name];
      continue;
    }
    if (current == nullptr) continue;
    // Field: name[!] type[: description]
    std::string body = trim(line);
    size_t sp = body.find(' ');
    std::string name = body.substr(0, sp);
    std::string rest = sp == std::string::npos ? "" : trim(body.substr(sp + 1));
    size_t colon = rest.find(':');
    std::string type = trim(rest.substr(0, colon));
    std::string description = colon == std::string::npos ? "" : trim(rest.substr(colon + 1));
    bool required = !name.empty() && name.back() == '!';
    if (required) {
      name.pop_back();
      (*current)["required"].push_back(name);
    }
    (*current)["properties"][name] = fieldSchema(type, package, description);
  }
}

namespace {

void resolveIn(json& node, const json& defs, std::vector<std::string>& missing) {
  if (node.is_object()) {
    auto ref = node.find("$ref");
    if (ref != node.end() && ref->is_string()) {
      std::string value = ref->get<std::string>();
      if (!value.empty() && value[0] == kPending) {
        size_t bar = value.find('|');
        std::string package = value.substr(1, bar - 1);
        std::string name = value.substr(bar + 1);
        std::string found;
        if (name.find('.') != std::string::npos) {
          if (defs.contains(name)) found = name;
        } else {
          for (const std::string& p : {package, std::string("io.k8s.apimachinery.pkg.apis.meta.v1"),
                                       std::string("io.k8s.api.core.v1")}) {
            if (defs.contains(p + "." + name)) {
              found = p + "." + name;
              break;
            }
          }
        }
        if (found.empty()) missing.push_back(package + "|" + name);
        *ref = std::string(kSchemaRefPrefix) + (found.empty() ? name : found);
      }
    }
    for (auto& [key, child] : node.items()) resolveIn(child, defs, missing);
  } else if (node.is_array()) {
    for (auto& child : node) resolveIn(child, defs, missing);
  }
}

}  // namespace

std::vector<std::string> resolveRefs(json& defs) {
  std::vector<std::string> missing;
  json copy = defs;  // names only are read from it, while `defs` is rewritten
  resolveIn(defs, copy, missing);
  return missing;
}

}  // namespace minik8s::api::schema
