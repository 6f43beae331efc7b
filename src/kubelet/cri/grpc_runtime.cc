#include "kubelet/cri/grpc_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/grpc_status.h"
#include "common/metrics.h"

namespace minik8s::kubelet::cri {

namespace {

// ExecSync may return up to 16 MiB of stdout and as much of stderr (the CRI cap).
constexpr int kMaxMessageBytes = 40 * 1024 * 1024;
// ExecSync: the runtime enforces the command timeout itself; we only give it room to answer.
constexpr std::chrono::seconds kExecSyncMargin{10};

// The kubelet's operation_type of a CRI method: "RunPodSandbox" -> "run_podsandbox".
std::string operationType(std::string_view method) {
  std::string out;
  for (char c : method) {
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  for (size_t at; (at = out.find("pod_sandbox")) != std::string::npos;) out.erase(at + 3, 1);
  return out;
}

// kubelet_runtime_operations_{total,errors_total,duration_seconds}{operation_type}.
struct RuntimeMetrics {
  metrics::CounterVec& total;
  metrics::CounterVec& errors;
  metrics::HistogramVec& duration;
};

RuntimeMetrics& runtimeMetrics() {
  static RuntimeMetrics m{
      metrics::defaultRegistry().counterVec("kubelet_runtime_operations_total",
                                            "Cumulative number of runtime operations by "
                                            "operation type.",
                                            {"operation_type"}),
      metrics::defaultRegistry().counterVec(
          "kubelet_runtime_operations_errors_total",
          "Cumulative number of runtime operation errors by operation type.", {"operation_type"}),
      metrics::defaultRegistry().histogramVec(
          "kubelet_runtime_operations_duration_seconds",
          "Duration in seconds of runtime operations. Broken down by operation type.",
          {"operation_type"}, metrics::exponentialBuckets(0.005, 2.5, 14)),
  };
  return m;
}

}  // namespace

Status statusFromGrpc(const grpc::Status& status, std::string_view method) {
  return minik8s::statusFromGrpc(status, "CRI " + std::string(method));
}

GrpcRuntime::GrpcRuntime(const std::string& endpoint, GrpcRuntimeOptions options)
    : options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // A restarted runtime should be found again quickly, not after gRPC's default 2-minute backoff.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  channel_ =
      grpc::CreateCustomChannel(grpcEndpoint(endpoint), grpc::InsecureChannelCredentials(), args);
  runtime_ = v1::RuntimeService::NewStub(channel_);
  images_ = v1::ImageService::NewStub(channel_);
}

template <typename Stub, typename Req, typename Resp>
Status GrpcRuntime::call(Stub* stub,
                         grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*),
                         std::string_view method, const Req& request, Resp* response,
                         std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  const auto start = std::chrono::steady_clock::now();
  Status s = statusFromGrpc((stub->*rpc)(&context, request, response), method);
  RuntimeMetrics& m = runtimeMetrics();
  const std::string type = operationType(method);
  m.total.with({type}).inc();
  if (!s.ok()) m.errors.with({type}).inc();
  m.duration.with({type}).observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return s;
}

Status GrpcRuntime::waitReady(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last = Status::Unavailable("CRI Version: runtime not reached yet");
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= std::chrono::milliseconds(0)) break;
    v1::VersionRequest request;
    request.set_version("v1");
    v1::VersionResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::min(left, std::chrono::milliseconds(1000)));
    // Without wait_for_ready a call on a channel in backoff fails at once; with it the call
    // waits (until its deadline) for the socket to appear.
    context.set_wait_for_ready(true);
    last = statusFromGrpc(runtime_->Version(&context, request, &response), "Version");
    if (last.ok()) return last;
    std::this_thread::sleep_for(std::min(std::chrono::milliseconds(100), left));
  }
  return Status(
      last.code() == 504 ? 504 : 503, last.reason(),
      fmt::format("container runtime not ready after {} ms: {}", timeout.count(), last.message()));
}

Result<v1::VersionResponse> GrpcRuntime::version() {
  v1::VersionRequest request;
  request.set_version("v1");
  v1::VersionResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::Version, "Version", request, &response,
                  options_.callTimeout);
  if (!s.ok()) return s;
  return response;
}

Result<std::string> GrpcRuntime::runPodSandbox(const v1::PodSandboxConfig& config,
                                               const std::string& runtimeHandler) {
  v1::RunPodSandboxRequest request;
  *request.mutable_config() = config;
  request.set_runtime_handler(runtimeHandler);
  v1::RunPodSandboxResponse response;
  // Sandbox creation may include CNI set-up and, on a first start, unpacking the pause image.
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::RunPodSandbox, "RunPodSandbox",
                  request, &response, options_.longCallTimeout);
  if (!s.ok()) return s;
  return response.pod_sandbox_id();
}

