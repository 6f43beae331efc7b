#include "kubelet/cri/fake_runtime.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>

namespace minik8s::kubelet::cri {

namespace {

// Exit code of a process killed by SIGKILL, as runc reports it.
constexpr int kKilledExitCode = 137;
// Exit code of a process that died of the stop signal (SIGTERM).
constexpr int kTerminatedExitCode = 143;

bool labelsMatch(const google::protobuf::Map<std::string, std::string>& labels,
                 const google::protobuf::Map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

std::string fakeDigest(const std::string& seed) {
  // Not a real digest: stable, 64 hex characters, distinct per name.
  size_t h = std::hash<std::string>{}(seed);
  std::string hex;
  for (int i = 0; i < 4; ++i) {
    hex += fmt::format("{:016x}", h);
    h = std::hash<std::string>{}(hex);
  }
  return "sha256:" + hex;
}

Status notFound(const std::string& what, const std::string& id) {
  return Status::NotFoundMessage(fmt::format("{} \"{}\" not found", what, id));
}

}  // namespace

FakeRuntime::FakeRuntime(NanosClock clock) : clock_(std::move(clock)) {}

int64_t FakeRuntime::now() const {
  if (clock_) return clock_();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FakeRuntime::newId(const std::string& prefix) {
  return fmt::format("{}{:012x}", prefix, nextId_++);
}

Status FakeRuntime::enter(const std::string& method, const std::string& target) {
  calls_.push_back({method, target});
  auto it = injected_.find(method);
  if (it == injected_.end() || it->second.empty()) return Status::Ok();
  Status error = it->second.front();
  it->second.erase(it->second.begin());
  return error;
}

std::string FakeRuntime::normalizeImageName(const std::string& name) {
  if (name.rfind("sha256:", 0) == 0) return name;
  std::string rest = name;
  std::string digest;
  if (auto at = rest.find('@'); at != std::string::npos) {
    digest = rest.substr(at);
    rest = rest.substr(0, at);
  }
  std::string tag;
  auto lastSlash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (lastSlash == std::string::npos || colon > lastSlash)) {
    tag = rest.substr(colon);
    rest = rest.substr(0, colon);
  }
  auto firstSlash = rest.find('/');
  std::string first = firstSlash == std::string::npos ? "" : rest.substr(0, firstSlash);
  bool hasDomain = !first.empty() && (first.find('.') != std::string::npos ||
                                      first.find(':') != std::string::npos || first == "localhost");
  if (!hasDomain) {
    rest = (firstSlash == std::string::npos ? "docker.io/library/" : "docker.io/") + rest;
  }
  if (tag.empty() && digest.empty()) tag = ":latest";
  return rest + tag + digest;
}

const v1::Image* FakeRuntime::findImage(const std::string& nameOrId) const {
  auto it = images_.find(normalizeImageName(nameOrId));
  if (it != images_.end()) return &it->second;
  for (const auto& [name, image] : images_) {
    if (image.id() == nameOrId) return &image;
  }
  return nullptr;
}

void FakeRuntime::exitContainer(ContainerRecord& c, int exitCode, const std::string& reason) {
  c.status.set_state(v1::CONTAINER_EXITED);
  c.status.set_finished_at(now());
  c.status.set_exit_code(exitCode);
  c.status.set_reason(reason);
}

// ---- Test controls ---------------------------------------------------------------------------

Status FakeRuntime::setContainerExited(const std::string& containerId, int exitCode,
                                       const std::string& reason, const std::string& message) {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  exitContainer(it->second, exitCode, reason);
  it->second.status.set_message(message);
  return Status::Ok();
}

Status FakeRuntime::setSandboxNotReady(const std::string& podSandboxId) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(podSandboxId);
  if (it == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  it->second.status.set_state(v1::SANDBOX_NOTREADY);
  return Status::Ok();
}

std::string FakeRuntime::addImage(const std::string& name) {
  std::lock_guard lock(mu_);
  std::string normalized = normalizeImageName(name);
  auto& image = images_[normalized];
  if (image.id().empty()) {
    image.set_id(fakeDigest(normalized));
    image.add_repo_tags(normalized);
    image.set_size(1 << 20);
    image.mutable_spec()->set_image(normalized);
  }
  return image.id();
}

void FakeRuntime::setImageUser(const std::string& name, const std::string& user) {
  addImage(name);
  std::lock_guard lock(mu_);
  v1::Image& image = images_[normalizeImageName(name)];
  image.clear_uid();
  image.clear_username();
  const std::string id = user.substr(0, user.find(':'));
  if (id.empty()) return;
  if (id.find_first_not_of("0123456789") == std::string::npos) {
    image.mutable_uid()->set_value(std::stoll(id));
  } else {
    image.set_username(id);
  }
}

void FakeRuntime::setPullableByDefault(bool pullable) {
  std::lock_guard lock(mu_);
  pullableByDefault_ = pullable;
}

void FakeRuntime::setPullError(const std::string& image, Status error) {
  std::lock_guard lock(mu_);
  if (error.ok()) {
    pullErrors_.erase(normalizeImageName(image));
  } else {
    pullErrors_[normalizeImageName(image)] = std::move(error);
  }
}

void FakeRuntime::setExecSyncResult(const std::string& containerId, int exitCode,
                                    const std::string& stdoutText, const std::string& stderrText) {
  std::lock_guard lock(mu_);
  v1::ExecSyncResponse response;
  response.set_exit_code(exitCode);
  response.set_stdout(stdoutText);
  response.set_stderr(stderrText);
  execResults_[containerId] = std::move(response);
}

void FakeRuntime::setExecSyncHandler(ExecSyncHandler handler) {
  std::lock_guard lock(mu_);
  execHandler_ = std::move(handler);
}

void FakeRuntime::setContainerStats(const std::string& containerId, uint64_t usageCoreNanoSeconds,
                                    uint64_t usageNanoCores, uint64_t workingSetBytes) {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return;
  auto& stats = it->second.stats;
  int64_t t = now();
  stats.mutable_cpu()->set_timestamp(t);
  stats.mutable_cpu()->mutable_usage_core_nano_seconds()->set_value(usageCoreNanoSeconds);
  stats.mutable_cpu()->mutable_usage_nano_cores()->set_value(usageNanoCores);
  stats.mutable_memory()->set_timestamp(t);
  stats.mutable_memory()->mutable_working_set_bytes()->set_value(workingSetBytes);
  stats.mutable_memory()->mutable_usage_bytes()->set_value(workingSetBytes);
  stats.mutable_memory()->mutable_rss_bytes()->set_value(workingSetBytes);
}

void FakeRuntime::setSandboxPid(const std::string& podSandboxId, int pid) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(podSandboxId);
  if (it != sandboxes_.end()) it->second.pid = pid;
}

void FakeRuntime::injectError(const std::string& method, Status error, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) injected_[method].push_back(error);
}

