// admissionregistration.k8s.io/v1 Mutating- and ValidatingWebhookConfiguration, as Kubernetes
// validates them: webhook names, client configs, rules, versions, side effects and policies.
#include <set>

#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

const std::vector<std::string> kOperations = {"*", "CONNECT", "CREATE", "DELETE", "UPDATE"};

void validateStringList(FieldErrors& errs, const json& obj, const char* name,
                        const std::string& path, bool required) {
  const json* list = errs.array(obj, name, child(path, name));
  if (!list) {
    if (required && (!obj.is_object() || !obj.contains(name))) errs.required(child(path, name));
    return;
  }
  if (required && list->empty()) errs.required(child(path, name));
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string())
      errs.typeInvalid(index(child(path, name), i), (*list)[i], "string");
  }
}

void validateRule(FieldErrors& errs, const json& rule, const std::string& path) {
  if (!rule.is_object()) {
    errs.typeInvalid(path, rule, "object");
    return;
  }
  validateStringList(errs, rule, "operations", path, true);
  if (const json* ops = errs.array(rule, "operations", child(path, "operations"))) {
    for (size_t i = 0; i < ops->size(); ++i) {
      const json& op = (*ops)[i];
      if (op.is_string() && std::find(kOperations.begin(), kOperations.end(),
                                      op.get<std::string>()) == kOperations.end()) {
        errs.notSupported(index(child(path, "operations"), i), op, kOperations);
      }
    }
  }
  validateStringList(errs, rule, "apiGroups", path, true);
  validateStringList(errs, rule, "apiVersions", path, true);
  validateStringList(errs, rule, "resources", path, true);
  if (auto scope = errs.string(rule, "scope", child(path, "scope"))) {
    if (*scope != "*" && *scope != "Cluster" && *scope != "Namespaced") {
      errs.notSupported(child(path, "scope"), *scope, {"*", "Cluster", "Namespaced"});
    }
  }
}

void validateWebhook(FieldErrors& errs, const json& w, const std::string& path, bool mutating) {
  auto name = errs.string(w, "name", child(path, "name"));
  if (!name || name->empty()) {
    errs.required(child(path, "name"));
  } else {
    errs.invalidEach(child(path, "name"), *name, isDNS1123Subdomain(*name));
    if (std::count(name->begin(), name->end(), '.') < 2) {
      errs.invalid(child(path, "name"), *name,
                   "should be a domain with at least three segments separated by dots");
    }
  }
  const std::string cc = child(path, "clientConfig");
  if (const json* config = errs.object(w, "clientConfig", cc)) {
    auto url = errs.string(*config, "url", child(cc, "url"));
    const json* service = errs.object(*config, "service", child(cc, "service"));
    if (url && service) {
      errs.invalid(cc, *config, "exactly one of url or service is required");
    } else if (!url && !service) {
      errs.required(cc, "exactly one of url or service is required");
    } else if (url) {
      if (url->rfind("https://", 0) != 0) {
        errs.invalid(child(cc, "url"), *url, "'https' is the only allowed URL scheme");
      }
    } else {
      auto svcName = errs.string(*service, "name", child(child(cc, "service"), "name"));
      if (!svcName || svcName->empty()) errs.required(child(child(cc, "service"), "name"));
      auto svcNs = errs.string(*service, "namespace", child(child(cc, "service"), "namespace"));
      if (!svcNs || svcNs->empty()) errs.required(child(child(cc, "service"), "namespace"));
    }
    errs.string(*config, "caBundle", child(cc, "caBundle"));
  } else if (!w.is_object() || !w.contains("clientConfig")) {
    errs.required(cc);
  }
  if (const json* rules = errs.array(w, "rules", child(path, "rules"))) {
    for (size_t i = 0; i < rules->size(); ++i) {
      validateRule(errs, (*rules)[i], index(child(path, "rules"), i));
    }
  }
  const std::string versionsPath = child(path, "admissionReviewVersions");
  const json* versions = errs.array(w, "admissionReviewVersions", versionsPath);
  bool knownVersion = false;
  if (versions) {
    for (const auto& v : *versions) knownVersion = knownVersion || v == "v1" || v == "v1beta1";
  }
  if (!versions || versions->empty()) {
    errs.required(versionsPath, "must specify one of v1, v1beta1");
  } else if (!knownVersion) {
    errs.invalid(versionsPath, *versions, "must include at least one of v1, v1beta1");
  }
  auto effects = errs.string(w, "sideEffects", child(path, "sideEffects"));
  if (!effects) {
    errs.notSupported(child(path, "sideEffects"), "", {"None", "NoneOnDryRun"});
  } else if (*effects != "None" && *effects != "NoneOnDryRun") {
    errs.notSupported(child(path, "sideEffects"), *effects, {"None", "NoneOnDryRun"});
  }
  if (auto policy = errs.string(w, "failurePolicy", child(path, "failurePolicy"))) {
    if (*policy != "Ignore" && *policy != "Fail") {
      errs.notSupported(child(path, "failurePolicy"), *policy, {"Fail", "Ignore"});
    }
  }
  if (auto match = errs.string(w, "matchPolicy", child(path, "matchPolicy"))) {
    if (*match != "Exact" && *match != "Equivalent") {
      errs.notSupported(child(path, "matchPolicy"), *match, {"Equivalent", "Exact"});
    }
  }
  if (auto timeout = errs.integer(w, "timeoutSeconds", child(path, "timeoutSeconds"))) {
    if (*timeout < 1 || *timeout > 30) {
      errs.invalid(child(path, "timeoutSeconds"), *timeout,
                   "the timeout value must be between 1 and 30 seconds");
    }
  }
  for (const char* sel : {"namespaceSelector", "objectSelector"}) {
    if (const json* s = errs.object(w, sel, child(path, sel))) {
      validateLabelSelector(errs, *s, child(path, sel));
    }
  }
  if (mutating) {
    if (auto re = errs.string(w, "reinvocationPolicy", child(path, "reinvocationPolicy"))) {
      if (*re != "Never" && *re != "IfNeeded") {
        errs.notSupported(child(path, "reinvocationPolicy"), *re, {"IfNeeded", "Never"});
      }
    }
  }
}

void validateWebhookConfiguration(FieldErrors& errs, const json& obj, const json* old,
                                  bool mutating) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  const json* webhooks = errs.array(obj, "webhooks", "webhooks");
  if (!webhooks) return;
  std::set<std::string> names;
  for (size_t i = 0; i < webhooks->size(); ++i) {
    const json& w = (*webhooks)[i];
    const std::string path = index("webhooks", i);
    if (!w.is_object()) {
      errs.typeInvalid(path, w, "object");
      continue;
    }
    validateWebhook(errs, w, path, mutating);
    const std::string name = w.value("name", "");
    if (!name.empty() && !names.insert(name).second) errs.duplicate(child(path, "name"), name);
  }
}

}  // namespace

void validateMutatingWebhookConfiguration(FieldErrors& errs, const json& obj, const json* old) {
  validateWebhookConfiguration(errs, obj, old, true);
}

void validateValidatingWebhookConfiguration(FieldErrors& errs, const json& obj, const json* old) {
  validateWebhookConfiguration(errs, obj, old, false);
}

}  // namespace minik8s::api::validation
