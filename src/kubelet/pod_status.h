// The pod status the kubelet reports, computed from what the pod sync saw in the runtime, as
// Kubernetes' generateAPIPodStatus/getPhase do: phase, conditions (PodScheduled, Initialized,
// ContainersReady, Ready), init and regular containerStatuses (state, lastState, ready, started,
// restartCount, image, imageID, containerID), podIP/podIPs, hostIP/hostIPs, startTime, qosClass.
// Condition transition times and startTime carry over from the pod's previous status so an
// unchanged pod yields an identical status (the status manager writes only changes).
// Pure functions, thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/time_util.h"
#include "cri/runtime_service.h"

namespace minik8s::kubelet {

// What the sync saw of one container (by name) of a pod.
struct ContainerView {
  std::vector<::runtime::v1::ContainerStatus> instances;  // newest first
  // Why the container is not running when the sync could not (re)start it: CrashLoopBackOff,
  // ErrImagePull, ImagePullBackOff, CreateContainerConfigError, ... ("" = none).
  std::string waitingReason, waitingMessage;
  bool ready = false, started = false;
};

struct PodRuntimeView {
  std::string sandboxId;
  bool sandboxReady = false;
  uint32_t sandboxAttempt = 0;
  std::vector<std::string> podIPs;  // primary first
  std::map<std::string, ContainerView> containers;
};

struct StatusContext {
  std::string hostIP;
  std::string runtimeName = "containerd";  // containerID prefix
  Clock::time_point now = Clock::now();
};

// restartCount recorded on a CRI container instance (its annotation), 0 when absent.
int restartCountOf(const ::runtime::v1::ContainerStatus& status);

json computePodStatus(const json& pod, const PodRuntimeView& view, const StatusContext& ctx);

// The phase alone (Pending, Running, Succeeded, Failed) from the container statuses.
std::string podPhase(const json& pod, const json& initStatuses, const json& statuses);

}  // namespace minik8s::kubelet
