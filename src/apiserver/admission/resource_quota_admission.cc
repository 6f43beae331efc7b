#include "apiserver/admission/resource_quota_admission.h"

#include <set>

#include "api/defaults.h"
#include "api/object_meta.h"
#include "api/resource_quota.h"
#include "api/validation.h"
#include "apiserver/admission/limit_ranger.h"
#include "common/logging.h"

namespace minik8s::apiserver::admission {

namespace {

using api::member;
using api::nameOf;

std::string joinedNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// Which writes are charged: creates of anything namespaced; updates of services (type, ports)
// and claims (a larger request). Pods cannot change their resources.
bool charged(const std::string& group, const std::string& resource, const std::string& op) {
  if (op == "CREATE") return true;
  return op == "UPDATE" && group.empty() &&
         (resource == "services" || resource == "persistentvolumeclaims");
}

constexpr int kMaxConflictRetries = 10;

}  // namespace

bool ResourceQuotaAdmission::willBeStored(const api::ResourceInfo& info,
                                          const auth::AdmissionRequest& request, const json& obj) {
  // kube-apiserver validates an object before its validating plugins run (an invalid object is
  // 422, never charged); here the registry validates after admission, so the plugin asks first.
  // kube-apiserver does charge a create of an existing name (its controller's resync gives it
  // back); skipping it here is cheaper. Updates are charged as they come: the registry fills
  // fields (allocations, the stored status) only after admission.
  if (request.operation != "CREATE" || info.version != info.storageVersion) return true;
  json defaulted = obj;
  api::applyDefaults(info, defaulted);
  if (!nameOf(defaulted).empty()) {
    if (registry_.get(info, request.request.namespaceName, nameOf(defaulted)).ok()) return false;
  }
  // What the registry sets before it validates: the namespace of the URL, a generated name.
  if (!defaulted.contains("metadata") || !defaulted["metadata"].is_object()) {
    defaulted["metadata"] = json::object();
  }
  if (info.namespaced) defaulted["metadata"]["namespace"] = request.request.namespaceName;
  if (nameOf(defaulted).empty()) defaulted["metadata"]["name"] = "generated";
  return api::validate(info, defaulted, nullptr).empty();
}

QuotaCharge chargeQuotas(const std::vector<json>& quotas, const std::string& group,
                         const std::string& resource, const json& obj, const json* old,
                         std::chrono::system_clock::time_point now) {
  QuotaCharge out;
  std::vector<const json*> interesting;
  for (const auto& q : quotas) {
    if (!api::quotaScopesMatch(q, group, resource, obj)) continue;
    const api::ResourceList hard = api::parseResourceList(member(member(q, "status"), "hard"));
    std::vector<std::string> restricted;
    for (const auto& [name, value] : hard) {
      if (api::quotaTracks(group, resource, name)) restricted.push_back(name);
    }
    if (restricted.empty()) continue;
    if (group.empty() && resource == "pods") {
      if (auto missing = api::podQuotaConstraints(restricted, obj); !missing.empty()) {
        out.refusal = "failed quota: " + nameOf(q) + ": " + missing;
        return out;
      }
    }
    const json& used = member(member(q, "status"), "used");
    std::vector<std::string> unknown;
    for (const auto& r : restricted) {
      if (!used.is_object() || !used.contains(r)) unknown.push_back(r);
    }
    if (!unknown.empty()) {
      out.refusal =
          "status unknown for quota: " + nameOf(q) + ", resources: " + joinedNames(unknown);
      return out;
    }
    interesting.push_back(&q);
  }
  if (interesting.empty()) return out;

  api::ResourceList delta = api::objectUsage(group, resource, obj, now);
  if (old && member(member(*old, "metadata"), "resourceVersion").is_string()) {
    delta = api::subtractNonNegative(delta, api::objectUsage(group, resource, *old, now));
  }
  for (auto it = delta.begin(); it != delta.end();) {
    it = it->second.isZero() ? delta.erase(it) : std::next(it);
  }
  if (delta.empty()) return out;

  for (const json* q : interesting) {
    const json& status = member(*q, "status");
    const api::ResourceList hard = api::parseResourceList(member(status, "hard"));
    const api::ResourceList used = api::parseResourceList(member(status, "used"));
    const api::ResourceList requested = api::maskList(delta, api::listNames(hard));
    if (requested.empty()) continue;
    const api::ResourceList newUsage = api::addLists(used, requested);
    const api::ResourceList masked = api::maskList(newUsage, api::listNames(requested));
    std::vector<std::string> exceeded;
    if (!api::lessThanOrEqual(masked, hard, &exceeded)) {
      out.refusal = "exceeded quota: " + nameOf(*q) +
                    ", requested: " + api::prettyPrint(api::maskList(requested, exceeded)) +
                    ", used: " + api::prettyPrint(api::maskList(used, exceeded)) +
                    ", limited: " + api::prettyPrint(api::maskList(hard, exceeded));
      out.quotas.clear();
      return out;
    }
    json updated = *q;
    json& usedJson = updated["status"]["used"];
    for (const auto& [k, v] : newUsage) usedJson[k] = v.toString();
    out.quotas.push_back(std::move(updated));
  }
  return out;
}

Status ResourceQuotaAdmission::admit(auth::AdmissionRequest& request) {
  const RequestInfo& ri = request.request;
  if (!request.newObject || !ri.subresource.empty() || ri.namespaceName.empty()) {
    return Status::Ok();
  }
  if (!charged(ri.group, ri.resource, request.operation)) return Status::Ok();
  if (ri.info && !ri.info->namespaced) return Status::Ok();
  const auto* quotaInfo = registry_.scheme().byResource("", "v1", "resourcequotas");
  if (!quotaInfo) return Status::Ok();

  json obj = *request.newObject;
  // A new object has no status yet (the registry drops what a create sends).
  if (request.operation == "CREATE" && obj.is_object()) obj.erase("status");
  std::set<std::string> charged;  // quotas already written by an earlier try
  // The first try reads the lister; after a conflict or before a refusal, the registry.
  bool live = false;
  for (int attempt = 0;; ++attempt) {
    std::vector<json> quotas;
    Status read;
    if (live) {
      auto page = registry_.list(*quotaInfo, ri.namespaceName, ListOptions{});
      if (page.ok()) quotas = std::move(page->items);
      read = page.status();
    } else {
      auto cached = lister_->list(*quotaInfo, ri.namespaceName);
      if (cached.ok()) {
        for (const auto& q : *cached) quotas.push_back(*q);
      }
      read = cached.status();
    }
    if (!read.ok()) {
      return Status::Forbidden("error looking up ResourceQuotas of namespace " + ri.namespaceName +
                               ": " + read.message());
    }
    if (quotas.empty()) return Status::Ok();
    if (attempt == 0 && ri.info && !willBeStored(*ri.info, request, obj)) return Status::Ok();
    std::erase_if(quotas, [&](const json& q) { return charged.count(nameOf(q)) > 0; });
    QuotaCharge charge =
        chargeQuotas(quotas, ri.group, ri.resource, obj, request.oldObject, now_());
    if (!charge.refusal.empty()) {
      if (live) return admissionForbidden(request, charge.refusal);
      live = true;  // refuse only on what the registry holds
      continue;
    }
    if (request.dryRun) return Status::Ok();
    bool conflict = false;
    for (auto& q : charge.quotas) {
      const std::string name = nameOf(q);
      auto written = registry_.update(*quotaInfo, ri.namespaceName, name, q, "status");
      if (written.ok()) {
        charged.insert(name);
        lister_->observe(*quotaInfo, *written);
        continue;
      }
      if (written.status().code() != 409) {
        return Status::Internal("cannot update the usage of quota " + name + ": " +
                                written.status().message());
      }
      conflict = true;
      break;
    }
    if (!conflict) return Status::Ok();
    live = true;
    if (attempt + 1 >= kMaxConflictRetries) {
      return Status::Forbidden(
          "Operation cannot be fulfilled: too many conflicts updating the ResourceQuotas of "
          "namespace " +
          ri.namespaceName + ", try again");
    }
    LOG_DEBUG("ResourceQuota: conflict charging quotas of {}, retrying", ri.namespaceName);
  }
}

}  // namespace minik8s::apiserver::admission
