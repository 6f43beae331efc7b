// FakeRuntime: an in-memory container runtime implementing RuntimeService and ImageService for
// unit tests of the kubelet (pod sync, probes, status, adoption after restart).
//
// It behaves like containerd's CRI plugin where the kubelet can tell the difference:
// sandboxes are READY until stopped; containers go CREATED -> RUNNING -> EXITED with created/
// started/finished timestamps; stopping a sandbox kills its containers (exit 137); remove and
// stop are idempotent, but unknown ids give 404; a container can only be created from a present
// image (pull it first) in a READY sandbox; image names are normalised as Docker does
// ("busybox" == "docker.io/library/busybox:latest"). Tests drive the rest: container exits,
// pull failures, ExecSync answers, stats, and one-shot errors per method. Every call is logged.
// Thread-safe (one mutex); handlers set by tests are called without the lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kubelet/cri/runtime_service.h"

namespace minik8s::kubelet::cri {

class FakeRuntime : public RuntimeService, public ImageService {
 public:
  // Wall-clock nanoseconds for the CRI timestamps; defaults to the system clock.
  using NanosClock = std::function<int64_t()>;
  using ExecSyncHandler = std::function<Result<v1::ExecSyncResponse>(
      const std::string& containerId, const std::vector<std::string>& cmd)>;

  struct Call {
    std::string method;  // CRI method name: "RunPodSandbox", "StopContainer", "PullImage", ...
    std::string target;  // the sandbox/container id or image name the call was about, if any
  };

  explicit FakeRuntime(NanosClock clock = nullptr);

  // ---- Test controls -------------------------------------------------------------------------

  // Makes a running (or created) container exited with this code and reason ("Error",
  // "Completed", "OOMKilled"); finished_at = now.
  Status setContainerExited(const std::string& containerId, int exitCode, const std::string& reason,
                            const std::string& message = "");
  // Makes a sandbox NOTREADY as if its pause process died (its containers keep their state).
  Status setSandboxNotReady(const std::string& podSandboxId);
  // Adds a present image; returns its id ("sha256:...").
  std::string addImage(const std::string& name);
  // The User of an image's config, reported by ImageStatus as containerd does: a numeric user
  // ("1000" or "1000:1000") as Image.uid, a name as Image.username, "" as neither (root).
  // Adds the image if absent.
  void setImageUser(const std::string& name, const std::string& user);
  // Pulls of images not set here succeed when `pullableByDefault` is true (the default).
  void setPullableByDefault(bool pullable);
  // Makes pulls of `image` fail with `error` (OK status clears it).
  void setPullError(const std::string& image, Status error);
  // ExecSync answers: a fixed result for one container ("" = every container), or a handler
  // called for every ExecSync (takes precedence). Default: exit 0, empty output.
  void setExecSyncResult(const std::string& containerId, int exitCode,
                         const std::string& stdoutText = "", const std::string& stderrText = "");
  void setExecSyncHandler(ExecSyncHandler handler);
  // Stats reported for a container (attributes are filled in by the fake).
  void setContainerStats(const std::string& containerId, uint64_t usageCoreNanoSeconds,
                         uint64_t usageNanoCores, uint64_t workingSetBytes);
  // The pause process of a sandbox as containerd's verbose PodSandboxStatus reports it
  // (info["info"]: {"pid", "processStatus", "image", "config": {"linux": {"cgroup_parent"}}});
  // 0 (the default) reads as no process.
  void setSandboxPid(const std::string& podSandboxId, int pid);
  // The next `times` calls of `method` (CRI name, e.g. "StartContainer") fail with `error`.
  void injectError(const std::string& method, Status error, int times = 1);
  // The pod IP the next non-hostNetwork sandboxes get; default 10.88.0.<n>.
  void setNextPodIp(const std::string& ip);
  void setNetworkReady(bool ready);

  // ---- Assertions ----------------------------------------------------------------------------

  std::vector<Call> calls() const;
  int callCount(const std::string& method) const;
  void clearCalls();
  Result<v1::ContainerConfig> containerConfig(const std::string& containerId) const;
  Result<v1::PodSandboxConfig> sandboxConfig(const std::string& podSandboxId) const;
  size_t sandboxCount() const;
  size_t containerCount() const;

