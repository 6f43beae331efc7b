// metav1.LabelSelector structure rules and matching against pod template labels; core/v1
// NodeSelector rules (node affinity of PersistentVolumes).
#include <string>
#include <vector>

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

namespace {

void validateNodeSelectorRequirement(FieldErrors& errs, const json& req, const std::string& path,
                                     bool field) {
  if (!req.is_object()) {
    errs.typeInvalid(path, req, "object");
    return;
  }
  auto op = errs.string(req, "operator", child(path, "operator"));
  std::vector<std::string> values = stringItems(errs, req, "values", child(path, "values"));
  auto key = errs.string(req, "key", child(path, "key"));
  std::string k = key.value_or("");
  if (field) {
    if (op == "In" || op == "NotIn") {
      if (values.size() != 1) {
        errs.required(child(path, "values"),
                      "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                      "selector");
      }
    } else {
      errs.invalid(child(path, "operator"), op.value_or(""), "not a valid selector operator");
    }
    if (k != "metadata.name") {
      errs.invalid(child(path, "key"), k, "not a valid field selector key");
    } else {
      for (size_t i = 0; i < values.size(); ++i) {
        errs.invalidEach(index(child(path, "values"), i), values[i], isDNS1123Subdomain(values[i]));
      }
    }
    return;
  }
  if (op == "In" || op == "NotIn") {
    if (values.empty()) {
      errs.required(child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'");
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!values.empty()) {
      errs.forbidden(child(path, "values"),
                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    }
  } else if (op == "Gt" || op == "Lt") {
    if (values.size() != 1) {
      errs.required(child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'");
    }
  } else {
    errs.invalid(child(path, "operator"), op.value_or(""), "not a valid selector operator");
  }
  errs.invalidEach(child(path, "key"), k, isQualifiedName(k));
  for (size_t i = 0; i < values.size(); ++i) {
    errs.invalidEach(index(child(path, "values"), i), values[i], isLabelValue(values[i]));
  }
}

}  // namespace

void validateNodeSelector(FieldErrors& errs, const json& selector, const std::string& path) {
  const std::string termsPath = child(path, "nodeSelectorTerms");
  const json* terms = errs.array(selector, "nodeSelectorTerms", termsPath);
  if (!terms || terms->empty()) {
    if (terms || absent(selector, "nodeSelectorTerms")) {
      errs.required(termsPath, "must have at least one node selector term");
    }
    return;
  }
  for (size_t i = 0; i < terms->size(); ++i) {
    const std::string p = index(termsPath, i);
    const json& term = (*terms)[i];
    if (!term.is_object()) {
      errs.typeInvalid(p, term, "object");
      continue;
    }
    for (const char* list : {"matchExpressions", "matchFields"}) {
      const json* reqs = errs.array(term, list, child(p, list));
      for (size_t j = 0; reqs && j < reqs->size(); ++j) {
        validateNodeSelectorRequirement(errs, (*reqs)[j], index(child(p, list), j),
                                        std::string_view(list) == "matchFields");
      }
    }
  }
}

}  // namespace minik8s::api::validation