Status GrpcRuntime::stopPodSandbox(const std::string& podSandboxId) {
  v1::StopPodSandboxRequest request;
  request.set_pod_sandbox_id(podSandboxId);
  v1::StopPodSandboxResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::StopPodSandbox, "StopPodSandbox", request,
              &response, options_.longCallTimeout);
}

Status GrpcRuntime::removePodSandbox(const std::string& podSandboxId) {
  v1::RemovePodSandboxRequest request;
  request.set_pod_sandbox_id(podSandboxId);
  v1::RemovePodSandboxResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::RemovePodSandbox, "RemovePodSandbox",
              request, &response, options_.longCallTimeout);
}

Result<v1::PodSandboxStatus> GrpcRuntime::podSandboxStatus(const std::string& podSandboxId) {
  v1::PodSandboxStatusRequest request;
  request.set_pod_sandbox_id(podSandboxId);
  v1::PodSandboxStatusResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::PodSandboxStatus, "PodSandboxStatus",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::move(*response.mutable_status());
}

Result<v1::PodSandboxStatusResponse> GrpcRuntime::podSandboxStatusVerbose(
    const std::string& podSandboxId) {
  v1::PodSandboxStatusRequest request;
  request.set_pod_sandbox_id(podSandboxId);
  request.set_verbose(true);
  v1::PodSandboxStatusResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::PodSandboxStatus, "PodSandboxStatus",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return response;
}

Result<std::vector<v1::PodSandbox>> GrpcRuntime::listPodSandbox(
    const v1::PodSandboxFilter& filter) {
  v1::ListPodSandboxRequest request;
  *request.mutable_filter() = filter;
  v1::ListPodSandboxResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ListPodSandbox, "ListPodSandbox",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::vector<v1::PodSandbox>(response.items().begin(), response.items().end());
}

Result<std::string> GrpcRuntime::createContainer(const std::string& podSandboxId,
                                                 const v1::ContainerConfig& config,
                                                 const v1::PodSandboxConfig& sandboxConfig) {
  v1::CreateContainerRequest request;
  request.set_pod_sandbox_id(podSandboxId);
  *request.mutable_config() = config;
  *request.mutable_sandbox_config() = sandboxConfig;
  v1::CreateContainerResponse response;
  // Creation unpacks the image's layers into a snapshot the first time: can take a while.
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::CreateContainer, "CreateContainer",
                  request, &response, options_.longCallTimeout);
  if (!s.ok()) return s;
  return response.container_id();
}

Status GrpcRuntime::startContainer(const std::string& containerId) {
  v1::StartContainerRequest request;
  request.set_container_id(containerId);
  v1::StartContainerResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::StartContainer, "StartContainer", request,
              &response, options_.callTimeout);
}

Status GrpcRuntime::stopContainer(const std::string& containerId, int64_t timeoutSeconds) {
  v1::StopContainerRequest request;
  request.set_container_id(containerId);
  request.set_timeout(std::max<int64_t>(timeoutSeconds, 0));
  v1::StopContainerResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::StopContainer, "StopContainer", request,
              &response, options_.longCallTimeout + std::chrono::seconds(request.timeout()));
}

Status GrpcRuntime::removeContainer(const std::string& containerId) {
  v1::RemoveContainerRequest request;
  request.set_container_id(containerId);
  v1::RemoveContainerResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::RemoveContainer, "RemoveContainer",
              request, &response, options_.longCallTimeout);
}

Result<std::vector<v1::Container>> GrpcRuntime::listContainers(const v1::ContainerFilter& filter) {
  v1::ListContainersRequest request;
  *request.mutable_filter() = filter;
  v1::ListContainersResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ListContainers, "ListContainers",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::vector<v1::Container>(response.containers().begin(), response.containers().end());
}

Result<v1::ContainerStatus> GrpcRuntime::containerStatus(const std::string& containerId) {
  v1::ContainerStatusRequest request;
  request.set_container_id(containerId);
  v1::ContainerStatusResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ContainerStatus, "ContainerStatus",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::move(*response.mutable_status());
}

Result<v1::ExecSyncResponse> GrpcRuntime::execSync(const std::string& containerId,
                                                   const std::vector<std::string>& cmd,
                                                   std::chrono::seconds timeout) {
  v1::ExecSyncRequest request;
  request.set_container_id(containerId);
  for (const auto& arg : cmd) request.add_cmd(arg);
  request.set_timeout(std::max<int64_t>(timeout.count(), 0));
  v1::ExecSyncResponse response;
  // Timeout 0 means "no limit" in CRI; we still bound the call by the long timeout.
  auto deadline =
      timeout.count() > 0
          ? std::chrono::duration_cast<std::chrono::milliseconds>(timeout + kExecSyncMargin)
          : options_.longCallTimeout;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ExecSync, "ExecSync", request,
                  &response, deadline);
  if (!s.ok()) return s;
  return response;
}

