// GrpcRuntime: the CRI v1 client of a real container runtime (containerd's CRI plugin, CRI-O)
// over its unix socket, implementing both RuntimeService and ImageService.
//
// Every call carries a deadline (10 s by default; 2 min for image pulls and on top of the grace
// period for StopContainer; the command timeout plus 10 s for ExecSync) so that a hung runtime
// never blocks a pod worker for ever. gRPC failures become Status values with HTTP-like codes
// (see statusFromGrpc). The channel reconnects by itself when the runtime restarts.
// Thread-safe: gRPC stubs may be used from any number of threads at once.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "cri/api.grpc.pb.h"
#include "kubelet/cri/runtime_service.h"

namespace minik8s::kubelet::cri {

struct GrpcRuntimeOptions {
  std::chrono::milliseconds callTimeout{std::chrono::seconds(10)};
  // Image pulls and container stops (added to the stop's grace period).
  std::chrono::milliseconds longCallTimeout{std::chrono::minutes(2)};
};

// Maps a gRPC failure of `method` to a Status: NOT_FOUND -> 404 NotFound, ALREADY_EXISTS -> 409,
// INVALID_ARGUMENT/OUT_OF_RANGE/FAILED_PRECONDITION -> 400, PERMISSION_DENIED -> 403,
// UNAUTHENTICATED -> 401, RESOURCE_EXHAUSTED -> 429, UNIMPLEMENTED -> 501,
// UNAVAILABLE -> 503, DEADLINE_EXCEEDED -> 504, anything else -> 500. OK maps to OK.
Status statusFromGrpc(const grpc::Status& status, std::string_view method);

class GrpcRuntime : public RuntimeService, public ImageService {
 public:
  // `endpoint`: "unix:///run/containerd/containerd.sock" or a bare socket path.
  explicit GrpcRuntime(const std::string& endpoint, GrpcRuntimeOptions options = {});

  // Polls Version until the runtime answers or `timeout` passes (then 503/504 with the last
  // error). Use after starting a runtime.
  Status waitReady(std::chrono::milliseconds timeout);

  // RuntimeService
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

  // ImageService
  Result<std::vector<v1::Image>> listImages(const v1::ImageFilter& filter = {}) override;
  Result<v1::ImageStatusResponse> imageStatus(const v1::ImageSpec& image) override;
  Result<std::string> pullImage(const v1::ImageSpec& image,
                                const v1::PodSandboxConfig* sandboxConfig = nullptr) override;
  Status removeImage(const v1::ImageSpec& image) override;

 private:
  // Calls `rpc` on `stub` with a fresh context whose deadline is now + `timeout`.
  template <typename Stub, typename Req, typename Resp>
  Status call(Stub* stub, grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*),
              std::string_view method, const Req& request, Resp* response,
              std::chrono::milliseconds timeout);

  GrpcRuntimeOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::RuntimeService::Stub> runtime_;
  std::unique_ptr<v1::ImageService::Stub> images_;
};

}  // namespace minik8s::kubelet::cri