void FakeRuntime::setNextPodIp(const std::string& ip) {
  std::lock_guard lock(mu_);
  nextPodIp_ = ip;
}

void FakeRuntime::setNetworkReady(bool ready) {
  std::lock_guard lock(mu_);
  networkReady_ = ready;
}

// ---- Assertions ------------------------------------------------------------------------------

std::vector<FakeRuntime::Call> FakeRuntime::calls() const {
  std::lock_guard lock(mu_);
  return calls_;
}

int FakeRuntime::callCount(const std::string& method) const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& call : calls_) n += call.method == method ? 1 : 0;
  return n;
}

void FakeRuntime::clearCalls() {
  std::lock_guard lock(mu_);
  calls_.clear();
}

Result<v1::ContainerConfig> FakeRuntime::containerConfig(const std::string& containerId) const {
  std::lock_guard lock(mu_);
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  return it->second.config;
}

Result<v1::PodSandboxConfig> FakeRuntime::sandboxConfig(const std::string& podSandboxId) const {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(podSandboxId);
  if (it == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  return it->second.config;
}

size_t FakeRuntime::sandboxCount() const {
  std::lock_guard lock(mu_);
  return sandboxes_.size();
}

size_t FakeRuntime::containerCount() const {
  std::lock_guard lock(mu_);
  return containers_.size();
}

// ---- RuntimeService --------------------------------------------------------------------------

Result<v1::VersionResponse> FakeRuntime::version() {
  std::lock_guard lock(mu_);
  if (Status s = enter("Version", ""); !s.ok()) return s;
  v1::VersionResponse response;
  response.set_version("0.1.0");
  response.set_runtime_name("fake");
  response.set_runtime_version("1.0.0");
  response.set_runtime_api_version("v1");
  return response;
}

Result<std::string> FakeRuntime::runPodSandbox(const v1::PodSandboxConfig& config,
                                               const std::string& runtimeHandler) {
  std::lock_guard lock(mu_);
  if (Status s = enter("RunPodSandbox", config.metadata().name()); !s.ok()) return s;
  if (config.metadata().name().empty() || config.metadata().uid().empty()) {
    return Status::BadRequest("sandbox config metadata needs a name and a uid");
  }
  for (const auto& [id, sandbox] : sandboxes_) {
    const auto& m = sandbox.config.metadata();
    if (m.name() == config.metadata().name() && m.namespace_() == config.metadata().namespace_() &&
        m.uid() == config.metadata().uid() && m.attempt() == config.metadata().attempt()) {
      return Status(409, "AlreadyExists",
                    fmt::format("sandbox name for {}/{} attempt {} is reserved by {}",
                                m.namespace_(), m.name(), m.attempt(), id));
    }
  }
  std::string id = newId("sandbox-");
  Sandbox& sandbox = sandboxes_[id];
  sandbox.config = config;
  auto& st = sandbox.status;
  st.set_id(id);
  *st.mutable_metadata() = config.metadata();
  st.set_state(v1::SANDBOX_READY);
  st.set_created_at(now());
  bool hostNetwork = config.linux().security_context().namespace_options().network() == v1::NODE;
  auto* options = st.mutable_linux()->mutable_namespaces()->mutable_options();
  *options = config.linux().security_context().namespace_options();
  if (!hostNetwork) {
    std::string ip = nextPodIp_.empty() ? fmt::format("10.88.0.{}", nextIpSuffix_++) : nextPodIp_;
    nextPodIp_.clear();
    st.mutable_network()->set_ip(ip);
  }
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  st.set_runtime_handler(runtimeHandler);
  return id;
}

Status FakeRuntime::stopPodSandbox(const std::string& podSandboxId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("StopPodSandbox", podSandboxId); !s.ok()) return s;
  auto it = sandboxes_.find(podSandboxId);
  if (it == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  it->second.status.set_state(v1::SANDBOX_NOTREADY);
  for (auto& [id, c] : containers_) {
    if (c.sandboxId == podSandboxId && c.status.state() == v1::CONTAINER_RUNNING) {
      exitContainer(c, kKilledExitCode, "Error");
    }
  }
  return Status::Ok();
}

Status FakeRuntime::removePodSandbox(const std::string& podSandboxId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("RemovePodSandbox", podSandboxId); !s.ok()) return s;
  sandboxes_.erase(podSandboxId);
  std::erase_if(containers_,
                [&](const auto& entry) { return entry.second.sandboxId == podSandboxId; });
  return Status::Ok();
}

