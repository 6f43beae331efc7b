// apps/v1 Deployment, ReplicaSet, DaemonSet, StatefulSet and ControllerRevision.
#include <set>
#include <string>

#include "api/validation/kinds.h"
#include "common/json_pointer.h"

namespace minik8s::api::validation {
namespace {

bool isEmptySelector(const json& selector) {
  const json* labels = member(selector, "matchLabels");
  const json* exprs = member(selector, "matchExpressions");
  return (!labels || labels->empty() || !labels->is_object()) &&
         (!exprs || exprs->empty() || !exprs->is_array());
}

// Template labels of `spec` (null when absent).
json templateLabels(const json& spec) {
  const json* tmpl = member(spec, "template");
  const json* meta = tmpl ? member(*tmpl, "metadata") : nullptr;
  const json* labels = meta ? member(*meta, "labels") : nullptr;
  return labels ? *labels : json();
}

// The selector/template pair of a Deployment, ReplicaSet or DaemonSet (`kind` in lower case).
void validateSelectorAndTemplate(FieldErrors& errs, const json& spec,
                                 const std::string& kind = "deployment") {
  const json* selector = member(spec, "selector");
  bool selectorOk = false;
  if (!selector || selector->is_null()) {
    errs.required("spec.selector");
  } else if (validateLabelSelector(errs, *selector, "spec.selector")) {
    selectorOk = true;
    if (isEmptySelector(*selector)) {
      errs.invalid("spec.selector", *selector, "empty selector is invalid for " + kind);
      selectorOk = false;
    }
  }
  const json* tmpl = errs.object(spec, "template", "spec.template");
  json labels = templateLabels(spec);
  // A missing selector selects nothing, so it never matches either (as Kubernetes reports).
  bool absentSelector = !selector || selector->is_null();
  if ((selectorOk && !selectorMatches(*selector, labels)) || absentSelector) {
    errs.invalid("spec.template.metadata.labels", labels,
                 "`selector` does not match template `labels`");
  }
  validatePodTemplate(errs, tmpl ? *tmpl : kNoObject, "spec.template");
  const json* podSpec = tmpl ? member(*tmpl, "spec") : nullptr;
  const json* restart = podSpec ? member(*podSpec, "restartPolicy") : nullptr;
  if (restart && restart->is_string() && *restart != "Always" && *restart != "") {
    errs.notSupported("spec.template.spec.restartPolicy", *restart, {"Always"});
  }
  if (podSpec && member(*podSpec, "activeDeadlineSeconds") &&
      !(*podSpec)["activeDeadlineSeconds"].is_null()) {
    errs.forbidden("spec.template.spec.activeDeadlineSeconds",
                   "activeDeadlineSeconds in ReplicaSet is not Supported");
  }
}

// An int-or-percent (maxSurge, maxUnavailable); returns its integer or percent value.
std::optional<int64_t> validateIntOrPercent(FieldErrors& errs, const json& value,
                                            const std::string& path, bool& isPercent) {
  isPercent = false;
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    validateNonnegative(errs, v, path);
    return v;
  }
  const std::string& s = value.get_ref<const std::string&>();
  bool ok = s.size() >= 2 && s.back() == '%' && s.size() < 12;
  for (size_t i = 0; ok && i + 1 < s.size(); ++i) ok = s[i] >= '0' && s[i] <= '9';
  if (!ok) {
    errs.invalid(path, value,
                 "a valid percent string must be a numeric string followed by an ending '%' "
                 "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')");
    return std::nullopt;
  }
  isPercent = true;
  return std::stoll(s.substr(0, s.size() - 1));
}

void validateStrategy(FieldErrors& errs, const json& spec) {
  const json* strategy = errs.object(spec, "strategy", "spec.strategy");
  const json& st = strategy ? *strategy : kNoObject;
  auto type = errs.string(st, "type", "spec.strategy.type");
  const json* rolling = errs.object(st, "rollingUpdate", "spec.strategy.rollingUpdate");
  if (type == "Recreate") {
    if (rolling) {
      errs.forbidden("spec.strategy.rollingUpdate",
                     "may not be specified when strategy `type` is 'Recreate'");
    }
  } else if (type == "RollingUpdate") {
    if (!rolling) {
      errs.required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil");
      return;
    }
    std::string p = "spec.strategy.rollingUpdate";
    const json* unavailable =
        errs.intOrString(*rolling, "maxUnavailable", child(p, "maxUnavailable"));
    const json* surge = errs.intOrString(*rolling, "maxSurge", child(p, "maxSurge"));
    bool unavailablePercent = false, surgePercent = false;
    std::optional<int64_t> u, s;
    if (unavailable)
      u = validateIntOrPercent(errs, *unavailable, child(p, "maxUnavailable"), unavailablePercent);
    if (surge) s = validateIntOrPercent(errs, *surge, child(p, "maxSurge"), surgePercent);
    if (u.value_or(0) == 0 && s.value_or(0) == 0) {
      errs.invalid(child(p, "maxUnavailable"), unavailable ? *unavailable : json(),
                   "may not be 0 when `maxSurge` is 0");
    }
    if (u && unavailablePercent && *u > 100) {
      errs.invalid(child(p, "maxUnavailable"), *unavailable, "must not be greater than 100%");
    }
  } else {
    errs.notSupported("spec.strategy.type", type.value_or(""), {"Recreate", "RollingUpdate"});
  }
}

void validateDaemonSetStrategy(FieldErrors& errs, const json& spec) {
  const std::string p = "spec.updateStrategy";
  const json* strategy = errs.object(spec, "updateStrategy", p);
  const json& st = strategy ? *strategy : kNoObject;
  auto type = errs.string(st, "type", child(p, "type"));
  const json* rolling = errs.object(st, "rollingUpdate", child(p, "rollingUpdate"));
  if (type == "OnDelete") return;
  if (type != "RollingUpdate") {
    errs.notSupported(child(p, "type"), type.value_or(""), {"OnDelete", "RollingUpdate"});
    return;
  }
  if (!rolling) {
    errs.required(child(p, "rollingUpdate"), "this should be defaulted and never be nil");
    return;
  }
  const std::string r = child(p, "rollingUpdate");
  const json* unavailable =
      errs.intOrString(*rolling, "maxUnavailable", child(r, "maxUnavailable"));
  const json* surge = errs.intOrString(*rolling, "maxSurge", child(r, "maxSurge"));
  bool unavailablePercent = false, surgePercent = false;
  std::optional<int64_t> u, s;
  if (unavailable)
    u = validateIntOrPercent(errs, *unavailable, child(r, "maxUnavailable"), unavailablePercent);
  if (surge) s = validateIntOrPercent(errs, *surge, child(r, "maxSurge"), surgePercent);
  if (u.value_or(0) == 0 && s.value_or(0) == 0) {
    errs.invalid(child(r, "maxUnavailable"), unavailable ? *unavailable : json(),
                 "may not be 0 when `maxSurge` is 0");
  }
  if (u && unavailablePercent && *u > 100) {
    errs.invalid(child(r, "maxUnavailable"), *unavailable, "must not be greater than 100%");
  }
  if (s && surgePercent && *s > 100) {
    errs.invalid(child(r, "maxSurge"), *surge, "must not be greater than 100%");
  }
}

void validateReplicasAndMinReady(FieldErrors& errs, const json& spec) {
  validateNonnegative(errs, errs.integer(spec, "replicas", "spec.replicas"), "spec.replicas");
  validateNonnegative(errs, errs.integer(spec, "minReadySeconds", "spec.minReadySeconds"),
                      "spec.minReadySeconds");
}

void validateSelectorUpdate(FieldErrors& errs, const json& obj, const json& old) {
  const json* spec = member(obj, "spec");
  const json* oldSpec = member(old, "spec");
  validateImmutable(errs, spec ? member(*spec, "selector") : nullptr,
                    oldSpec ? member(*oldSpec, "selector") : nullptr, "spec.selector");
}

}  // namespace

