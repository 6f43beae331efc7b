// ProbeManager: liveness, readiness and startup probes of running containers, as the kubelet's
// prober does, driven by the pod sync (which runs each pod about once a second) instead of one
// thread per probe.
//
// probeContainer() runs the probes that are due for one container instance: exec through CRI
// ExecSync, httpGet (status 200-399) and tcpSocket against the pod IP. It honours
// initialDelaySeconds (counted from when the container was first seen running), periodSeconds,
// timeoutSeconds, successThreshold and failureThreshold. Until a startup probe succeeds the other
// probes do not run. Results are kept per container ID: a restarted container starts afresh
// (not ready, not started, alive). Thread-safe; a probe runs without holding the lock.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "client/work_queue.h"
#include "cri/runtime_service.h"

namespace minik8s::kubelet {

enum class ProbeType { kLiveness, kReadiness, kStartup };

// "Liveness", "Readiness", "Startup".
const char* probeTypeName(ProbeType t);

class ProbeManager {
 public:
  ProbeManager(cri::RuntimeService& runtime, const client::Clock& clock);

  // A failed probe attempt, for the Unhealthy event ("Liveness probe failed: ...").
  struct Failure {
    ProbeType type;
    std::string message;
  };
  std::vector<Failure> probeContainer(const json& container, const std::string& containerId,
                                      const std::string& podIP);

  // Started: the startup probe succeeded, or there is none.
  bool started(const std::string& containerId);
  // Ready: started and the readiness probe succeeded, or there is none.
  bool ready(const std::string& containerId);
  // The liveness or startup probe reached its failure threshold: the container must be killed
  // (and restarted as its pod's restartPolicy says).
  bool needsRestart(const std::string& containerId);
  // Forgets a removed container.
  void forget(const std::string& containerId);

  // One probe attempt (exposed for tests): true on success; `output` (optional) gets what
  // Kubernetes shows in the Unhealthy event: the command's output, the HTTP code, the dial error.
  bool runProbe(const json& probe, const json& container, const std::string& containerId,
                const std::string& podIP, std::string* output = nullptr);

 private:
  struct ProbeState {
    std::chrono::steady_clock::time_point lastRun{};
    bool ran = false;
    int successes = 0, failures = 0;
    bool result = false;
    bool thresholdReached = false;  // failureThreshold consecutive failures at some point
  };
  struct ContainerProbes {
    std::chrono::steady_clock::time_point firstSeen;
    bool hasStartup = false, hasReadiness = false;
    std::map<ProbeType, ProbeState> states;
  };

  cri::RuntimeService& runtime_;
  const client::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, ContainerProbes> containers_;
};

// Network probes with a deadline (the shared HTTP client has no timeouts). Exposed for tests.
bool tcpProbe(const std::string& host, int port, std::chrono::milliseconds timeout);
// The HTTP status code, or -1 when the connection or the answer failed.
int httpGetProbe(const std::string& host, int port, const std::string& path,
                 const std::vector<std::pair<std::string, std::string>>& headers,
                 std::chrono::milliseconds timeout);

}  // namespace minik8s::kubelet