Result<v1::PodSandboxStatus> FakeRuntime::podSandboxStatus(const std::string& podSandboxId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("PodSandboxStatus", podSandboxId); !s.ok()) return s;
  auto it = sandboxes_.find(podSandboxId);
  if (it == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  return it->second.status;
}

Result<v1::PodSandboxStatusResponse> FakeRuntime::podSandboxStatusVerbose(
    const std::string& podSandboxId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("PodSandboxStatus", podSandboxId); !s.ok()) return s;
  auto it = sandboxes_.find(podSandboxId);
  if (it == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  const Sandbox& sandbox = it->second;
  v1::PodSandboxStatusResponse response;
  *response.mutable_status() = sandbox.status;
  // The fields of containerd's sandbox info the kubelet reads (config in Go's JSON field names).
  json info = {
      {"pid", sandbox.pid},
      {"processStatus", sandbox.status.state() == v1::SANDBOX_READY ? "running" : "stopped"},
      {"image", "registry.k8s.io/pause:3.9"},
      {"config", {{"linux", {{"cgroup_parent", sandbox.config.linux().cgroup_parent()}}}}}};
  (*response.mutable_info())["info"] = info.dump();
  return response;
}

Result<std::vector<v1::PodSandbox>> FakeRuntime::listPodSandbox(
    const v1::PodSandboxFilter& filter) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ListPodSandbox", ""); !s.ok()) return s;
  std::vector<v1::PodSandbox> out;
  for (const auto& [id, sandbox] : sandboxes_) {
    const auto& st = sandbox.status;
    if (!filter.id().empty() && filter.id() != id) continue;
    if (filter.has_state() && filter.state().state() != st.state()) continue;
    if (!labelsMatch(st.labels(), filter.label_selector())) continue;
    v1::PodSandbox item;
    item.set_id(id);
    *item.mutable_metadata() = st.metadata();
    item.set_state(st.state());
    item.set_created_at(st.created_at());
    *item.mutable_labels() = st.labels();
    *item.mutable_annotations() = st.annotations();
    item.set_runtime_handler(st.runtime_handler());
    out.push_back(std::move(item));
  }
  return out;
}