  // ---- RuntimeService ------------------------------------------------------------------------

  Result<v1::VersionResponse> version() override;
  Result<std::string> runPodSandbox(const v1::PodSandboxConfig& config,
                                    const std::string& runtimeHandler = "") override;
  Status stopPodSandbox(const std::string& podSandboxId) override;
  Status removePodSandbox(const std::string& podSandboxId) override;
  Result<v1::PodSandboxStatus> podSandboxStatus(const std::string& podSandboxId) override;
  Result<v1::PodSandboxStatusResponse> podSandboxStatusVerbose(
      const std::string& podSandboxId) override;
  Result<std::vector<v1::PodSandbox>> listPodSandbox(
      const v1::PodSandboxFilter& filter = {}) override;
  Result<std::string> createContainer(const std::string& podSandboxId,
                                      const v1::ContainerConfig& config,
                                      const v1::PodSandboxConfig& sandboxConfig) override;
  Status startContainer(const std::string& containerId) override;
  Status stopContainer(const std::string& containerId, int64_t timeoutSeconds) override;
  Status removeContainer(const std::string& containerId) override;
  Result<std::vector<v1::Container>> listContainers(
      const v1::ContainerFilter& filter = {}) override;
  Result<v1::ContainerStatus> containerStatus(const std::string& containerId) override;
  Result<v1::ExecSyncResponse> execSync(const std::string& containerId,
                                        const std::vector<std::string>& cmd,
                                        std::chrono::seconds timeout) override;
  Result<std::string> exec(const v1::ExecRequest& request) override;
  Result<std::string> attach(const v1::AttachRequest& request) override;
  Result<std::string> portForward(const v1::PortForwardRequest& request) override;
  Result<v1::ContainerStats> containerStats(const std::string& containerId) override;
  Result<std::vector<v1::ContainerStats>> listContainerStats(
      const v1::ContainerStatsFilter& filter = {}) override;
  Result<std::vector<v1::PodSandboxStats>> listPodSandboxStats(
      const v1::PodSandboxStatsFilter& filter = {}) override;
  Status updateRuntimeConfig(const v1::RuntimeConfig& config) override;
  Result<v1::RuntimeStatus> status() override;

  // ---- ImageService --------------------------------------------------------------------------

  Result<std::vector<v1::Image>> listImages(const v1::ImageFilter& filter = {}) override;
  Result<v1::ImageStatusResponse> imageStatus(const v1::ImageSpec& image) override;
  Result<std::string> pullImage(const v1::ImageSpec& image,
                                const v1::PodSandboxConfig* sandboxConfig = nullptr) override;
  Status removeImage(const v1::ImageSpec& image) override;

  // "busybox" -> "docker.io/library/busybox:latest"; digests and full names kept.
  static std::string normalizeImageName(const std::string& name);

 private:
  struct Sandbox {
    v1::PodSandboxConfig config;
    v1::PodSandboxStatus status;
    int pid = 0;
  };
  struct ContainerRecord {
    std::string sandboxId;
    v1::ContainerConfig config;
    v1::ContainerStatus status;
    v1::ContainerStats stats;
  };

  // Logs the call and consumes an injected error for it, if any (caller holds mu_).
  Status enter(const std::string& method, const std::string& target);
  int64_t now() const;
  std::string newId(const std::string& prefix);
  const v1::Image* findImage(const std::string& nameOrId) const;
  void exitContainer(ContainerRecord& c, int exitCode, const std::string& reason);
  v1::Container toContainer(const std::string& id, const ContainerRecord& c) const;

  NanosClock clock_;
  mutable std::mutex mu_;
  uint64_t nextId_ = 1;
  int nextIpSuffix_ = 2;
  std::string nextPodIp_;
  bool networkReady_ = true;
  bool pullableByDefault_ = true;
  std::map<std::string, Sandbox> sandboxes_;
  std::map<std::string, ContainerRecord> containers_;
  std::map<std::string, v1::Image> images_;  // by normalised name
  std::map<std::string, Status> pullErrors_;
  std::map<std::string, v1::ExecSyncResponse> execResults_;
  ExecSyncHandler execHandler_;
  std::map<std::string, std::vector<Status>> injected_;
  std::vector<Call> calls_;
};

}  // namespace minik8s::kubelet::cri
