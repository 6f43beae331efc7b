// CriStatsProvider: the agent server's resource usage (kubectl top, the metrics API, the HPA,
// /metrics/cadvisor and /metrics/resource) computed from one CRI ListContainers and one
// ListContainerStats per call for the running containers, grouped into pods by their CRI labels,
// plus the node's own figures from /proc.
//
// A pod's network counters are read from <procRoot>/<pid>/net/dev of its sandbox's pause process,
// the pid coming from the runtime's verbose PodSandboxStatus (containerd's info["info"].pid). That
// call is made once per sandbox: the pid, the sandbox's cgroup parent (the pod cgroup, used as
// cAdvisor's `id`), its pause image and creation time are cached until the sandbox is gone.
// hostNetwork pods get no network figures (their namespace is the node's, whose traffic would be
// counted twice). The node's interfaces come from <procRoot>/self/net/dev: the agent runs in the
// node's network namespace. Machine facts (cores, memory, machine and boot ids) are read once.
//
// Thread-safe: the sandbox cache is guarded by a mutex that is never held across a runtime call.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "cri/runtime_service.h"
#include "kubelet/server/stats_summary.h"

namespace minik8s::kubelet {

class CriStatsProvider : public server::StatsProvider {
 public:
  CriStatsProvider(cri::RuntimeService& runtime, std::string nodeName,
                   std::string procRoot = "/proc");
  Result<server::StatsSummary> summary() override;

 private:
  // What the verbose PodSandboxStatus told about a sandbox.
  struct SandboxFacts {
    int pid = 0;  // 0: unknown
    bool hostNetwork = false;
    std::string cgroupParent, image;
    std::optional<Clock::time_point> createdAt;
  };
  // From the cache, else asked of the runtime (nullopt when it cannot say).
  std::optional<SandboxFacts> sandboxFacts(const std::string& sandboxId);
  void fillSandbox(server::PodUsage& pod, const std::string& sandboxId);

  cri::RuntimeService& runtime_;
  std::string nodeName_;
  std::string procRoot_;
  server::MachineFacts machine_;
  std::mutex mu_;
  std::map<std::string, SandboxFacts> sandboxes_;  // by sandbox id
};

}  // namespace minik8s::kubelet
