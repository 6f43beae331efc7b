// Whether a pod may be placed on a node, as far as the node's labels, name and taints decide:
// nodeSelector, required node affinity (nodeSelectorTerms ORed, their matchExpressions and
// matchFields ANDed; In, NotIn, Exists, DoesNotExist, Gt, Lt), and tolerations. The scheduler's
// filters and the DaemonSet controller share these rules. Pure functions, thread-safe.
#pragma once

#include "common/status.h"

namespace minik8s::api {

// Whether `tolerations` (a pod's spec.tolerations) tolerate `taint` ({key, value, effect}).
bool toleratesTaint(const json& tolerations, const json& taint);

// Whether a node's labels/name satisfy a pod's nodeSelector and required node affinity.
bool matchesNodeSelectorAndAffinity(const json& pod, const json& node);

}  // namespace minik8s::api
