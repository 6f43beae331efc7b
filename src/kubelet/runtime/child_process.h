// A supervised child process: started with fork/exec, output appended to a log file, stopped by
// PID with SIGTERM and, after a grace period, SIGKILL. Used for the node's containerd and the
// cluster registry. Not thread-safe: one owner drives it (the supervisors lock around it).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::kubelet::runtime {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // stops the process if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // argv[0] is the program (looked up on PATH); stdout and stderr go to `logFile`.
  Status start(const std::vector<std::string>& argv, const std::string& logFile);
  // True while the process runs; reaps it (and records its exit) once it has ended.
  bool running();
  // SIGTERM, wait up to `grace`, then SIGKILL; returns once the process is reaped.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  pid_t pid() const { return pid_; }
  int lastExitStatus() const { return exitStatus_; }  // raw wait status of the last exit

 private:
  pid_t pid_ = -1;
  int exitStatus_ = 0;
};

// True when something accepts connections on the unix socket at `path`.
bool unixSocketAnswers(const std::string& path);
// True when something accepts TCP connections on host:port (IPv4 literal).
bool tcpPortAnswers(const std::string& host, int port);

}  // namespace minik8s::kubelet::runtime
