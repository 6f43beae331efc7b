// The arithmetic of a Deployment rollout, as pure functions so it can be tested exactly: the
// surge/unavailability fenceposts with Kubernetes' rounding, how far the new ReplicaSet may
// grow, how far the old ones may shrink, and the pod-template hash. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::controllers {

struct Fenceposts {
  int64_t maxSurge = 0;
  int64_t maxUnavailable = 0;
};

// maxSurge rounds up, maxUnavailable rounds down; both zero becomes maxUnavailable 1 so a
// rollout can always make progress (Kubernetes' ResolveFenceposts).
Result<Fenceposts> resolveFenceposts(const json& maxSurge, const json& maxUnavailable,
                                     int64_t replicas);

// spec.replicas for the new ReplicaSet of a rolling update: grows by what the surge allows.
// `currentPods` is the sum of spec.replicas over all ReplicaSets of the Deployment.
int64_t newReplicaSetReplicas(int64_t replicas, int64_t maxSurge, int64_t currentPods,
                              int64_t newReplicaSetSpec);

struct ReplicaSetCounts {
  int64_t specReplicas = 0;
  int64_t availableReplicas = 0;
};

// New spec.replicas for each old ReplicaSet (given oldest first) of a rolling update: first
// unhealthy replicas go, then healthy ones while availability stays at replicas - maxUnavailable.
std::vector<int64_t> scaleDownOldReplicaSets(const std::vector<ReplicaSetCounts>& oldOnes,
                                             const ReplicaSetCounts& newOne, int64_t replicas,
                                             int64_t maxUnavailable);

// The pod-template-hash of a template (canonical JSON) and the collision count: FNV-1a 32,
// printed in decimal and mapped onto Kubernetes' safe alphabet (no vowels, no look-alikes).
std::string podTemplateHash(const json& podTemplate, int64_t collisionCount);

}  // namespace minik8s::controllers
