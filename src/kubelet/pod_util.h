// Small helpers shared by the kubelet's parts: the CRI label and annotation keys that tie runtime
// objects to API pods (so an agent restart can adopt them), pod field accessors with Kubernetes
// defaults, QoS class, resource quantities to CRI cgroup settings, CRI timestamps to RFC 3339.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "cri/runtime_service.h"

namespace minik8s::kubelet {

namespace v1 = ::runtime::v1;

// Labels on sandboxes and containers (as Kubernetes' kubelet sets them).
inline constexpr const char* kPodNameLabel = "io.kubernetes.pod.name";
inline constexpr const char* kPodNamespaceLabel = "io.kubernetes.pod.namespace";
inline constexpr const char* kPodUidLabel = "io.kubernetes.pod.uid";
inline constexpr const char* kContainerNameLabel = "io.kubernetes.container.name";
// Annotation on containers: how many times this container had been restarted when created.
inline constexpr const char* kRestartCountAnnotation = "io.kubernetes.container.restartCount";
// Label telling init containers from regular ones (ours; Kubernetes keys on the pod spec).
inline constexpr const char* kContainerTypeLabel = "io.minik8s.container.type";

std::string podUid(const json& pod);
std::string podName(const json& pod);
std::string podNamespace(const json& pod);
std::string podKey(const json& pod);  // namespace/name
// "Always" (Kubernetes' default), "OnFailure" or "Never".
std::string restartPolicy(const json& pod);
bool hostNetwork(const json& pod);
bool isTerminating(const json& pod);  // metadata.deletionTimestamp is set
// Seconds to wait between SIGTERM and SIGKILL: deletionGracePeriodSeconds when terminating,
// else spec.terminationGracePeriodSeconds, else 30.
int64_t terminationGracePeriod(const json& pod);
// The pod's containers, or its initContainers (an empty array when absent).
const json& containers(const json& pod);
const json& initContainers(const json& pod);
// The image pull policy with Kubernetes' default (Always for :latest or no tag, else
// IfNotPresent).
std::string imagePullPolicy(const json& container);

// BestEffort, Burstable or Guaranteed, computed as Kubernetes' GetPodQOS.
std::string qosClass(const json& pod);

// cpu_shares, cpu_period/cpu_quota and memory_limit_in_bytes from resources.requests/limits
// (a request defaults to the limit). Unparsable quantities are ignored (validation rejects them).
v1::LinuxContainerResources linuxResources(const json& container);

// A CRI timestamp (nanoseconds since the epoch) as RFC 3339; "" for 0.
std::string criTimeToRfc3339(int64_t nanos);

}  // namespace minik8s::kubelet
