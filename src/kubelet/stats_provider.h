// CriStatsProvider: the agent server's resource usage summary (kubectl top, the metrics API,
// the HPA) computed from CRI ListContainerStats for the running containers, grouped into pods
// by their CRI labels, plus the node's own figures from /proc. Thread-safe (stateless).
#pragma once

#include <string>

#include "cri/runtime_service.h"
#include "kubelet/server/stats_summary.h"

namespace minik8s::kubelet {

class CriStatsProvider : public server::StatsProvider {
 public:
  CriStatsProvider(cri::RuntimeService& runtime, std::string nodeName)
      : runtime_(runtime), nodeName_(std::move(nodeName)) {}
  Result<server::StatsSummary> summary() override;

 private:
  cri::RuntimeService& runtime_;
  std::string nodeName_;
};

}  // namespace minik8s::kubelet
