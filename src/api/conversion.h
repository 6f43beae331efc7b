// Conversion between the served versions of one resource.
//
// Only HorizontalPodAutoscaler has two versions (autoscaling/v2, stored, and autoscaling/v1);
// every other kind converts by relabelling apiVersion. v1 has one metric, average CPU
// utilization (spec.targetCPUUtilizationPercentage, status.currentCPUUtilizationPercentage); the
// rest of v2 travels in annotations, as Kubernetes does, so v2 -> v1 -> v2 is lossless:
//   autoscaling.alpha.kubernetes.io/metrics          spec.metrics other than CPU utilization
//   autoscaling.alpha.kubernetes.io/behavior         spec.behavior
//   autoscaling.alpha.kubernetes.io/current-metrics  status.currentMetrics other than CPU
//   autoscaling.alpha.kubernetes.io/conditions       status.conditions
// (each a compact JSON array/object in v2 form). On the way back they are removed again. When
// converting to v2, the CPU metric comes first. Pure functions: thread-safe.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

// Converts an HPA (apiVersion autoscaling/v1 or v2; an object without apiVersion is recognised
// by its fields) to `toApiVersion`. Lists (HorizontalPodAutoscalerList) convert item by item.
Result<json> convertHpa(const json& obj, const std::string& toApiVersion);

// Converts `obj` to `apiVersion` ("apps/v1", "autoscaling/v1"), setting apiVersion and kind.
// NotFound-style BadRequest when the kind is not served in that version.
Result<json> convertToVersion(const Scheme& scheme, const json& obj, const std::string& apiVersion);

}  // namespace minik8s::api
