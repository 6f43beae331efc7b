// ContainerdSupervisor: the node agent's own containerd, as k3s runs it.
//
// start() writes the node's config.toml and registry mirror files under <dataDir>/containerd,
// starts containerd as a child process (inside a network namespace through
// `nsenter --net=/var/run/netns/NAME` when one is given: `ip netns exec` would remount /sys and
// hide the cgroups from runc) and returns once its gRPC socket accepts connections. A monitor
// thread restarts containerd with back-off if it dies (running containers survive: their shims
// do). stop() (and the destructor) send SIGTERM, then SIGKILL, to that PID only.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/child_process.h"
#include "common/status.h"
#include "kubelet/runtime/containerd_config.h"

namespace minik8s::kubelet::runtime {

struct ContainerdSupervisorOptions {
  std::string dataDir;   // the node's data dir; containerd lives in <dataDir>/containerd
  std::string nodeName;  // names the log lines
  std::string netns;     // "" (current namespace), a name under /var/run/netns, or a path
  std::string registry = kDefaultRegistry;  // the cluster registry as this node reaches it
  ContainerdConfigOptions config;
  std::string containerdBinary = "containerd";
  std::chrono::milliseconds startTimeout{std::chrono::seconds(20)};
  std::chrono::milliseconds stopGrace{std::chrono::seconds(10)};
};

class ContainerdSupervisor {
 public:
  explicit ContainerdSupervisor(ContainerdSupervisorOptions options);
  ~ContainerdSupervisor();
  ContainerdSupervisor(const ContainerdSupervisor&) = delete;
  ContainerdSupervisor& operator=(const ContainerdSupervisor&) = delete;

  // Writes the configuration, starts containerd and waits for its socket.
  Status start();
  void stop();

  const ContainerdLayout& layout() const { return layout_; }
  std::string socketPath() const { return layout_.socket(); }  // the CRI endpoint
  pid_t pid() const;
  int restarts() const;  // how many times containerd was restarted and answered again

  // The command line used to run containerd (exposed for tests and diagnostics).
  std::vector<std::string> commandLine() const;

 private:
  Status writeConfiguration();
  Status launchAndWaitLocked(std::unique_lock<std::mutex>& lock);
  void monitor();

  const ContainerdSupervisorOptions options_;
  const ContainerdLayout layout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  ChildProcess process_;
  bool stopping_ = false;
  int restarts_ = 0;
  std::thread monitor_;
};

}  // namespace minik8s::kubelet::runtime
