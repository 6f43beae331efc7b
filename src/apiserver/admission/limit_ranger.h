// LimitRanger: kube-apiserver's admission plugin for the namespace's core/v1 LimitRanges.
//
// On pod creates it first gives containers (init containers too) the `default` limits and
// `defaultRequest` requests of the namespace's Container items where they state none (a limit
// without a request first makes the request, as the API's defaulting does), noting what it set in
// the kubernetes.io/limit-ranger annotation; then it checks min, max and maxLimitRequestRatio of
// Container items per container and of Pod items against the pod's total, and min/max storage of
// PersistentVolumeClaim items on claim creates and updates. A violation is 403 with Kubernetes'
// words: `pods "x" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`.
// Pod updates and subresources pass (containers' resources cannot change). The LimitRanges are
// read through the AdmissionLister (admission_lister.h: one created through another server a
// moment ago may be missed for as long as the watch lags). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

// Gives the pod's containers the defaults of `limitRange`'s Container items; returns the parts of
// the annotation ("cpu, memory request for container app"), empty when nothing was set.
std::vector<std::string> applyLimitRangeDefaults(const json& limitRange, json& pod);
// The violations of `limitRange` by the pod (Container and Pod items) or the claim
// (PersistentVolumeClaim items), in the items' order, each item's resources sorted by name.
std::vector<std::string> podLimitRangeViolations(const json& limitRange, const json& pod);
std::vector<std::string> claimLimitRangeViolations(const json& limitRange, const json& claim);

class LimitRanger : public ListerBackedPlugin {
 public:
  explicit LimitRanger(Registry& registry, std::shared_ptr<AdmissionLister> lister = nullptr)
      : ListerBackedPlugin(registry, std::move(lister)), registry_(registry) {}
  Status admit(auth::AdmissionRequest& request) override;

 private:
  Registry& registry_;
};

// errors.NewForbidden for an admission refusal of the request's object: `<resource> "<name>" is
// forbidden: <message>`; a generateName object is given the name it would get.
Status admissionForbidden(const auth::AdmissionRequest& request, const std::string& message);

}  // namespace minik8s::apiserver::admission
