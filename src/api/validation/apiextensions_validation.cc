// apiextensions.k8s.io/v1 CustomResourceDefinition, as kube-apiserver's apiextensions validation
// checks it: names, scope, versions (one storage version), structural schemas, printer columns,
// subresources and conversion.
#include <algorithm>
#include <cctype>
#include <set>

#include "api/json_schema.h"
#include "api/jsonpath.h"
#include "api/validation/kinds.h"
#include "common/json_pointer.h"
#include "common/strings.h"

namespace minik8s::api::validation {
namespace {

// obj[name] unless it is absent or null (kinds.h's member() keeps a null).
const json* nonNullMember(const json& obj, const char* name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// A path of plain fields (".spec.replicas"), as the scale subresource needs.
bool plainPath(const std::string& path) {
  auto parsed = JsonPath::parse(path);
  return parsed.ok() && !parsed->pointer().empty();
}

void validateNames(FieldErrors& errs, const json& names, const std::string& path) {
  auto plural = errs.string(names, "plural", child(path, "plural"));
  if (!plural || plural->empty()) {
    errs.required(child(path, "plural"));
  } else {
    errs.invalidEach(child(path, "plural"), *plural, isDNS1035Label(*plural));
  }
  auto singular = errs.string(names, "singular", child(path, "singular"));
  if (singular && !singular->empty()) {
    errs.invalidEach(child(path, "singular"), *singular, isDNS1035Label(*singular));
  }
  auto kind = errs.string(names, "kind", child(path, "kind"));
  if (!kind || kind->empty()) {
    errs.required(child(path, "kind"));
  } else if (!isDNS1035Label(asciiLower(*kind)).empty()) {
    errs.invalid(child(path, "kind"), *kind,
                 "may have mixed case, but should otherwise match: ^[a-z]([-a-z0-9]*[a-z0-9])?");
  }
  auto listKind = errs.string(names, "listKind", child(path, "listKind"));
  if (listKind && kind && *listKind == *kind) {
    errs.invalid(child(path, "listKind"), *listKind, "kind and listKind may not be the same");
  }
  if (const json* shortNames = errs.array(names, "shortNames", child(path, "shortNames"))) {
    for (size_t i = 0; i < shortNames->size(); ++i) {
      const json& s = (*shortNames)[i];
      if (!s.is_string()) {
        errs.typeInvalid(index(child(path, "shortNames"), i), s, "string");
        continue;
      }
      errs.invalidEach(index(child(path, "shortNames"), i), s,
                       isDNS1035Label(s.get<std::string>()));
    }
  }
  if (const json* categories = errs.array(names, "categories", child(path, "categories"))) {
    for (size_t i = 0; i < categories->size(); ++i) {
      const json& c = (*categories)[i];
      if (!c.is_string()) errs.typeInvalid(index(child(path, "categories"), i), c, "string");
    }
  }
}

void validateColumns(FieldErrors& errs, const json& columns, const std::string& path) {
  static const std::vector<std::string> kTypes = {"integer", "number", "string", "boolean", "date"};
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string p = index(path, i);
    const json& c = columns[i];
    if (!c.is_object()) {
      errs.typeInvalid(p, c, "object");
      continue;
    }
    auto name = errs.string(c, "name", child(p, "name"));
    if (!name || name->empty()) errs.required(child(p, "name"));
    auto type = errs.string(c, "type", child(p, "type"));
    if (!type || type->empty()) {
      errs.required(child(p, "type"));
    } else if (std::find(kTypes.begin(), kTypes.end(), *type) == kTypes.end()) {
      errs.notSupported(child(p, "type"), *type, kTypes);
    }
    auto path = errs.string(c, "jsonPath", child(p, "jsonPath"));
    if (!path || path->empty()) {
      errs.required(child(p, "jsonPath"));
    } else if (auto parsed = JsonPath::parse(*path); !parsed.ok()) {
      errs.invalid(child(p, "jsonPath"), *path, parsed.status().message());
    }
  }
}

void validateScale(FieldErrors& errs, const json& scale, const std::string& path) {
  auto spec = errs.string(scale, "specReplicasPath", child(path, "specReplicasPath"));
  if (!spec || spec->empty()) {
    errs.required(child(path, "specReplicasPath"));
  } else if (spec->rfind(".spec.", 0) != 0 || !plainPath(*spec)) {
    errs.invalid(child(path, "specReplicasPath"), *spec, "should be a json path under .spec");
  }
  auto status = errs.string(scale, "statusReplicasPath", child(path, "statusReplicasPath"));
  if (!status || status->empty()) {
    errs.required(child(path, "statusReplicasPath"));
  } else if (status->rfind(".status.", 0) != 0 || !plainPath(*status)) {
    errs.invalid(child(path, "statusReplicasPath"), *status, "should be a json path under .status");
  }
  auto selector = errs.string(scale, "labelSelectorPath", child(path, "labelSelectorPath"));
  if (selector && !selector->empty() && selector->rfind(".spec.", 0) != 0 &&
      selector->rfind(".status.", 0) != 0) {
    errs.invalid(child(path, "labelSelectorPath"), *selector,
                 "should be a json path under either .spec or .status");
  }
}

void validateVersions(FieldErrors& errs, const json& versions, const std::string& path) {
  if (versions.empty()) {
    errs.invalid(path, versions, "must have exactly one version marked as storage version");
    return;
  }
  std::set<std::string> seen;
  int storage = 0;
  for (size_t i = 0; i < versions.size(); ++i) {
    const std::string p = index(path, i);
    const json& v = versions[i];
    if (!v.is_object()) {
      errs.typeInvalid(p, v, "object");
      continue;
    }
    auto name = errs.string(v, "name", child(p, "name"));
    if (!name || name->empty()) {
      errs.required(child(p, "name"));
    } else {
      errs.invalidEach(child(p, "name"), *name, isDNS1035Label(*name));
      if (!seen.insert(*name).second) errs.duplicate(child(p, "name"), *name);
    }
    errs.boolean(v, "served", child(p, "served"));
    if (auto s = errs.boolean(v, "storage", child(p, "storage")); s && *s) ++storage;
    const json* schema = nonNullMember(v, "schema");
    const json* openapi = schema ? nonNullMember(*schema, "openAPIV3Schema") : nullptr;
    if (!openapi) {
      errs.required(child(child(p, "schema"), "openAPIV3Schema"), "schemas are required");
    } else {
      for (auto& c :
           jsonschema::checkStructural(*openapi, child(child(p, "schema"), "openAPIV3Schema"))) {
        errs.append(std::move(c));
      }
    }
    if (const json* columns =
            errs.array(v, "additionalPrinterColumns", child(p, "additionalPrinterColumns"))) {
      validateColumns(errs, *columns, child(p, "additionalPrinterColumns"));
    }
    if (const json* sub = errs.object(v, "subresources", child(p, "subresources"))) {
      if (const json* scale =
              errs.object(*sub, "scale", child(child(p, "subresources"), "scale"))) {
        validateScale(errs, *scale, child(child(p, "subresources"), "scale"));
      }
    }
  }
  if (storage != 1) {
    errs.invalid(path, versions, "must have exactly one version marked as storage version");
  }
}

}  // namespace

void validateCustomResourceDefinition(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  const json* specPtr = errs.object(obj, "spec", "spec");
  if (!specPtr) {
    errs.required("spec");
    return;
  }
  const json& spec = *specPtr;
  auto group = errs.string(spec, "group", "spec.group");
  if (!group || group->empty()) {
    errs.required("spec.group");
  } else {
    errs.invalidEach("spec.group", *group, isDNS1123Subdomain(*group));
    if (group->find('.') == std::string::npos) {
      errs.invalid("spec.group", *group, "should be a domain with at least one dot");
    }
  }
  const json* names = errs.object(spec, "names", "spec.names");
  if (!names) {
    errs.required("spec.names");
  } else {
    validateNames(errs, *names, "spec.names");
    const std::string plural = names->value("plural", "");
    const std::string name = valueAt(obj, "/metadata/name", std::string());
    if (group && !plural.empty() && name != plural + "." + *group) {
      errs.invalid("metadata.name", name, "must be spec.names.plural+\".\"+spec.group");
    }
  }
  auto scope = errs.string(spec, "scope", "spec.scope");
  if (!scope || scope->empty()) {
    errs.required("spec.scope");
  } else if (*scope != "Namespaced" && *scope != "Cluster") {
    errs.notSupported("spec.scope", *scope, {"Cluster", "Namespaced"});
  } else if (old) {
    const json oldScope = valueAt(*old, "/spec/scope", json());
    if (oldScope.is_string() && oldScope != *scope) {
      errs.invalid("spec.scope", *scope, "field is immutable");
    }
  }
  if (const json* versions = errs.array(spec, "versions", "spec.versions")) {
    validateVersions(errs, *versions, "spec.versions");
  } else if (!nonNullMember(spec, "versions")) {
    errs.required("spec.versions");
  }
  if (const json* conversion = errs.object(spec, "conversion", "spec.conversion")) {
    auto strategy = errs.string(*conversion, "strategy", "spec.conversion.strategy");
    if (strategy && *strategy == "Webhook") {
      errs.forbidden("spec.conversion.strategy",
                     "conversion webhooks are not supported by this server; serve every version "
                     "with the same schema and use strategy None");
    } else if (strategy && *strategy != "None") {
      errs.notSupported("spec.conversion.strategy", *strategy, {"None", "Webhook"});
    }
  }
}

}  // namespace minik8s::api::validation
