// The HorizontalPodAutoscaler replica formula for resource metrics (cpu, memory), as Kubernetes'
// ReplicaCalculator computes it:
//
//   desired = ceil(currentUsage / target * readyPods), unless |1 - usage/target| <= tolerance
//
// Pods being deleted, Failed or Pending are ignored; for cpu, pods that are not ready yet (or
// whose sample predates their readiness, during the cpu initialization period) are "unready";
// pods without a sample are "missing". When some pods are missing or unready the ratio is
// recomputed assuming missing pods use 100% of target on a scale-down and 0% on a scale-up, and
// unready pods use 0% on a scale-up; a recomputed ratio that flips direction or falls within the
// tolerance keeps the current size. Utilization is an integer percentage of the sum of container
// requests, truncated, as Kubernetes computes it. Pure functions: time comes in as a parameter;
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers::hpa {

// One pod's usage of one resource, summed over its containers, in thousandths of the unit
// (millicores for cpu, millibytes for memory), as Kubernetes' metrics client reports it.
struct PodMetric {
  int64_t milliValue = 0;
  WallClock::time_point timestamp{};
  std::chrono::seconds window{30};
};
using PodMetrics = std::map<std::string, PodMetric>;  // by pod name

struct ReplicaCalculatorConfig {
  double tolerance = 0.1;
  // Kubernetes' --horizontal-pod-autoscaler-cpu-initialization-period and
  // --horizontal-pod-autoscaler-initial-readiness-delay.
  std::chrono::seconds cpuInitializationPeriod{300};
  std::chrono::seconds initialReadinessDelay{30};
};

// How the pods of a target split for the formula.
struct PodGroups {
  int64_t readyCount = 0;
  std::set<std::string> unready;  // cpu only: not ready yet, or sample older than readiness
  std::set<std::string> missing;  // no sample
  std::set<std::string> ignored;  // deleting, Failed or Pending
};
PodGroups groupPods(const std::vector<json>& pods, const PodMetrics& metrics,
                    const std::string& resource, const ReplicaCalculatorConfig& config,
                    WallClock::time_point now);

// Sum of the containers' requests for `resource` per pod (milli units). A container without a
// request is BadRequest ("missing request for cpu in container c of Pod p").
Result<std::map<std::string, int64_t>> podRequests(const std::vector<json>& pods,
                                                   const std::string& resource);

struct ReplicaProposal {
  int32_t replicas = 0;
  int64_t utilization = 0;   // percent of requests (Utilization targets only)
  int64_t averageMilli = 0;  // average usage per pod with a sample, milli units
};

// Utilization target: `targetUtilization` percent of the requests. `pods` are the pods the
// target's selector matches.
Result<ReplicaProposal> replicasForUtilization(int32_t currentReplicas, int64_t targetUtilization,
                                               const std::string& resource,
                                               const std::vector<json>& pods, PodMetrics metrics,
                                               const ReplicaCalculatorConfig& config,
                                               WallClock::time_point now);

// AverageValue target: `targetMilli` per pod (milli units).
Result<ReplicaProposal> replicasForAverageValue(int32_t currentReplicas, int64_t targetMilli,
                                                const std::string& resource,
                                                const std::vector<json>& pods, PodMetrics metrics,
                                                const ReplicaCalculatorConfig& config,
                                                WallClock::time_point now);

}  // namespace minik8s::controllers::hpa