void validateDeployment(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateReplicasAndMinReady(errs, spec);
  validateSelectorAndTemplate(errs, spec);
  validateStrategy(errs, spec);
  auto history = errs.integer(spec, "revisionHistoryLimit", "spec.revisionHistoryLimit");
  validateNonnegative(errs, history, "spec.revisionHistoryLimit");
  auto deadline = errs.integer(spec, "progressDeadlineSeconds", "spec.progressDeadlineSeconds");
  if (deadline) {
    validateNonnegative(errs, deadline, "spec.progressDeadlineSeconds");
    auto minReady = errs.integer(spec, "minReadySeconds", "spec.minReadySeconds");
    if (*deadline <= minReady.value_or(0)) {
      errs.invalid("spec.progressDeadlineSeconds", *deadline,
                   "must be greater than minReadySeconds");
    }
  }
  errs.boolean(spec, "paused", "spec.paused");
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateSelectorUpdate(errs, obj, *old);
  }
}

void validateReplicaSet(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateReplicasAndMinReady(errs, spec);
  validateSelectorAndTemplate(errs, spec);
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateSelectorUpdate(errs, obj, *old);
  }
}

void validateDaemonSet(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateSelectorAndTemplate(errs, spec, "daemonset");
  validateDaemonSetStrategy(errs, spec);
  for (const char* f : {"minReadySeconds", "revisionHistoryLimit"}) {
    const std::string p = child("spec", f);
    validateNonnegative(errs, errs.integer(spec, f, p), p);
  }
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateSelectorUpdate(errs, obj, *old);
  }
}

