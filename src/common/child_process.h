// A supervised child process (a daemon we own: the node's containerd, the cluster registry,
// dnsmasq, the gateway's nginx): started with fork/exec in its own process group, stdin from
// /dev/null and output appended to a log file, stopped by PID with a stop signal and, after a
// grace period, SIGKILL. For a program run to completion use runProgram (common/command.h).
//
// Not thread-safe: one owner drives it (supervisors lock around it).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s {

// How a child is asked to end.
struct StopPolicy {
  int signal = SIGTERM;    // nginx wants SIGQUIT: finish the requests in flight
  bool killGroup = false;  // after the grace, SIGKILL its whole process group (nginx's workers)
};

class ChildProcess {
 public:
  explicit ChildProcess(StopPolicy policy = {}) : policy_(policy) {}
  ~ChildProcess();  // stops the process if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // argv[0] is the program (looked up on PATH); stdout and stderr go to `logFile` ("" means
  // /dev/null). A no-op while the process runs. Fails when the program cannot be executed.
  Status start(const std::vector<std::string>& argv, const std::string& logFile);
  // True while the process runs; reaps it (and records its exit) once it has ended.
  bool running();
  // Sends `signo` (e.g. SIGHUP: re-read the configuration); Unavailable when not running.
  Status signal(int signo);
  // The stop signal, wait up to `grace`, then SIGKILL; returns once the process is reaped.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  pid_t pid() const { return pid_; }
  int lastExitStatus() const { return exitStatus_; }  // raw wait status of the last exit

 private:
  StopPolicy policy_;
  pid_t pid_ = -1;
  int exitStatus_ = 0;
};

// True when something accepts connections on the unix socket at `path`.
bool unixSocketAnswers(const std::string& path);
// True when something accepts TCP connections on host:port (IPv4 literal).
bool tcpPortAnswers(const std::string& host, int port);

}  // namespace minik8s