Result<std::string> FakeRuntime::createContainer(const std::string& podSandboxId,
                                                 const v1::ContainerConfig& config,
                                                 const v1::PodSandboxConfig& sandboxConfig) {
  std::lock_guard lock(mu_);
  if (Status s = enter("CreateContainer", config.metadata().name()); !s.ok()) return s;
  auto sb = sandboxes_.find(podSandboxId);
  if (sb == sandboxes_.end()) return notFound("sandbox", podSandboxId);
  if (sb->second.status.state() != v1::SANDBOX_READY) {
    return Status::BadRequest(fmt::format("sandbox \"{}\" is not ready", podSandboxId));
  }
  if (config.metadata().name().empty()) return Status::BadRequest("container name is empty");
  for (const auto& [id, c] : containers_) {
    if (c.sandboxId == podSandboxId && c.config.metadata().name() == config.metadata().name() &&
        c.config.metadata().attempt() == config.metadata().attempt()) {
      return Status(409, "AlreadyExists",
                    fmt::format("container name {} attempt {} is reserved by {}",
                                config.metadata().name(), config.metadata().attempt(), id));
    }
  }
  const v1::Image* image = findImage(config.image().image());
  if (image == nullptr) {
    return notFound("image", config.image().image());
  }
  std::string id = newId("container-");
  ContainerRecord& c = containers_[id];
  c.sandboxId = podSandboxId;
  c.config = config;
  auto& st = c.status;
  st.set_id(id);
  *st.mutable_metadata() = config.metadata();
  st.set_state(v1::CONTAINER_CREATED);
  st.set_created_at(now());
  *st.mutable_image() = config.image();
  st.set_image_ref(image->id());
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  *st.mutable_mounts() = config.mounts();
  if (!config.log_path().empty()) {
    st.set_log_path(sb->second.config.log_directory().empty()
                        ? config.log_path()
                        : sb->second.config.log_directory() + "/" + config.log_path());
  }
  if (config.linux().has_resources()) {
    *st.mutable_resources()->mutable_linux() = config.linux().resources();
  }
  (void)sandboxConfig;
  return id;
}