Result<std::string> GrpcRuntime::exec(const v1::ExecRequest& request) {
  v1::ExecResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::Exec, "Exec", request, &response,
                  options_.callTimeout);
  if (!s.ok()) return s;
  return response.url();
}

Result<std::string> GrpcRuntime::attach(const v1::AttachRequest& request) {
  v1::AttachResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::Attach, "Attach", request, &response,
                  options_.callTimeout);
  if (!s.ok()) return s;
  return response.url();
}

Result<std::string> GrpcRuntime::portForward(const v1::PortForwardRequest& request) {
  v1::PortForwardResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::PortForward, "PortForward", request,
                  &response, options_.callTimeout);
  if (!s.ok()) return s;
  return response.url();
}

Result<v1::ContainerStats> GrpcRuntime::containerStats(const std::string& containerId) {
  v1::ContainerStatsRequest request;
  request.set_container_id(containerId);
  v1::ContainerStatsResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ContainerStats, "ContainerStats",
                  request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::move(*response.mutable_stats());
}

Result<std::vector<v1::ContainerStats>> GrpcRuntime::listContainerStats(
    const v1::ContainerStatsFilter& filter) {
  v1::ListContainerStatsRequest request;
  *request.mutable_filter() = filter;
  v1::ListContainerStatsResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ListContainerStats,
                  "ListContainerStats", request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::vector<v1::ContainerStats>(response.stats().begin(), response.stats().end());
}

Result<std::vector<v1::PodSandboxStats>> GrpcRuntime::listPodSandboxStats(
    const v1::PodSandboxStatsFilter& filter) {
  v1::ListPodSandboxStatsRequest request;
  *request.mutable_filter() = filter;
  v1::ListPodSandboxStatsResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::ListPodSandboxStats,
                  "ListPodSandboxStats", request, &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::vector<v1::PodSandboxStats>(response.stats().begin(), response.stats().end());
}

Status GrpcRuntime::updateRuntimeConfig(const v1::RuntimeConfig& config) {
  v1::UpdateRuntimeConfigRequest request;
  *request.mutable_runtime_config() = config;
  v1::UpdateRuntimeConfigResponse response;
  return call(runtime_.get(), &v1::RuntimeService::Stub::UpdateRuntimeConfig, "UpdateRuntimeConfig",
              request, &response, options_.callTimeout);
}

Result<v1::RuntimeStatus> GrpcRuntime::status() {
  v1::StatusRequest request;
  v1::StatusResponse response;
  Status s = call(runtime_.get(), &v1::RuntimeService::Stub::Status, "Status", request, &response,
                  options_.callTimeout);
  if (!s.ok()) return s;
  return std::move(*response.mutable_status());
}

Result<std::vector<v1::Image>> GrpcRuntime::listImages(const v1::ImageFilter& filter) {
  v1::ListImagesRequest request;
  *request.mutable_filter() = filter;
  v1::ListImagesResponse response;
  Status s = call(images_.get(), &v1::ImageService::Stub::ListImages, "ListImages", request,
                  &response, options_.callTimeout);
  if (!s.ok()) return s;
  return std::vector<v1::Image>(response.images().begin(), response.images().end());
}

Result<v1::ImageStatusResponse> GrpcRuntime::imageStatus(const v1::ImageSpec& image) {
  v1::ImageStatusRequest request;
  *request.mutable_image() = image;
  v1::ImageStatusResponse response;
  Status s = call(images_.get(), &v1::ImageService::Stub::ImageStatus, "ImageStatus", request,
                  &response, options_.callTimeout);
  // Some runtimes answer NotFound instead of an empty response: the interface promises the latter.
  if (s.code() == 404) return v1::ImageStatusResponse();
  if (!s.ok()) return s;
  return response;
}

Result<std::string> GrpcRuntime::pullImage(const v1::ImageSpec& image,
                                           const v1::PodSandboxConfig* sandboxConfig) {
  v1::PullImageRequest request;
  *request.mutable_image() = image;
  if (sandboxConfig != nullptr) *request.mutable_sandbox_config() = *sandboxConfig;
  v1::PullImageResponse response;
  Status s = call(images_.get(), &v1::ImageService::Stub::PullImage, "PullImage", request,
                  &response, options_.longCallTimeout);
  if (!s.ok()) return s;
  return response.image_ref();
}

Status GrpcRuntime::removeImage(const v1::ImageSpec& image) {
  v1::RemoveImageRequest request;
  *request.mutable_image() = image;
  v1::RemoveImageResponse response;
  return call(images_.get(), &v1::ImageService::Stub::RemoveImage, "RemoveImage", request,
              &response, options_.longCallTimeout);
}

}  // namespace minik8s::kubelet::cri