void validateStatefulSet(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateReplicasAndMinReady(errs, spec);
  // Containers may mount the claims of volumeClaimTemplates: validate the template as the pods
  // will be, with a volume per claim template.
  json withClaims = spec;
  const json* claimList = member(spec, "volumeClaimTemplates");
  if (claimList && claimList->is_array() && withClaims.is_object()) {
    json* podSpec = nullptr;
    if (withClaims.contains("template") && withClaims["template"].is_object() &&
        withClaims["template"].contains("spec") && withClaims["template"]["spec"].is_object()) {
      podSpec = &withClaims["template"]["spec"];
    }
    for (const auto& claim : *claimList) {
      const json name = valueAt(claim, "/metadata/name", json());
      if (!podSpec || !name.is_string()) continue;
      json& volumes = (*podSpec)["volumes"];
      if (!volumes.is_array()) volumes = json::array();
      bool present = false;
      for (const auto& v : volumes) present |= v.is_object() && v.value("name", json()) == name;
      if (!present) {
        volumes.push_back(
            {{"name", name},
             {"persistentVolumeClaim", {{"claimName", name.get<std::string>() + "-pod"}}}});
      }
    }
  }
  validateSelectorAndTemplate(errs, withClaims, "statefulset");
  auto policy = errs.string(spec, "podManagementPolicy", "spec.podManagementPolicy");
  if (policy && *policy != "OrderedReady" && *policy != "Parallel") {
    errs.notSupported("spec.podManagementPolicy", *policy, {"OrderedReady", "Parallel"});
  }
  errs.string(spec, "serviceName", "spec.serviceName");
  validateNonnegative(errs, errs.integer(spec, "revisionHistoryLimit", "spec.revisionHistoryLimit"),
                      "spec.revisionHistoryLimit");
  const std::string p = "spec.updateStrategy";
  const json* strategy = errs.object(spec, "updateStrategy", p);
  const json& st = strategy ? *strategy : kNoObject;
  auto type = errs.string(st, "type", child(p, "type"));
  const json* rolling = errs.object(st, "rollingUpdate", child(p, "rollingUpdate"));
  if (type == "OnDelete") {
    if (rolling) {
      errs.forbidden(child(p, "rollingUpdate"), "only allowed for updateStrategy 'RollingUpdate'");
    }
  } else if (type == "RollingUpdate") {
    if (rolling) {
      const std::string r = child(p, "rollingUpdate");
      validateNonnegative(errs, errs.integer(*rolling, "partition", child(r, "partition")),
                          child(r, "partition"));
    }
  } else {
    errs.notSupported(child(p, "type"), type.value_or(""), {"OnDelete", "RollingUpdate"});
  }
  const json* claims = errs.array(spec, "volumeClaimTemplates", "spec.volumeClaimTemplates");
  if (claims) {
    std::set<std::string> names;
    for (size_t i = 0; i < claims->size(); ++i) {
      const std::string at = "spec.volumeClaimTemplates[" + std::to_string(i) + "]";
      const json& claim = (*claims)[i];
      const json* meta = member(claim, "metadata");
      const json* name = meta ? member(*meta, "name") : nullptr;
      if (!name || !name->is_string() || name->get<std::string>().empty()) {
        errs.required(at + ".metadata.name");
      } else if (!names.insert(name->get<std::string>()).second) {
        errs.duplicate(at + ".metadata.name", *name);
      }
      const json* claimSpec = member(claim, "spec");
      const json* modes = claimSpec ? member(*claimSpec, "accessModes") : nullptr;
      if (!modes || !modes->is_array() || modes->empty()) {
        errs.required(at + ".spec.accessModes", "at least 1 access mode is required");
      }
      const json storage =
          claimSpec ? valueAt(*claimSpec, "/resources/requests/storage", json()) : json();
      if (storage.is_null()) errs.required(at + ".spec.resources[storage]");
    }
  }
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    // Only these may change, as kube-apiserver enforces.
    json a = spec, b = old->value("spec", json::object());
    for (const char* f : {"replicas", "ordinals", "template", "updateStrategy",
                          "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}) {
      if (a.is_object()) a.erase(f);
      if (b.is_object()) b.erase(f);
    }
    if (a != b) {
      errs.forbidden("spec",
                     "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                     "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                     "'minReadySeconds' are forbidden");
    }
  }
}

void validateControllerRevision(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  auto revision = errs.integer(obj, "revision", "revision");
  if (!revision) {
    if (absent(obj, "revision")) errs.required("revision");
  } else {
    validateNonnegative(errs, revision, "revision");
  }
  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    validateImmutable(errs, member(obj, "data"), member(*old, "data"), "data");
  }
}

}  // namespace minik8s::api::validation
