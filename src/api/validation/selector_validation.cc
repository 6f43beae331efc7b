// metav1.LabelSelector structure rules and matching against pod template labels.
#include <string>

#include "api/selector.h"
#include "api/validation/kinds.h"

namespace minik8s::api::validation {

bool validateLabelSelector(FieldErrors& errs, const json& selector, const std::string& path) {
  size_t before = errs.size();
  if (!selector.is_object()) {
    errs.typeInvalid(path, selector, "object");
    return false;
  }
  if (const json* labels = errs.stringMap(selector, "matchLabels", child(path, "matchLabels"))) {
    validateLabels(errs, *labels, child(path, "matchLabels"));
  }
  std::string ep = child(path, "matchExpressions");
  if (const json* exprs = errs.array(selector, "matchExpressions", ep)) {
    for (size_t i = 0; i < exprs->size(); ++i) {
      std::string p = index(ep, i);
      const json& e = (*exprs)[i];
      if (!e.is_object()) {
        errs.typeInvalid(p, e, "object");
        continue;
      }
      auto op = errs.string(e, "operator", child(p, "operator"));
      const json* values = errs.array(e, "values", child(p, "values"));
      size_t count = values ? values->size() : 0;
      if (op == "In" || op == "NotIn") {
        if (count == 0) {
          errs.required(child(p, "values"), "must be specified when `operator` is 'In' or 'NotIn'");
        }
      } else if (op == "Exists" || op == "DoesNotExist") {
        if (count > 0) {
          errs.forbidden(child(p, "values"),
                         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        }
      } else {
        errs.invalid(child(p, "operator"), op.value_or(""), "not a valid selector operator");
      }
      auto k = errs.string(e, "key", child(p, "key"));
      errs.invalidEach(child(p, "key"), k.value_or(""), isQualifiedName(k.value_or("")));
      for (size_t j = 0; j < count; ++j) {
        const json& v = (*values)[j];
        if (!v.is_string()) {
          errs.typeInvalid(index(child(p, "values"), j), v, "string");
          continue;
        }
        errs.invalidEach(index(child(p, "values"), j), v,
                         isLabelValue(v.get_ref<const std::string&>()));
      }
    }
  }
  if (errs.size() != before) return false;
  auto parsed = LabelSelector::fromJson(selector);
  if (!parsed.ok()) {
    errs.invalid(path, selector, "invalid label selector");
    return false;
  }
  return true;
}

bool selectorMatches(const json& selector, const json& labels) {
  auto parsed = LabelSelector::fromJson(selector);
  if (!parsed.ok()) return false;
  return parsed->matches(labels.is_object() ? labels : json::object());
}

}  // namespace minik8s::api::validation
