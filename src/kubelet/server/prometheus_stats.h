// The node's usage (a StatsSummary) as the Prometheus text the Kubernetes kubelet serves at
// GET /metrics/cadvisor and GET /metrics/resource (text format 0.0.4, families sorted by name,
// labels sorted by name, series sorted by label values, as client_golang writes them).
//
// /metrics/cadvisor speaks cAdvisor's names, HELP texts and labels (those of a kubelet with
// containerd and the cgroupfs driver), with a sample timestamp in ms where cAdvisor has one:
//   container_cpu_usage_seconds_total{cpu="total"}, container_memory_working_set_bytes,
//   container_memory_usage_bytes, container_memory_rss, container_start_time_seconds,
//   container_network_{receive,transmit}_{bytes,packets,errors,packets_dropped}_total{interface},
//   container_scrape_error, machine_cpu_cores and machine_memory_bytes{boot_id,machine_id,
//   system_uuid}.
// Every container_* series carries container, id, image, name, namespace and pod:
//   - the node (cAdvisor's root cgroup): id="/", the other labels empty: cpu, working set, the
//     node's interfaces;
//   - a pod: id=<pod cgroup>, pod and namespace only: cpu and memory summed over its containers;
//   - a container: id=<pod cgroup>/<container id>, container, image, name=<container id>;
//   - the pod's sandbox (pause) container: id=<pod cgroup>/<sandbox id>, container="",
//     image=<pause image>, name=<sandbox id>: the pod's network (as cAdvisor reports it with
//     containerd: only the sandbox has a network of its own) and its start time.
//
// /metrics/resource is the kubelet's resource metrics collector: node_, pod_ and container_
// cpu_usage_seconds_total and memory_working_set_bytes, container_start_time_seconds,
// resource_scrape_error and the deprecated scrape_error, HELP texts with the kubelet's stability
// prefix ("[STABLE] ", "[ALPHA] ").
//
// Both functions are pure (no I/O): an error summary renders only the scrape error gauge(s) at 1.
#pragma once

#include <string>

#include "common/status.h"
#include "kubelet/server/stats_summary.h"

namespace minik8s::kubelet::server {

std::string renderCadvisorMetrics(const Result<StatsSummary>& summary);
std::string renderResourceMetrics(const Result<StatsSummary>& summary);

// The pod cgroup used for `id` when the runtime did not say (see PodUsage::cgroupPath).
std::string defaultPodCgroup(const PodUsage& pod);

}  // namespace minik8s::kubelet::server