Status FakeRuntime::startContainer(const std::string& containerId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("StartContainer", containerId); !s.ok()) return s;
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  auto& st = it->second.status;
  if (st.state() != v1::CONTAINER_CREATED) {
    return Status::BadRequest(fmt::format("container \"{}\" is in state {}, not CREATED",
                                          containerId, v1::ContainerState_Name(st.state())));
  }
  st.set_state(v1::CONTAINER_RUNNING);
  st.set_started_at(now());
  return Status::Ok();
}

Status FakeRuntime::stopContainer(const std::string& containerId, int64_t timeoutSeconds) {
  std::lock_guard lock(mu_);
  if (Status s = enter("StopContainer", containerId); !s.ok()) return s;
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  auto& c = it->second;
  if (c.status.state() == v1::CONTAINER_RUNNING) {
    // A grace period lets the process die of SIGTERM; none means SIGKILL straight away.
    exitContainer(c, timeoutSeconds > 0 ? kTerminatedExitCode : kKilledExitCode, "Error");
  } else if (c.status.state() == v1::CONTAINER_CREATED) {
    c.status.set_state(v1::CONTAINER_EXITED);
  }
  return Status::Ok();
}

Status FakeRuntime::removeContainer(const std::string& containerId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("RemoveContainer", containerId); !s.ok()) return s;
  containers_.erase(containerId);
  return Status::Ok();
}

v1::Container FakeRuntime::toContainer(const std::string& id, const ContainerRecord& c) const {
  v1::Container item;
  item.set_id(id);
  item.set_pod_sandbox_id(c.sandboxId);
  *item.mutable_metadata() = c.status.metadata();
  *item.mutable_image() = c.status.image();
  item.set_image_ref(c.status.image_ref());
  item.set_state(c.status.state());
  item.set_created_at(c.status.created_at());
  *item.mutable_labels() = c.status.labels();
  *item.mutable_annotations() = c.status.annotations();
  return item;
}

Result<std::vector<v1::Container>> FakeRuntime::listContainers(const v1::ContainerFilter& filter) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ListContainers", ""); !s.ok()) return s;
  std::vector<v1::Container> out;
  for (const auto& [id, c] : containers_) {
    if (!filter.id().empty() && filter.id() != id) continue;
    if (filter.has_state() && filter.state().state() != c.status.state()) continue;
    if (!filter.pod_sandbox_id().empty() && filter.pod_sandbox_id() != c.sandboxId) continue;
    if (!labelsMatch(c.status.labels(), filter.label_selector())) continue;
    out.push_back(toContainer(id, c));
  }
  return out;
}

Result<v1::ContainerStatus> FakeRuntime::containerStatus(const std::string& containerId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ContainerStatus", containerId); !s.ok()) return s;
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  return it->second.status;
}

Result<v1::ExecSyncResponse> FakeRuntime::execSync(const std::string& containerId,
                                                   const std::vector<std::string>& cmd,
                                                   std::chrono::seconds timeout) {
  ExecSyncHandler handler;
  v1::ExecSyncResponse fixed;
  {
    std::lock_guard lock(mu_);
    if (Status s = enter("ExecSync", containerId); !s.ok()) return s;
    auto it = containers_.find(containerId);
    if (it == containers_.end()) return notFound("container", containerId);
    if (it->second.status.state() != v1::CONTAINER_RUNNING) {
      return Status::BadRequest(fmt::format("container \"{}\" is not running", containerId));
    }
    handler = execHandler_;
    if (auto r = execResults_.find(containerId); r != execResults_.end()) {
      fixed = r->second;
    } else if (auto any = execResults_.find(""); any != execResults_.end()) {
      fixed = any->second;
    }
  }
  (void)timeout;
  if (handler) return handler(containerId, cmd);
  return fixed;
}

