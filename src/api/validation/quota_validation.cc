// core/v1 ResourceQuota and LimitRange, as Kubernetes' ValidateResourceQuota and
// ValidateLimitRange word them.
#include <map>
#include <set>

#include "api/quantity.h"
#include "api/validation/kinds.h"

namespace minik8s::api::validation {

namespace {

const std::set<std::string> kStandardQuotaResources = {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
};

// Object counts and hugepages count whole objects or pages: their quantities are integers.
bool isIntegerQuotaResource(const std::string& name) {
  return name == "pods" || name == "services" || name == "replicationcontrollers" ||
         name == "resourcequotas" || name == "secrets" || name == "configmaps" ||
         name == "persistentvolumeclaims" || name == "services.nodeports" ||
         name == "services.loadbalancers" || name.rfind("count/", 0) == 0;
}

bool isStandardQuotaResource(const std::string& name) {
  return kStandardQuotaResources.count(name) > 0 || name.rfind("hugepages-", 0) == 0 ||
         name.rfind("requests.hugepages-", 0) == 0;
}

// A map of resource name -> quantity at `path` (spec.hard, status.used, a LimitRange's min ...).
// `quota`: names must be quota resource names, else container resource names or qualified.
std::map<std::string, Quantity> resourceList(FieldErrors& errs, const json& obj,
                                             std::string_view name, const std::string& path,
                                             bool quota) {
  std::map<std::string, Quantity> out;
  const json* list = errs.object(obj, name, path);
  if (!list) return out;
  for (auto it = list->begin(); it != list->end(); ++it) {
    const std::string p = key(path, it.key());
    const std::string& k = it.key();
    if (k.find('/') != std::string::npos) {
      // count/deployments.apps, example.com/gpu: qualified names.
      const std::string checked = k.rfind("count/", 0) == 0 ? k.substr(6) : k;
      if (auto msgs = isQualifiedName(checked); !msgs.empty() && k.rfind("count/", 0) != 0) {
        errs.invalidEach(p, k, msgs);
        continue;
      }
    } else if (quota && !isStandardQuotaResource(k)) {
      errs.invalid(p, k, "must be a standard resource for quota");
      continue;
    }
    auto q = Quantity::fromJson(*it);
    if (!q.ok()) {
      errs.invalid(p, *it, q.status().message());
      continue;
    }
    if (q->sign() < 0) {
      errs.invalid(p, q->toString(), "must be greater than or equal to 0");
      continue;
    }
    if (quota && isIntegerQuotaResource(k) && q->milliValue() % 1000 != 0) {
      errs.invalid(p, q->toString(), "must be an integer");
      continue;
    }
    out.emplace(k, *q);
  }
  return out;
}

const std::vector<std::string> kQuotaScopes = {"Terminating",   "NotTerminating",
                                               "BestEffort",    "NotBestEffort",
                                               "PriorityClass", "CrossNamespacePodAffinity"};

}  // namespace

void validateResourceQuota(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  if (const json* spec = errs.object(obj, "spec", "spec")) {
    resourceList(errs, *spec, "hard", "spec.hard", true);
    auto scopes = stringItems(errs, *spec, "scopes", "spec.scopes");
    for (size_t i = 0; i < scopes.size(); ++i) {
      if (!oneOf(kQuotaScopes, scopes[i])) {
        errs.notSupported(index("spec.scopes", i), scopes[i], kQuotaScopes);
      }
    }
    if (const json* sel = errs.object(*spec, "scopeSelector", "spec.scopeSelector")) {
      const std::string mp = "spec.scopeSelector.matchExpressions";
      if (const json* exprs = errs.array(*sel, "matchExpressions", mp)) {
        for (size_t i = 0; i < exprs->size(); ++i) {
          const json& e = (*exprs)[i];
          const std::string p = index(mp, i);
          auto scope = errs.string(e, "scopeName", child(p, "scopeName"));
          if (!scope || scope->empty()) {
            errs.required(child(p, "scopeName"));
          } else if (!oneOf(kQuotaScopes, *scope)) {
            errs.notSupported(child(p, "scopeName"), *scope, kQuotaScopes);
          }
          validateOptionalEnum(errs, e, "operator", child(p, "operator"),
                               {"In", "NotIn", "Exists", "DoesNotExist"});
          if (absent(e, "operator")) errs.required(child(p, "operator"));
        }
      }
    }
  }
  if (const json* status = errs.object(obj, "status", "status")) {
    resourceList(errs, *status, "hard", "status.hard", true);
    resourceList(errs, *status, "used", "status.used", true);
  }
}

void validateLimitRange(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  const json* spec = errs.object(obj, "spec", "spec");
  if (!spec) return;
  const json* limits = errs.array(*spec, "limits", "spec.limits");
  if (!limits) return;
  std::set<std::string> types;
  for (size_t i = 0; i < limits->size(); ++i) {
    const json& item = (*limits)[i];
    const std::string p = index("spec.limits", i);
    if (!item.is_object()) {
      errs.typeInvalid(p, item, "object");
      continue;
    }
    auto type = errs.string(item, "type", child(p, "type"));
    if (!type || type->empty()) {
      errs.required(child(p, "type"));
    } else if (!types.insert(*type).second) {
      errs.duplicate(child(p, "type"), *type);
    }
    auto max = resourceList(errs, item, "max", child(p, "max"), false);
    auto min = resourceList(errs, item, "min", child(p, "min"), false);
    auto dflt = resourceList(errs, item, "default", child(p, "default"), false);
    auto dfltReq = resourceList(errs, item, "defaultRequest", child(p, "defaultRequest"), false);
    auto ratio =
        resourceList(errs, item, "maxLimitRequestRatio", child(p, "maxLimitRequestRatio"), false);
    if (type && *type == "Pod") {
      if (!dflt.empty())
        errs.forbidden(child(p, "default"), "may not be specified when `type` is 'Pod'");
      if (!dfltReq.empty()) {
        errs.forbidden(child(p, "defaultRequest"), "may not be specified when `type` is 'Pod'");
      }
    }
    if (type && *type == "PersistentVolumeClaim") {
      if (min.count("storage") == 0 && max.count("storage") == 0) {
        errs.required(child(p, "limits"),
                      "either minimum or maximum storage value is required, "
                      "but neither was provided");
      }
    }
    std::set<std::string> keys;
    for (const auto* m : {&max, &min, &dflt, &dfltReq}) {
      for (const auto& [k, v] : *m) keys.insert(k);
    }
    for (const auto& k : keys) {
      const Quantity* mx = max.count(k) ? &max.at(k) : nullptr;
      const Quantity* mn = min.count(k) ? &min.at(k) : nullptr;
      const Quantity* d = dflt.count(k) ? &dflt.at(k) : nullptr;
      const Quantity* dr = dfltReq.count(k) ? &dfltReq.at(k) : nullptr;
      if (mn && mx && mn->compare(*mx) > 0) {
        errs.invalid(
            key(child(p, "min"), k), mn->toString(),
            "min value " + mn->toString() + " is greater than max value " + mx->toString());
      }
      if (dr && mn && mn->compare(*dr) > 0) {
        errs.invalid(key(child(p, "defaultRequest"), k), dr->toString(),
                     "min value " + mn->toString() + " is greater than default request value " +
                         dr->toString());
      }
      if (dr && mx && dr->compare(*mx) > 0) {
        errs.invalid(key(child(p, "defaultRequest"), k), dr->toString(),
                     "default request value " + dr->toString() + " is greater than max value " +
                         mx->toString());
      }
      if (dr && d && dr->compare(*d) > 0) {
        errs.invalid(key(child(p, "defaultRequest"), k), dr->toString(),
                     "default request value " + dr->toString() +
                         " is greater than default limit value " + d->toString());
      }
      if (d && mn && mn->compare(*d) > 0) {
        errs.invalid(
            key(child(p, "default"), k), d->toString(),
            "min value " + mn->toString() + " is greater than default value " + d->toString());
      }
      if (d && mx && d->compare(*mx) > 0) {
        errs.invalid(
            key(child(p, "default"), k), d->toString(),
            "default value " + d->toString() + " is greater than max value " + mx->toString());
      }
    }
    for (const auto& [k, r] : ratio) {
      if (r.compare(Quantity::fromValue(1)) < 0) {
        errs.invalid(key(child(p, "maxLimitRequestRatio"), k), r.toString(),
                     "ratio " + r.toString() + " is less than 1");
      }
    }
  }
}

}  // namespace minik8s::api::validation
