// Prometheus service discovery from the cluster's own objects, in the shape Prometheus'
// http_sd_configs reads: [{"targets": ["host:port"], "labels": {...}}, ...].
//
// Debian's Prometheus is built without kubernetes_sd_configs, so minik8s computes what that
// mechanism would give and serves it over HTTP. The four roles and every `__meta_kubernetes_*`
// label name follow kubernetes_sd (node, pod, service, endpoints), so the relabel_configs people
// already write for Kubernetes work unchanged against these documents. One group per target:
// Prometheus keys targets by their labels, not by the group they came in.
//
// Pure functions of the objects handed in (JSON as the API serves it); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::monitoring {

enum class SdRole { kNode, kPod, kService, kEndpoints };

// "node", "pod", "service", "endpoints" (and the plurals); anything else is a NotFound naming the
// roles there are.
Result<SdRole> parseSdRole(std::string_view role);

// Prometheus' label-name rule: every character outside [a-zA-Z0-9_] becomes '_'.
std::string sanitizeLabelName(std::string_view name);

struct ClusterObjects {
  std::vector<json> nodes, pods, services, endpoints;
};

// The target groups of one role. `namespaces` (empty: all) limits the namespaced roles, as
// kubernetes_sd's namespaces.names does.
json targetGroups(SdRole role, const ClusterObjects& objects,
                  const std::vector<std::string>& namespaces = {});

}  // namespace minik8s::monitoring