Result<std::string> FakeRuntime::exec(const v1::ExecRequest& request) {
  std::lock_guard lock(mu_);
  if (Status s = enter("Exec", request.container_id()); !s.ok()) return s;
  if (!containers_.contains(request.container_id())) {
    return notFound("container", request.container_id());
  }
  return fmt::format("http://127.0.0.1:0/exec/{}", request.container_id());
}

Result<std::string> FakeRuntime::attach(const v1::AttachRequest& request) {
  std::lock_guard lock(mu_);
  if (Status s = enter("Attach", request.container_id()); !s.ok()) return s;
  if (!containers_.contains(request.container_id())) {
    return notFound("container", request.container_id());
  }
  return fmt::format("http://127.0.0.1:0/attach/{}", request.container_id());
}

Result<std::string> FakeRuntime::portForward(const v1::PortForwardRequest& request) {
  std::lock_guard lock(mu_);
  if (Status s = enter("PortForward", request.pod_sandbox_id()); !s.ok()) return s;
  if (!sandboxes_.contains(request.pod_sandbox_id())) {
    return notFound("sandbox", request.pod_sandbox_id());
  }
  return fmt::format("http://127.0.0.1:0/portforward/{}", request.pod_sandbox_id());
}

Result<v1::ContainerStats> FakeRuntime::containerStats(const std::string& containerId) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ContainerStats", containerId); !s.ok()) return s;
  auto it = containers_.find(containerId);
  if (it == containers_.end()) return notFound("container", containerId);
  v1::ContainerStats stats = it->second.stats;
  auto* attributes = stats.mutable_attributes();
  attributes->set_id(containerId);
  *attributes->mutable_metadata() = it->second.status.metadata();
  *attributes->mutable_labels() = it->second.status.labels();
  *attributes->mutable_annotations() = it->second.status.annotations();
  return stats;
}

Result<std::vector<v1::ContainerStats>> FakeRuntime::listContainerStats(
    const v1::ContainerStatsFilter& filter) {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mu_);
    if (Status s = enter("ListContainerStats", ""); !s.ok()) return s;
    for (const auto& [id, c] : containers_) {
      // Like containerd: stats of running containers only.
      if (c.status.state() != v1::CONTAINER_RUNNING) continue;
      if (!filter.id().empty() && filter.id() != id) continue;
      if (!filter.pod_sandbox_id().empty() && filter.pod_sandbox_id() != c.sandboxId) continue;
      if (!labelsMatch(c.status.labels(), filter.label_selector())) continue;
      ids.push_back(id);
    }
  }
  std::vector<v1::ContainerStats> out;
  for (const auto& id : ids) {
    auto stats = containerStats(id);
    if (stats.ok()) out.push_back(std::move(stats.value()));
  }
  return out;
}

Result<std::vector<v1::PodSandboxStats>> FakeRuntime::listPodSandboxStats(
    const v1::PodSandboxStatsFilter& filter) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ListPodSandboxStats", ""); !s.ok()) return s;
  std::vector<v1::PodSandboxStats> out;
  for (const auto& [id, sandbox] : sandboxes_) {
    if (sandbox.status.state() != v1::SANDBOX_READY) continue;
    if (!filter.id().empty() && filter.id() != id) continue;
    if (!labelsMatch(sandbox.status.labels(), filter.label_selector())) continue;
    v1::PodSandboxStats stats;
    auto* attributes = stats.mutable_attributes();
    attributes->set_id(id);
    *attributes->mutable_metadata() = sandbox.status.metadata();
    *attributes->mutable_labels() = sandbox.status.labels();
    *attributes->mutable_annotations() = sandbox.status.annotations();
    auto* linux = stats.mutable_linux();
    uint64_t cpuTotal = 0, cpuRate = 0, workingSet = 0;
    for (const auto& [cid, c] : containers_) {
      if (c.sandboxId != id || c.status.state() != v1::CONTAINER_RUNNING) continue;
      v1::ContainerStats cs = c.stats;
      cs.mutable_attributes()->set_id(cid);
      *cs.mutable_attributes()->mutable_metadata() = c.status.metadata();
      cpuTotal += cs.cpu().usage_core_nano_seconds().value();
      cpuRate += cs.cpu().usage_nano_cores().value();
      workingSet += cs.memory().working_set_bytes().value();
      *linux->add_containers() = std::move(cs);
    }
    int64_t t = now();
    linux->mutable_cpu()->set_timestamp(t);
    linux->mutable_cpu()->mutable_usage_core_nano_seconds()->set_value(cpuTotal);
    linux->mutable_cpu()->mutable_usage_nano_cores()->set_value(cpuRate);
    linux->mutable_memory()->set_timestamp(t);
    linux->mutable_memory()->mutable_working_set_bytes()->set_value(workingSet);
    out.push_back(std::move(stats));
  }
  return out;
}

