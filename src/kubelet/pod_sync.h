// PodSyncer: the level-triggered heart of the kubelet (Kubernetes' syncPod + the kuberuntime
// manager's SyncPod/KillPod). syncPod(pod) looks at what the runtime has for the pod (sandboxes
// and containers found by their CRI labels, so state survives an agent restart) and takes the
// next steps towards the spec: set up volumes, create the sandbox, pull images (per
// imagePullPolicy, with back-off), run init containers in order, then the containers, restart
// exited ones as restartPolicy says with exponential back-off (CrashLoopBackOff), run probes and
// kill containers whose liveness probe failed. It returns the status to report. A pod the node
// may not run (forbidden sysctls) is rejected before anything starts: phase Failed, as the
// kubelet's admission leaves it. Calling it again with nothing changed changes nothing: healthy
// containers are never restarted and no duplicate sandbox is made.
//
// Thread-safe: different pods may be synced concurrently; one pod must not be synced by two
// threads at once (the pod workers' queue guarantees it).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "client/event_recorder.h"
#include "client/work_queue.h"
#include "cri/runtime_service.h"
#include "kubelet/backoff.h"
#include "kubelet/env_resolver.h"
#include "kubelet/pod_status.h"
#include "kubelet/prober.h"
#include "kubelet/security_context.h"
#include "kubelet/volume_manager.h"

namespace minik8s::kubelet {

struct PodSyncerOptions {
  std::string nodeName;
  std::string hostIP;
  std::string podLogRoot = "/var/log/pods";      // <root>/<ns>_<name>_<uid>/<container>/<n>.log
  std::string cgroupRoot = "/minik8s/kubepods";  // sandboxes get <cgroupRoot>/pod<uid>
  std::string runtimeName = "containerd";
  std::vector<std::string> clusterDNS;  // empty: containers use the node's resolv.conf
  std::string clusterDomain = "cluster.local";
  int64_t memoryCapacityBytes = 0;  // for the Burstable oom_score_adj
  // Localhost seccomp profiles are files under it (the kubelet's <root-dir>/seccomp).
  std::string seccompProfileRoot = "/var/lib/kubelet/seccomp";
  // Sysctls pods may set beyond the safe ones (the kubelet's --allowed-unsafe-sysctls).
  std::vector<std::string> allowedUnsafeSysctls;
};

class PodSyncer {
 public:
  PodSyncer(cri::RuntimeService& runtime, cri::ImageService& images, VolumeManager& volumes,
            ObjectSource& objects, ProbeManager& probes, const client::Clock& clock,
            PodSyncerOptions options, client::EventRecorder* events = nullptr);

  // Converges the runtime towards the pod's spec; returns the status to report. Errors of
  // single steps (an image pull, a missing ConfigMap) show in the status, not as a failure;
  // a failure means the runtime could not even be asked.
  Result<json> syncPod(const json& pod);

  // Stops the pod's containers (SIGTERM, then SIGKILL after `gracePeriodSeconds`), then removes
  // them, its sandboxes, its cgroup directories and its volumes. Idempotent. With the API `pod`
  // (absent when it is already gone) each running container gets a Killing event.
  Status killPod(const std::string& podUid, int64_t gracePeriodSeconds, const json* pod = nullptr);

  // What the runtime has for the pod, and the status that gives, without changing anything.
  Result<PodRuntimeView> observe(const json& pod);
  json statusFor(const json& pod, const PodRuntimeView& view);

  // UIDs of all pods that have sandboxes or containers in the runtime.
  Result<std::set<std::string>> runtimePodUids();
  // UIDs of the pod cgroup directories under the cgroup root (any hierarchy), and their
  // removal: containerd removes container cgroups asynchronously, so a killPod() may leave the
  // pod directory behind; housekeeping retries with these.
  std::set<std::string> cgroupPodUids();
  void removeCgroups(const std::string& podUid);

  // Pure builders (exposed for tests).
  ::runtime::v1::PodSandboxConfig sandboxConfig(const json& pod, uint32_t attempt) const;
  // The container's config; an error (CreateContainerConfigError) when its securityContext
  // cannot be applied (a Localhost seccomp profile without a file name).
  Result<::runtime::v1::ContainerConfig> containerConfig(
      const json& pod, const json& container, int restartCount, const EnvList& env,
      const std::vector<::runtime::v1::Mount>& mounts, bool isInit,
      const ImageUser& imageUser = {}) const;

 private:
  // Pulls the container's image when its policy says so; its status, or nothing (with the
  // waiting reason set) when it is not there to run.
  std::optional<::runtime::v1::ImageStatusResponse> ensureImage(const json& pod,
                                                                const json& container,
                                                                ContainerView& view);
  // The IPs of a ready sandbox (PodSandboxStatus once, then remembered).
  std::vector<std::string> sandboxIPs(const std::string& sandboxId);
  // Creates and starts a new instance of `container`; false (with a waiting reason) on failure.
  bool startContainer(const json& pod, const json& container, int restartCount, bool isInit,
                      const PodRuntimeView& pod_view, ContainerView& view,
                      const VolumeManager::VolumePaths& volumes);
  // Restarts an exited container unless it is backing off (then CrashLoopBackOff).
  bool restartWithBackoff(const json& pod, const json& container, bool isInit,
                          const PodRuntimeView& podView, ContainerView& view,
                          const VolumeManager::VolumePaths& volumes);
  // Fills started/ready of running containers from their probes (or their absence).
  void applyProbeResults(const json& pod, PodRuntimeView& view);
  Result<::runtime::v1::ContainerStatus> cachedContainerStatus(const ::runtime::v1::Container& c);
  std::chrono::steady_clock::time_point exitSeenAt(const std::string& containerId);
  void removeOldInstances(const json& pod, const PodRuntimeView& view);
  void forgetContainer(const std::string& containerId);
  // A kubelet Event about the pod or one of its containers (`container` null: the pod).
  void event(const json& pod, const json* container, const std::string& type,
             const std::string& reason, const std::string& message);

  cri::RuntimeService& runtime_;
  cri::ImageService& images_;
  VolumeManager& volumes_;
  ObjectSource& objects_;
  ProbeManager& probes_;
  const client::Clock& clock_;
  PodSyncerOptions options_;
  client::EventRecorder* events_;  // optional
  Backoff restartBackoff_;
  Backoff imageBackoff_;

  std::mutex mu_;
  // CRI ContainerStatus by container ID; refreshed when the listed state changes (exited
  // containers never change), so a sync costs one list call per pod in the steady state.
  std::map<std::string, ::runtime::v1::ContainerStatus> statusCache_;
  std::map<std::string, std::vector<std::string>> sandboxIPs_;             // by sandbox ID
  std::map<std::string, std::chrono::steady_clock::time_point> exitSeen_;  // by container ID
  std::map<std::string, std::chrono::steady_clock::time_point> imagePullFailed_;
};

}  // namespace minik8s::kubelet
