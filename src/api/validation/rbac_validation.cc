// rbac.authorization.k8s.io Role, ClusterRole, RoleBinding and ClusterRoleBinding, with the rules
// and messages of Kubernetes' pkg/apis/rbac/validation.
#include <string>
#include <vector>

#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";

// RBAC names are path segments: "system:node" is a valid ClusterRole name.
Messages nameIsPathSegment(std::string_view name, bool /*prefix*/) {
  return isPathSegmentName(name);
}

// Non-empty array of strings at obj[name]; returns its size (0 when absent or malformed).
size_t stringList(FieldErrors& errs, const json& obj, std::string_view name,
                  const std::string& path) {
  const json* list = errs.array(obj, name, path);
  if (!list) return 0;
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) errs.typeInvalid(index(path, i), (*list)[i], "string");
  }
  return list->size();
}

void validateRules(FieldErrors& errs, const json& obj, bool namespaced) {
  const json* rules = errs.array(obj, "rules", "rules");
  if (!rules) return;
  for (size_t i = 0; i < rules->size(); ++i) {
    const std::string p = index("rules", i);
    const json& rule = (*rules)[i];
    if (!rule.is_object()) {
      errs.typeInvalid(p, rule, "object");
      continue;
    }
    if (stringList(errs, rule, "verbs", child(p, "verbs")) == 0) {
      errs.required(child(p, "verbs"), "verbs must contain at least one value");
    }
    const size_t urls = stringList(errs, rule, "nonResourceURLs", child(p, "nonResourceURLs"));
    const size_t groups = stringList(errs, rule, "apiGroups", child(p, "apiGroups"));
    const size_t resources = stringList(errs, rule, "resources", child(p, "resources"));
    stringList(errs, rule, "resourceNames", child(p, "resourceNames"));
    if (urls > 0) {
      if (namespaced) {
        errs.invalid(child(p, "nonResourceURLs"), rule["nonResourceURLs"],
                     "namespaced rules cannot apply to non-resource URLs");
      }
      if (groups > 0 || resources > 0) {
        errs.invalid(child(p, "nonResourceURLs"), rule["nonResourceURLs"],
                     "rules cannot apply to both regular resources and non-resource URLs");
      }
      continue;
    }
    if (groups == 0) {
      errs.required(child(p, "apiGroups"), "resource rules must supply at least one api group");
    }
    if (resources == 0) {
      errs.required(child(p, "resources"), "resource rules must supply at least one resource");
    }
  }
}

void validateRoleRef(FieldErrors& errs, const json& obj, bool clusterBinding) {
  const json* ref = errs.object(obj, "roleRef", "roleRef");
  if (!ref) {
    if (absent(obj, "roleRef")) errs.required("roleRef");
    return;
  }
  auto group = errs.string(*ref, "apiGroup", "roleRef.apiGroup");
  if (group && *group != kRbacGroup) {
    errs.notSupported("roleRef.apiGroup", *group, {kRbacGroup});
  }
  auto kind = errs.string(*ref, "kind", "roleRef.kind");
  if (!kind || kind->empty()) {
    errs.required("roleRef.kind");
  } else if (clusterBinding && *kind != "ClusterRole") {
    errs.notSupported("roleRef.kind", *kind, {"ClusterRole"});
  } else if (!clusterBinding && *kind != "Role" && *kind != "ClusterRole") {
    errs.notSupported("roleRef.kind", *kind, {"Role", "ClusterRole"});
  }
  auto name = errs.string(*ref, "name", "roleRef.name");
  if (!name || name->empty()) {
    errs.required("roleRef.name");
  } else {
    errs.invalidEach("roleRef.name", *name, isPathSegmentName(*name));
  }
}

void validateSubjects(FieldErrors& errs, const json& obj, bool clusterBinding) {
  const json* subjects = errs.array(obj, "subjects", "subjects");
  if (!subjects) return;
  for (size_t i = 0; i < subjects->size(); ++i) {
    const std::string p = index("subjects", i);
    const json& s = (*subjects)[i];
    if (!s.is_object()) {
      errs.typeInvalid(p, s, "object");
      continue;
    }
    auto name = errs.string(s, "name", child(p, "name"));
    if (!name || name->empty()) errs.required(child(p, "name"));
    auto group = errs.string(s, "apiGroup", child(p, "apiGroup"));
    auto ns = errs.string(s, "namespace", child(p, "namespace"));
    auto kind = errs.string(s, "kind", child(p, "kind"));
    if (!kind || kind->empty()) {
      errs.required(child(p, "kind"));
      continue;
    }
    if (*kind == "ServiceAccount") {
      if (group && !group->empty()) errs.notSupported(child(p, "apiGroup"), *group, {""});
      if (name && !name->empty()) {
        errs.invalidEach(child(p, "name"), *name, isDNS1123Subdomain(*name));
      }
      if (clusterBinding && (!ns || ns->empty())) errs.required(child(p, "namespace"));
    } else if (*kind == "User" || *kind == "Group") {
      if (group && *group != kRbacGroup) {
        errs.notSupported(child(p, "apiGroup"), *group, {kRbacGroup});
      }
    } else {
      errs.notSupported(child(p, "kind"), *kind, {"ServiceAccount", "User", "Group"});
    }
  }
}

void validateBinding(FieldErrors& errs, const json& obj, const json* old, bool clusterBinding) {
  validateObjectMeta(errs, obj, !clusterBinding, nameIsPathSegment);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  validateRoleRef(errs, obj, clusterBinding);
  validateSubjects(errs, obj, clusterBinding);
  if (old) {
    const json* now = member(obj, "roleRef");
    const json* before = member(*old, "roleRef");
    if (now && before && *now != *before) errs.invalid("roleRef", *now, "cannot change roleRef");
  }
}

}  // namespace

void validateRole(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsPathSegment);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  validateRules(errs, obj, true);
}

void validateClusterRole(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsPathSegment);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  validateRules(errs, obj, false);
  if (const json* rule = errs.object(obj, "aggregationRule", "aggregationRule")) {
    const json* selectors =
        errs.array(*rule, "clusterRoleSelectors", "aggregationRule.clusterRoleSelectors");
    if (!selectors || selectors->empty()) {
      errs.required("aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil");
    } else {
      for (size_t i = 0; i < selectors->size(); ++i) {
        validateLabelSelector(errs, (*selectors)[i],
                              index("aggregationRule.clusterRoleSelectors", i));
      }
    }
  }
}

void validateRoleBinding(FieldErrors& errs, const json& obj, const json* old) {
  validateBinding(errs, obj, old, false);
}

void validateClusterRoleBinding(FieldErrors& errs, const json& obj, const json* old) {
  validateBinding(errs, obj, old, true);
}

}  // namespace minik8s::api::validation