Status FakeRuntime::updateRuntimeConfig(const v1::RuntimeConfig& config) {
  std::lock_guard lock(mu_);
  return enter("UpdateRuntimeConfig", config.network_config().pod_cidr());
}

Result<v1::RuntimeStatus> FakeRuntime::status() {
  std::lock_guard lock(mu_);
  if (Status s = enter("Status", ""); !s.ok()) return s;
  v1::RuntimeStatus st;
  auto* runtimeReady = st.add_conditions();
  runtimeReady->set_type("RuntimeReady");
  runtimeReady->set_status(true);
  auto* networkReady = st.add_conditions();
  networkReady->set_type("NetworkReady");
  networkReady->set_status(networkReady_);
  if (!networkReady_) {
    networkReady->set_reason("NetworkPluginNotReady");
    networkReady->set_message("cni config uninitialized");
  }
  return st;
}

// ---- ImageService ----------------------------------------------------------------------------

Result<std::vector<v1::Image>> FakeRuntime::listImages(const v1::ImageFilter& filter) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ListImages", filter.image().image()); !s.ok()) return s;
  std::vector<v1::Image> out;
  if (!filter.image().image().empty()) {
    if (const v1::Image* image = findImage(filter.image().image())) out.push_back(*image);
    return out;
  }
  for (const auto& [name, image] : images_) out.push_back(image);
  return out;
}

Result<v1::ImageStatusResponse> FakeRuntime::imageStatus(const v1::ImageSpec& image) {
  std::lock_guard lock(mu_);
  if (Status s = enter("ImageStatus", image.image()); !s.ok()) return s;
  v1::ImageStatusResponse response;
  if (const v1::Image* found = findImage(image.image())) *response.mutable_image() = *found;
  return response;
}

Result<std::string> FakeRuntime::pullImage(const v1::ImageSpec& image,
                                           const v1::PodSandboxConfig* sandboxConfig) {
  std::string normalized = normalizeImageName(image.image());
  {
    std::lock_guard lock(mu_);
    if (Status s = enter("PullImage", image.image()); !s.ok()) return s;
    if (auto it = pullErrors_.find(normalized); it != pullErrors_.end()) return it->second;
    if (!pullableByDefault_ && !images_.contains(normalized)) {
      return notFound("image", normalized);
    }
  }
  (void)sandboxConfig;
  return addImage(normalized);
}

Status FakeRuntime::removeImage(const v1::ImageSpec& image) {
  std::lock_guard lock(mu_);
  if (Status s = enter("RemoveImage", image.image()); !s.ok()) return s;
  std::string normalized = normalizeImageName(image.image());
  if (images_.erase(normalized) == 0) {
    std::erase_if(images_, [&](const auto& entry) { return entry.second.id() == image.image(); });
  }
  return Status::Ok();
}

}  // namespace minik8s::kubelet::cri
