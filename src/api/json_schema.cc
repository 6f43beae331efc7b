#include "api/json_schema.h"

#include <cmath>
#include <regex>
#include <set>

#include "api/validation/field_errors.h"

namespace minik8s::api::jsonschema {
namespace {

using validation::child;
using validation::goQuote;
using validation::goValue;
using validation::index;

// The JSON type name a value has, in OpenAPI's words.
std::string typeOf(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number_float()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

bool flag(const json& schema, const char* name) {
  auto it = schema.find(name);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

const json* member(const json& schema, const char* name) {
  if (!schema.is_object()) return nullptr;
  auto it = schema.find(name);
  return it == schema.end() ? nullptr : &*it;
}

// The schema of property `name` of an object schema, or null when undeclared.
const json* propertySchema(const json& schema, const std::string& name) {
  const json* props = member(schema, "properties");
  if (props && props->is_object()) {
    auto it = props->find(name);
    if (it != props->end()) return &*it;
  }
  return nullptr;
}

// additionalProperties as a schema ({} when `true`), or null when absent/false.
const json* additionalSchema(const json& schema) {
  static const json kAny = json::object({{"x-kubernetes-preserve-unknown-fields", true}});
  const json* ap = member(schema, "additionalProperties");
  if (!ap) return nullptr;
  if (ap->is_boolean()) return ap->get<bool>() ? &kAny : nullptr;
  return ap->is_object() ? ap : nullptr;
}

std::string mapKey(const std::string& path, const std::string& k) {
  return validation::key(path, k);
}

// ---------------------------------------------------------------------------------------------
// Structural rules.

const std::set<std::string> kTypes = {"object", "array", "string", "integer", "number", "boolean"};

void checkNode(const json& s, const std::string& path, bool root, std::vector<Cause>& out) {
  if (!s.is_object()) {
    out.push_back(
        {"FieldValueInvalid", path, "Invalid value: " + goValue(s) + ": must be an object"});
    return;
  }
  if (s.contains("$ref")) {
    out.push_back({"FieldValueForbidden", child(path, "$ref"), "Forbidden: $ref is not supported"});
  }
  const bool intOrString = flag(s, "x-kubernetes-int-or-string");
  const bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
  std::string type = s.value("type", "");
  if (!s.contains("type") && !intOrString && !preserve) {
    out.push_back({"FieldValueRequired", child(path, "type"),
                   "Required value: must not be empty for specified object fields"});
  } else if (s.contains("type") && (!s["type"].is_string() || !kTypes.count(type))) {
    out.push_back({"FieldValueNotSupported", child(path, "type"),
                   "Unsupported value: " + goValue(s["type"]) +
                       ": supported values: \"array\", \"boolean\", \"integer\", \"number\", "
                       "\"object\", \"string\""});
  }
  if (root && type != "object") {
    out.push_back({"FieldValueInvalid", child(path, "type"),
                   "Invalid value: " + goQuote(type) + ": must be object at the root"});
  }
  const json* props = member(s, "properties");
  const json* ap = member(s, "additionalProperties");
  if (props && ap && !(ap->is_boolean() && ap->get<bool>() == false)) {
    out.push_back({"FieldValueForbidden", child(path, "additionalProperties"),
                   "Forbidden: additionalProperties and properties are mutual exclusive"});
  }
  if (props) {
    if (!props->is_object()) {
      out.push_back({"FieldValueTypeInvalid", child(path, "properties"),
                     "Invalid value: " + goValue(*props) + ": must be of type object"});
    } else {
      for (const auto& [name, sub] : props->items()) {
        checkNode(sub, mapKey(child(path, "properties"), name), false, out);
      }
    }
  }
  if (ap && ap->is_object()) checkNode(*ap, child(path, "additionalProperties"), false, out);
  if (const json* items = member(s, "items")) {
    if (items->is_object()) {
      checkNode(*items, child(path, "items"), false, out);
    } else {
      out.push_back({"FieldValueForbidden", child(path, "items"),
                     "Forbidden: items must be a schema object, not an array"});
    }
  } else if (type == "array") {
    out.push_back({"FieldValueRequired", child(path, "items"),
                   "Required value: must be specified for array fields"});
  }
  if (const json* pattern = member(s, "pattern"); pattern && pattern->is_string()) {
    try {
      std::regex re(pattern->get<std::string>(), std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      out.push_back(
          {"FieldValueInvalid", child(path, "pattern"),
           "Invalid value: " + goValue(*pattern) + ": must be a valid regular expression"});
    }
  }
  for (const char* combinator : {"allOf", "anyOf", "oneOf"}) {
    const json* list = member(s, combinator);
    if (!list) continue;
    if (!list->is_array()) {
      out.push_back({"FieldValueTypeInvalid", child(path, combinator),
                     "Invalid value: " + goValue(*list) + ": must be of type array"});
      continue;
    }
    // Value validations only: their nodes need no type of their own.
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_object()) {
        out.push_back({"FieldValueInvalid", index(child(path, combinator), i),
                       "Invalid value: must be an object"});
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pruning and defaulting.

// ObjectMeta fields kept at the root of a custom resource.
const std::set<std::string> kObjectMetaFields = {"name",
                                                 "generateName",
                                                 "namespace",
                                                 "selfLink",
                                                 "uid",
                                                 "resourceVersion",
                                                 "generation",
                                                 "creationTimestamp",
                                                 "deletionTimestamp",
                                                 "deletionGracePeriodSeconds",
                                                 "labels",
                                                 "annotations",
                                                 "ownerReferences",
                                                 "finalizers",
                                                 "managedFields"};

void pruneNode(json& v, const json& s, const std::string& path, bool root,
               std::vector<std::string>* pruned) {
  if (!s.is_object()) return;
  const bool embedded = flag(s, "x-kubernetes-embedded-resource");
  if (v.is_object()) {
    if (flag(s, "x-kubernetes-preserve-unknown-fields") && !member(s, "properties") &&
        !member(s, "additionalProperties")) {
      return;
    }
    const bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields");
    const json* ap = additionalSchema(s);
    for (auto it = v.begin(); it != v.end();) {
      const std::string& k = it.key();
      const std::string p = path.empty() ? k : (ap ? mapKey(path, k) : child(path, k));
      if ((root || embedded) && (k == "apiVersion" || k == "kind")) {
        ++it;
        continue;
      }
      if ((root || embedded) && k == "metadata") {
        if (it->is_object()) {
          for (auto m = it->begin(); m != it->end();) {
            if (kObjectMetaFields.count(m.key())) {
              ++m;
            } else {
              if (pruned) pruned->push_back(child(p, m.key()));
              m = it->erase(m);
            }
          }
        }
        ++it;
        continue;
      }
      if (const json* ps = propertySchema(s, k)) {
        pruneNode(*it, *ps, p, false, pruned);
        ++it;
      } else if (ap) {
        pruneNode(*it, *ap, p, false, pruned);
        ++it;
      } else if (preserve) {
        ++it;
      } else {
        if (pruned) pruned->push_back(p);
        it = v.erase(it);
      }
    }
  } else if (v.is_array()) {
    const json* items = member(s, "items");
    if (!items || !items->is_object()) return;
    for (size_t i = 0; i < v.size(); ++i) pruneNode(v[i], *items, index(path, i), false, pruned);
  }
}

void defaultNode(json& v, const json& s) {
  if (!s.is_object()) return;
  if (v.is_object()) {
    if (const json* props = member(s, "properties"); props && props->is_object()) {
      for (const auto& [name, ps] : props->items()) {
        if (!ps.is_object()) continue;
        auto it = v.find(name);
        if (it != v.end() && it->is_null() && !flag(ps, "nullable")) {
          v.erase(it);
          it = v.end();
        }
        if (it == v.end() && ps.contains("default")) v[name] = ps["default"];
      }
      for (auto& [name, child] : v.items()) {
        if (const json* ps = propertySchema(s, name)) defaultNode(child, *ps);
      }
    } else if (const json* ap = additionalSchema(s)) {
      for (auto& [name, child] : v.items()) defaultNode(child, *ap);
    }
  } else if (v.is_array()) {
    const json* items = member(s, "items");
    if (!items) return;
    for (auto& child : v) defaultNode(child, *items);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation.

struct Validator {
  std::vector<Cause> out;

  // Kubernetes names the field in the message as the path in body ("spec.replicas in body").
  static std::string inBody(const std::string& path) {
    return (path.empty() ? "body" : path) + " in body";
  }

  void add(const char* reason, const std::string& path, std::string message) {
    out.push_back(Cause{reason, path, std::move(message)});
  }
  void invalid(const std::string& path, const json& value, const std::string& detail) {
    add("FieldValueInvalid", path, "Invalid value: " + goValue(value) + ": " + detail);
  }

  bool typeMatches(const json& v, const std::string& type) {
    if (type == "integer") {
      if (v.is_number_integer() || v.is_number_unsigned()) return true;
      if (v.is_number_float()) {
        double d = v.get<double>();
        return std::isfinite(d) && std::floor(d) == d;
      }
      return false;
    }
    if (type == "number") return v.is_number();
    if (type == "string") return v.is_string();
    if (type == "boolean") return v.is_boolean();
    if (type == "array") return v.is_array();
    if (type == "object") return v.is_object();
    return true;
  }

  void node(const json& v, const json& s, const std::string& path) {
    if (!s.is_object()) return;
    if (v.is_null()) {
      if (flag(s, "nullable") || !s.contains("type")) return;
      add("FieldValueTypeInvalid", path,
          "Invalid value: \"null\": " + inBody(path) + " must be of type " +
              s.value("type", std::string("object")) + ": \"null\"");
      return;
    }
    if (flag(s, "x-kubernetes-int-or-string")) {
      if (!v.is_string() && !typeMatches(v, "integer")) {
        add("FieldValueTypeInvalid", path,
            "Invalid value: " + goQuote(typeOf(v)) + ": " + inBody(path) +
                " must be of type integer-or-string: " + goQuote(typeOf(v)));
        return;
      }
    } else if (const json* t = member(s, "type"); t && t->is_string()) {
      const std::string type = t->get<std::string>();
      if (!typeMatches(v, type)) {
        add("FieldValueTypeInvalid", path,
            "Invalid value: " + goQuote(typeOf(v)) + ": " + inBody(path) + " must be of type " +
                type + ": " + goQuote(typeOf(v)));
        return;
      }
    }
    if (const json* e = member(s, "enum"); e && e->is_array()) {
      bool found = false;
      for (const auto& allowed : *e) found = found || allowed == v;
      if (!found) {
        std::string msg = "Unsupported value: " + goValue(v) + ": supported values: ";
        for (size_t i = 0; i < e->size(); ++i) {
          if (i) msg += ", ";
          msg += goValue((*e)[i]);
        }
        add("FieldValueNotSupported", path, msg);
      }
    }
    if (v.is_number()) numeric(v, s, path);
    if (v.is_string()) stringRules(v.get<std::string>(), v, s, path);
    if (v.is_array()) arrayRules(v, s, path);
    if (v.is_object()) objectRules(v, s, path);
    combinators(v, s, path);
  }

  void numeric(const json& v, const json& s, const std::string& path) {
    const double d = v.get<double>();
    if (const json* m = member(s, "maximum"); m && m->is_number()) {
      const bool exclusive = flag(s, "exclusiveMaximum");
      if (exclusive ? d >= m->get<double>() : d > m->get<double>()) {
        invalid(path, v,
                inBody(path) + " should be less than " + (exclusive ? "" : "or equal to ") +
                    goValue(*m));
      }
    }
    if (const json* m = member(s, "minimum"); m && m->is_number()) {
      const bool exclusive = flag(s, "exclusiveMinimum");
      if (exclusive ? d <= m->get<double>() : d < m->get<double>()) {
        invalid(path, v,
                inBody(path) + " should be greater than " + (exclusive ? "" : "or equal to ") +
                    goValue(*m));
      }
    }
    if (const json* m = member(s, "multipleOf"); m && m->is_number() && m->get<double>() > 0) {
      const double q = d / m->get<double>();
      if (std::fabs(q - std::round(q)) > 1e-9) {
        invalid(path, v, inBody(path) + " should be a multiple of " + goValue(*m));
      }
    }
  }

  void stringRules(const std::string& str, const json& v, const json& s, const std::string& path) {
    // Lengths count characters (UTF-8 code points), as Go's utf8.RuneCountInString.
    int64_t chars = 0;
    for (unsigned char c : str) chars += (c & 0xC0) != 0x80;
    if (const json* m = member(s, "maxLength"); m && m->is_number_integer()) {
      if (chars > m->get<int64_t>()) {
        add("FieldValueTooLong", path,
            "Too long: may not be more than " + std::to_string(m->get<int64_t>()) + " bytes");
      }
    }
    if (const json* m = member(s, "minLength"); m && m->is_number_integer()) {
      if (chars < m->get<int64_t>()) {
        invalid(path, v,
                inBody(path) + " should be at least " + std::to_string(m->get<int64_t>()) +
                    " chars long");
      }
    }
    if (const json* p = member(s, "pattern"); p && p->is_string()) {
      try {
        std::regex re(p->get<std::string>(), std::regex::ECMAScript);
        if (!std::regex_search(str, re)) {
          invalid(path, v, inBody(path) + " should match '" + p->get<std::string>() + "'");
        }
      } catch (const std::exception&) {
        // Refused when the CRD was stored (checkStructural); nothing to check against.
      }
    }
  }

  void arrayRules(const json& v, const json& s, const std::string& path) {
    const int64_t n = static_cast<int64_t>(v.size());
    if (const json* m = member(s, "maxItems");
        m && m->is_number_integer() && n > m->get<int64_t>()) {
      add("FieldValueTooMany", path,
          "Too many: " + std::to_string(n) + ": must have at most " +
              std::to_string(m->get<int64_t>()) + " items");
    }
    if (const json* m = member(s, "minItems");
        m && m->is_number_integer() && n < m->get<int64_t>()) {
      invalid(
          path, v,
          inBody(path) + " should have at least " + std::to_string(m->get<int64_t>()) + " items");
    }
    const std::string listType = s.value("x-kubernetes-list-type", "");
    if (flag(s, "uniqueItems") || listType == "set") {
      for (size_t i = 0; i < v.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (v[i] == v[j]) {
            add("FieldValueDuplicate", index(path, i), "Duplicate value: " + goValue(v[i]));
            break;
          }
        }
      }
    }
    if (listType == "map") {
      const json* keys = member(s, "x-kubernetes-list-map-keys");
      if (keys && keys->is_array()) {
        std::vector<json> seen;
        for (size_t i = 0; i < v.size(); ++i) {
          json k = json::object();
          for (const auto& name : *keys) {
            if (name.is_string() && v[i].is_object() && v[i].contains(name.get<std::string>())) {
              k[name.get<std::string>()] = v[i][name.get<std::string>()];
            }
          }
          bool dup = false;
          for (const auto& other : seen) dup = dup || other == k;
          if (dup) add("FieldValueDuplicate", index(path, i), "Duplicate value: " + goValue(k));
          seen.push_back(std::move(k));
        }
      }
    }
    if (const json* items = member(s, "items"); items && items->is_object()) {
      for (size_t i = 0; i < v.size(); ++i) node(v[i], *items, index(path, i));
    }
  }

  void objectRules(const json& v, const json& s, const std::string& path) {
    const int64_t n = static_cast<int64_t>(v.size());
    if (const json* m = member(s, "maxProperties");
        m && m->is_number_integer() && n > m->get<int64_t>()) {
      add("FieldValueTooMany", path,
          "Too many: " + std::to_string(n) + ": must have at most " +
              std::to_string(m->get<int64_t>()) + " items");
    }
    if (const json* m = member(s, "minProperties");
        m && m->is_number_integer() && n < m->get<int64_t>()) {
      invalid(path, v,
              inBody(path) + " should have at least " + std::to_string(m->get<int64_t>()) +
                  " properties");
    }
    if (const json* req = member(s, "required"); req && req->is_array()) {
      for (const auto& name : *req) {
        if (!name.is_string()) continue;
        const std::string& k = name.get_ref<const std::string&>();
        auto it = v.find(k);
        if (it == v.end() || (it->is_null() && !flagOf(s, k, "nullable"))) {
          add("FieldValueRequired", path.empty() ? k : child(path, k), "Required value");
        }
      }
    }
    const json* ap = additionalSchema(s);
    for (const auto& [k, child] : v.items()) {
      if (path.empty() && (k == "apiVersion" || k == "kind" || k == "metadata")) continue;
      if (const json* ps = propertySchema(s, k)) {
        node(child, *ps, path.empty() ? k : validation::child(path, k));
      } else if (ap) {
        node(child, *ap, mapKey(path, k));
      }
    }
  }

  static bool flagOf(const json& s, const std::string& prop, const char* name) {
    const json* ps = propertySchema(s, prop);
    return ps && flag(*ps, name);
  }

  // Value validations of allOf/anyOf/oneOf/not, checked on the same value.
  void combinators(const json& v, const json& s, const std::string& path) {
    if (const json* all = member(s, "allOf"); all && all->is_array()) {
      for (const auto& sub : *all) node(v, sub, path);
    }
    auto passes = [&](const json& sub) {
      Validator inner;
      inner.node(v, sub, path);
      return inner.out.empty();
    };
    if (const json* any = member(s, "anyOf"); any && any->is_array() && !any->empty()) {
      bool ok = false;
      for (const auto& sub : *any) ok = ok || passes(sub);
      if (!ok) invalid(path, v, inBody(path) + " should match at least one schema in anyOf");
    }
    if (const json* one = member(s, "oneOf"); one && one->is_array() && !one->empty()) {
      int matched = 0;
      for (const auto& sub : *one) matched += passes(sub) ? 1 : 0;
      if (matched != 1)
        invalid(path, v, inBody(path) + " must validate one and only one schema (oneOf)");
    }
    if (const json* no = member(s, "not"); no && no->is_object() && passes(*no)) {
      invalid(path, v, inBody(path) + " must not validate the schema (not)");
    }
  }
};

}  // namespace

std::vector<Cause> checkStructural(const json& schema, const std::string& path) {
  std::vector<Cause> out;
  checkNode(schema, path, /*root=*/true, out);
  return out;
}

void prune(json& value, const json& schema, bool isRoot, std::vector<std::string>* pruned) {
  pruneNode(value, schema, "", isRoot, pruned);
}

void applyDefaults(json& value, const json& schema) { defaultNode(value, schema); }

std::vector<Cause> validate(const json& value, const json& schema, const std::string& path) {
  Validator v;
  v.node(value, schema, path);
  return std::move(v.out);
}

}  // namespace minik8s::api::jsonschema
