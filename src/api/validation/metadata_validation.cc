// Object metadata, labels, annotations and label selectors.
#include <algorithm>
#include <string>

#include "api/validation/kinds.h"
#include "common/strings.h"

namespace minik8s::api::validation {
namespace {

constexpr int64_t kTotalAnnotationSizeLimit = 256 * 1024;

void validateAnnotations(FieldErrors& errs, const json& annotations, const std::string& path) {
  int64_t total = 0;
  for (auto it = annotations.begin(); it != annotations.end(); ++it) {
    const std::string lowered = asciiLower(it.key());
    errs.invalidEach(path, it.key(), isQualifiedName(lowered));
    total += static_cast<int64_t>(it.key().size() + it->get_ref<const std::string&>().size());
  }
  if (total > kTotalAnnotationSizeLimit) errs.tooLong(path, kTotalAnnotationSizeLimit);
}

void validateOwnerReferences(FieldErrors& errs, const json& refs, const std::string& path) {
  for (size_t i = 0; i < refs.size(); ++i) {
    std::string p = index(path, i);
    if (!refs[i].is_object()) {
      errs.typeInvalid(p, refs[i], "object");
      continue;
    }
    auto check = [&](const char* field, const char* what) {
      auto v = errs.string(refs[i], field, child(p, field));
      if (!v || v->empty())
        errs.invalid(child(p, field), v.value_or(""), std::string(what) + " must not be empty");
    };
    check("apiVersion", "version");
    check("kind", "kind");
    check("name", "name");
    check("uid", "uid");
    errs.boolean(refs[i], "controller", child(p, "controller"));
    errs.boolean(refs[i], "blockOwnerDeletion", child(p, "blockOwnerDeletion"));
  }
}

}  // namespace

const json* member(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() ? nullptr : &*it;
}

void validateLabels(FieldErrors& errs, const json& labels, const std::string& path) {
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    errs.invalidEach(path, it.key(), isQualifiedName(it.key()));
    if (it->is_string())
      errs.invalidEach(path, *it, isLabelValue(it->get_ref<const std::string&>()));
  }
}

void validateObjectMeta(FieldErrors& errs, const json& obj, bool namespaced, NameRule nameRule) {
  const json* meta = errs.object(obj, "metadata", "metadata");
  const json& m = meta ? *meta : kNoObject;
  auto name = errs.string(m, "name", "metadata.name");
  auto generateName = errs.string(m, "generateName", "metadata.generateName");
  if (generateName && !generateName->empty()) {
    errs.invalidEach("metadata.generateName", *generateName, nameRule(*generateName, true));
  }
  if (!name || name->empty()) {
    // The server derives the name from generateName before validating; accept either.
    if (!generateName || generateName->empty()) {
      errs.required("metadata.name", "name or generateName is required");
    }
  } else {
    errs.invalidEach("metadata.name", *name, nameRule(*name, false));
  }
  auto ns = errs.string(m, "namespace", "metadata.namespace");
  if (namespaced) {
    if (!ns || ns->empty()) {
      errs.required("metadata.namespace");
    } else {
      errs.invalidEach("metadata.namespace", *ns, isDNS1123Label(*ns));
    }
  } else if (ns && !ns->empty()) {
    errs.forbidden("metadata.namespace", "not allowed on this type");
  }
  auto generation = errs.integer(m, "generation", "metadata.generation");
  validateNonnegative(errs, generation, "metadata.generation");
  if (const json* labels = errs.stringMap(m, "labels", "metadata.labels")) {
    validateLabels(errs, *labels, "metadata.labels");
  }
  if (const json* annotations = errs.stringMap(m, "annotations", "metadata.annotations")) {
    validateAnnotations(errs, *annotations, "metadata.annotations");
  }
  if (const json* refs = errs.array(m, "ownerReferences", "metadata.ownerReferences")) {
    validateOwnerReferences(errs, *refs, "metadata.ownerReferences");
  }
  if (const json* finalizers = errs.array(m, "finalizers", "metadata.finalizers")) {
    for (size_t i = 0; i < finalizers->size(); ++i) {
      const json& f = (*finalizers)[i];
      if (!f.is_string()) {
        errs.typeInvalid(index("metadata.finalizers", i), f, "string");
        continue;
      }
      errs.invalidEach("metadata.finalizers", f, isQualifiedName(f.get_ref<const std::string&>()));
    }
  }
  errs.string(m, "uid", "metadata.uid");
  errs.string(m, "resourceVersion", "metadata.resourceVersion");
}

void validateObjectMetaUpdate(FieldErrors& errs, const json& obj, const json& old) {
  const json* meta = member(obj, "metadata");
  const json* oldMeta = member(old, "metadata");
  const json& m = meta && meta->is_object() ? *meta : kNoObject;
  const json& o = oldMeta && oldMeta->is_object() ? *oldMeta : kNoObject;
  for (const char* field : {"name", "namespace", "uid"}) {
    const json* now = member(m, field);
    const json* before = member(o, field);
    // An update that leaves uid out keeps the stored one.
    if (std::string(field) == "uid" &&
        (!now || (now->is_string() && now->get<std::string>().empty()))) {
      continue;
    }
    validateImmutable(errs, now, before, std::string("metadata.") + field);
  }
}

void validateImmutable(FieldErrors& errs, const json* now, const json* before,
                       const std::string& path) {
  static const json kNull;
  const json& a = now ? *now : kNull;
  const json& b = before ? *before : kNull;
  if (a != b) errs.invalid(path, a, "field is immutable");
}

const json& objectAt(const json& obj, std::string_view name) {
  const json* v = member(obj, name);
  return v && v->is_object() ? *v : kNoObject;
}

bool oneOf(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::vector<std::string> stringItems(FieldErrors& errs, const json& obj, std::string_view name,
                                     const std::string& path) {
  std::vector<std::string> out;
  const json* items = errs.array(obj, name, path);
  if (!items) return out;
  for (size_t i = 0; i < items->size(); ++i) {
    const json& v = (*items)[i];
    if (!v.is_string()) {
      errs.typeInvalid(index(path, i), v, "string");
      continue;
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

void validateOptionalEnum(FieldErrors& errs, const json& obj, std::string_view name,
                          const std::string& path, const std::vector<std::string>& supported) {
  auto v = errs.string(obj, name, path);
  if (v && !oneOf(supported, *v)) errs.notSupported(path, *v, supported);
}

void validateNonnegative(FieldErrors& errs, std::optional<int64_t> value, const std::string& path) {
  if (value && *value < 0) errs.invalid(path, *value, "must be greater than or equal to 0");
}

}  // namespace minik8s::api::validation
