// ResourceQuota: kube-apiserver's admission plugin for the namespace's core/v1 ResourceQuotas.
//
// On creates (and on updates of services and claims, which can grow) it computes what the
// object adds (api/resource_quota.h) and, for every quota of the namespace whose scopes select
// the object and whose status.hard names something the object is charged for, checks
// status.used + the addition against status.hard. A refusal is 403 in Kubernetes' words:
//
//   pods "x" is forbidden: exceeded quota: compute, requested: requests.cpu=500m,
//   used: requests.cpu=1, limited: requests.cpu=1200m
//   pods "x" is forbidden: failed quota: compute: must specify limits.cpu for: c
//   pods "x" is forbidden: status unknown for quota: compute, resources: requests.cpu
//
// What it admits is charged at once: the new status.used of each quota is written (status
// subresource) with the quota's resourceVersion, so two writes racing for the last unit cannot
// both pass; on a conflict the quotas are read again and the check repeats. The resourcequota
// controller (controllers/resourcequota) recomputes status.used from the objects, which gives
// back what deletes and refused writes left charged. As in Kubernetes, a quota the controller has
// not yet seen (no status.hard) limits nothing. Dry runs are checked but charge nothing, and so
// are creates the registry will refuse (invalid objects, names that exist).
// The quotas are read through the AdmissionLister (admission_lister.h); what it holds may be a
// moment old, so a charge that conflicts and a refusal both read the quotas again from the
// registry: a stale copy never costs a unit nor refuses a write. Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

// The outcome of holding one object against a namespace's quotas.
struct QuotaCharge {
  std::string refusal;       // "" when admitted, else the message after `is forbidden: `
  std::vector<json> quotas;  // the quotas whose status.used grows, with their new status.used
};

// Kubernetes' quota check of `obj` (`old`: the stored object of an update, or null) of
// `group`/`resource` against `quotas`. Pure.
QuotaCharge chargeQuotas(const std::vector<json>& quotas, const std::string& group,
                         const std::string& resource, const json& obj, const json* old,
                         std::chrono::system_clock::time_point now);

class ResourceQuotaAdmission : public ListerBackedPlugin {
 public:
  using NowFn = std::function<std::chrono::system_clock::time_point()>;
  explicit ResourceQuotaAdmission(
      Registry& registry, NowFn now = [] { return std::chrono::system_clock::now(); },
      std::shared_ptr<AdmissionLister> lister = nullptr)
      : ListerBackedPlugin(registry, std::move(lister)),
        registry_(registry),
        now_(std::move(now)) {}
  Status admit(auth::AdmissionRequest& request) override;

 private:
  // False for a create the registry will refuse anyway (invalid, or a name that exists):
  // nothing is charged for it.
  bool willBeStored(const api::ResourceInfo& info, const auth::AdmissionRequest& request,
                    const json& obj);

  Registry& registry_;
  NowFn now_;
};

}  // namespace minik8s::apiserver::admission
