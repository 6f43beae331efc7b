// The rows of `kubectl get quota,limits`, as upstream's printResourceQuota and printLimitRange
// compute them. Internal to src/api; thread-safe.
#pragma once

#include "api/printers/print_format.h"

namespace minik8s::api::printers {

// Name, Age, Request ("pods: 1/2, requests.cpu: 500m/1", every status.hard resource not
// prefixed "limits."), Limit (the "limits.*" ones); used values in canonical quantity form.
json resourceQuotaCells(const json& quota, TimePoint now);
// Name, Created At (the creationTimestamp as stored).
json limitRangeCells(const json& limitRange);

}  // namespace minik8s::api::printers
