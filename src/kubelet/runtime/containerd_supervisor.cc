#include "kubelet/runtime/containerd_supervisor.h"

#include <signal.h>

#include <fstream>
#include <iterator>
#include <thread>

#include <sys/un.h>

#include <filesystem>

#include "common/logging.h"
#include "fmt/format.h"

namespace minik8s::kubelet::runtime {

ContainerdSupervisor::ContainerdSupervisor(ContainerdSupervisorOptions options)
    : options_(std::move(options)), layout_{options_.dataDir + "/containerd"} {}

ContainerdSupervisor::~ContainerdSupervisor() { stop(); }

std::vector<std::string> ContainerdSupervisor::commandLine() const {
  std::vector<std::string> argv;
  if (!options_.netns.empty()) {
    std::string path = options_.netns.find('/') == std::string::npos
                           ? "/var/run/netns/" + options_.netns
                           : options_.netns;
    argv = {"nsenter", "--net=" + path, "--"};
  }
  argv.insert(argv.end(), {options_.containerdBinary, "--config", layout_.configFile()});
  return argv;
}

Status ContainerdSupervisor::writeConfiguration() {
  if (layout_.socket().size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::BadRequest(fmt::format(
        "data dir {} is too long: the containerd socket path must stay under {} characters",
        options_.dataDir, sizeof(sockaddr_un::sun_path)));
  }
  std::error_code ec;
  for (const auto& d : {layout_.root(), layout_.state(), layout_.optDir(), layout_.runcRoot(),
                        layout_.cniConfDir(), layout_.cniIpamDir()}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Status::Internal(fmt::format("cannot create {}: {}", d, ec.message()));
  }
  if (Status s = writeMirrorHosts(layout_.hostsDir(), options_.registry); !s.ok()) return s;
  return writeFileAtomically(layout_.configFile(),
                             renderContainerdConfig(layout_, options_.config));
}

namespace {

// A containerd left running by an agent that was killed (SIGKILL gives it no chance to stop its
// child) still holds this node's state. Stop it before starting ours: containers survive a
// containerd restart (their shims keep them), and we go on supervising the new one.
void stopLeftoverContainerd(const ContainerdLayout& layout, std::chrono::milliseconds grace) {
  std::ifstream in(layout.pidFile());
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 1) return;
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  if (cmd.find("containerd") == std::string::npos ||
      cmd.find(layout.configFile()) == std::string::npos) {
    return;  // the pid was reused by something else: not ours to stop
  }
  LOG_INFO("stopping containerd {} left by an earlier agent", pid);
  ::kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

Status ContainerdSupervisor::launchAndWaitLocked(std::unique_lock<std::mutex>& lock) {
  stopLeftoverContainerd(layout_, options_.stopGrace);
  // A socket left by a killed containerd would make the readiness check pass too early.
  std::error_code ec;
  std::filesystem::remove(layout_.socket(), ec);
  if (Status s = process_.start(commandLine(), layout_.logFile()); !s.ok()) return s;
  {
    std::ofstream pidOut(layout_.pidFile(), std::ios::trunc);
    pidOut << process_.pid() << "\n";
  }
  auto deadline = std::chrono::steady_clock::now() + options_.startTimeout;
  while (!unixSocketAnswers(layout_.socket())) {
    if (!process_.running()) {
      return Status::Unavailable(
          fmt::format("containerd of node {} exited during start-up (status {}); see {}",
                      options_.nodeName, process_.lastExitStatus(), layout_.logFile()));
    }
    if (stopping_ || std::chrono::steady_clock::now() > deadline) {
      process_.stop(options_.stopGrace);
      return Status::Timeout(fmt::format("containerd of node {} did not open {} in time; see {}",
                                         options_.nodeName, layout_.socket(), layout_.logFile()));
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  LOG_INFO("containerd of node {} running (pid {}, socket {})", options_.nodeName, process_.pid(),
           layout_.socket());
  return Status::Ok();
}

Status ContainerdSupervisor::start() {
  std::unique_lock lock(mu_);
  if (monitor_.joinable()) return Status::Ok();
  stopping_ = false;
  if (Status s = writeConfiguration(); !s.ok()) return s;
  if (Status s = launchAndWaitLocked(lock); !s.ok()) return s;
  monitor_ = std::thread([this] { monitor(); });
  return Status::Ok();
}

void ContainerdSupervisor::monitor() {
  std::unique_lock lock(mu_);
  auto backoff = std::chrono::milliseconds(500);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(200));
    if (stopping_ || process_.running()) continue;
    LOG_WARN("containerd of node {} exited (status {}); restarting in {} ms", options_.nodeName,
             process_.lastExitStatus(), backoff.count());
    if (cv_.wait_for(lock, backoff, [this] { return stopping_; })) break;
    Status s = launchAndWaitLocked(lock);
    if (s.ok()) {
      ++restarts_;  // counted once containerd answers again
      backoff = std::chrono::milliseconds(500);
    } else if (!stopping_) {
      LOG_ERROR("{}", s.message());
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30000));
    }
  }
}

void ContainerdSupervisor::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  std::lock_guard lock(mu_);
  if (process_.running()) {
    LOG_INFO("stopping containerd of node {} (pid {})", options_.nodeName, process_.pid());
  }
  process_.stop(options_.stopGrace);
}

pid_t ContainerdSupervisor::pid() const {
  std::lock_guard lock(mu_);
  return process_.pid();
}

int ContainerdSupervisor::restarts() const {
  std::lock_guard lock(mu_);
  return restarts_;
}

}  // namespace minik8s::kubelet::runtime
