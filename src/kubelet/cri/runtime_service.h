// The container runtime as the kubelet sees it: CRI v1 RuntimeService and ImageService.
//
// The interfaces use the CRI message types generated from proto/cri/api.proto (package
// runtime.v1, our own subset with the published field numbers), exactly as a Kubernetes kubelet
// does, so the real implementation (cri/grpc_runtime.h, a gRPC client of containerd's CRI
// plugin) is a thin pass-through and tests use fakes (cri/fake_runtime.h) that keep state in
// memory. Implementations are thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "cri/api.pb.h"

namespace minik8s::kubelet::cri {

namespace v1 = ::runtime::v1;

class RuntimeService {
 public:
  virtual ~RuntimeService() = default;

  virtual Result<v1::VersionResponse> version() = 0;
  virtual Result<std::string> runPodSandbox(const v1::PodSandboxConfig& config,
                                            const std::string& runtimeHandler = "") = 0;
  virtual Status stopPodSandbox(const std::string& podSandboxId) = 0;
  virtual Status removePodSandbox(const std::string& podSandboxId) = 0;
  virtual Result<v1::PodSandboxStatus> podSandboxStatus(const std::string& podSandboxId) = 0;
  // PodSandboxStatus with verbose set: the status and the runtime's own details. containerd puts
  // a JSON object under info["info"]: "pid" (of the pause process, in the runtime's pid
  // namespace), "image" (the pause image), "config" (the PodSandboxConfig), ...
  virtual Result<v1::PodSandboxStatusResponse> podSandboxStatusVerbose(
      const std::string& podSandboxId) = 0;
  virtual Result<std::vector<v1::PodSandbox>> listPodSandbox(
      const v1::PodSandboxFilter& filter = {}) = 0;

  virtual Result<std::string> createContainer(const std::string& podSandboxId,
                                              const v1::ContainerConfig& config,
                                              const v1::PodSandboxConfig& sandboxConfig) = 0;
  virtual Status startContainer(const std::string& containerId) = 0;
  virtual Status stopContainer(const std::string& containerId, int64_t timeoutSeconds) = 0;
  virtual Status removeContainer(const std::string& containerId) = 0;
  virtual Result<std::vector<v1::Container>> listContainers(
      const v1::ContainerFilter& filter = {}) = 0;
  virtual Result<v1::ContainerStatus> containerStatus(const std::string& containerId) = 0;

  // Runs a command in a container and waits for it (probes). A non-zero exit is not an error:
  // the result carries the exit code.
  virtual Result<v1::ExecSyncResponse> execSync(const std::string& containerId,
                                                const std::vector<std::string>& cmd,
                                                std::chrono::seconds timeout) = 0;
  // Streaming endpoints: the runtime answers with a URL the caller connects to (containerd's
  // streaming server), as with a real kubelet.
  virtual Result<std::string> exec(const v1::ExecRequest& request) = 0;
  virtual Result<std::string> attach(const v1::AttachRequest& request) = 0;
  virtual Result<std::string> portForward(const v1::PortForwardRequest& request) = 0;

  virtual Result<v1::ContainerStats> containerStats(const std::string& containerId) = 0;
  virtual Result<std::vector<v1::ContainerStats>> listContainerStats(
      const v1::ContainerStatsFilter& filter = {}) = 0;
  virtual Result<std::vector<v1::PodSandboxStats>> listPodSandboxStats(
      const v1::PodSandboxStatsFilter& filter = {}) = 0;
  virtual Status updateRuntimeConfig(const v1::RuntimeConfig& config) = 0;
  virtual Result<v1::RuntimeStatus> status() = 0;
};

class ImageService {
 public:
  virtual ~ImageService() = default;
  virtual Result<std::vector<v1::Image>> listImages(const v1::ImageFilter& filter = {}) = 0;
  // NotFound-free: an absent image gives an empty optional-like response (has_image() false).
  virtual Result<v1::ImageStatusResponse> imageStatus(const v1::ImageSpec& image) = 0;
  // Returns the image reference (digest) pulled.
  virtual Result<std::string> pullImage(const v1::ImageSpec& image,
                                        const v1::PodSandboxConfig* sandboxConfig = nullptr) = 0;
  virtual Status removeImage(const v1::ImageSpec& image) = 0;
};

}  // namespace minik8s::kubelet::cri
