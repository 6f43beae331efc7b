// The node's resource usage summary served at GET /stats/summary, in the shape of the
// Kubernetes kubelet's stats/v1alpha1 Summary (node and pods, cpu and memory only), which the
// API server's metrics API reads.
//
// StatsProvider is the seam: the kubelet core gives the agent server one backed by CRI stats;
// readNodeStats() reads the node's own figures from /proc. Values are plain data; providers are
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_util.h"

namespace minik8s::kubelet::server {

struct UsageSample {
  Clock::time_point time{};
  std::optional<uint64_t> usageCoreNanoSeconds;  // cumulative cpu time
  std::optional<uint64_t> usageNanoCores;        // current rate, when the source knows it
  std::optional<uint64_t> workingSetBytes;
};

struct ContainerUsage {
  std::string name;
  UsageSample usage;
};

struct PodUsage {
  std::string name, namespaceName, uid;
  std::vector<ContainerUsage> containers;
};

struct StatsSummary {
  std::string nodeName;
  UsageSample node;
  std::vector<PodUsage> pods;
};

// {"node":{"nodeName",...,"cpu":{"time","usageNanoCores","usageCoreNanoSeconds"},"memory":
// {"time","workingSetBytes"}},"pods":[{"podRef":{name,namespace,uid},"containers":[...],"cpu",
// "memory"}]}; a pod's cpu and memory are the sums over its containers.
json summaryToJson(const StatsSummary& summary);

class StatsProvider {
 public:
  virtual ~StatsProvider() = default;
  virtual Result<StatsSummary> summary() = 0;
};

// Cumulative busy cpu time from the first line of /proc/stat ("cpu  user nice system idle iowait
// irq softirq steal ..."), in nanoseconds given the clock ticks per second.
std::optional<uint64_t> parseProcStatCpu(const std::string& procStat, long ticksPerSecond);
// MemTotal - MemAvailable from /proc/meminfo, in bytes.
std::optional<uint64_t> parseMeminfoWorkingSet(const std::string& meminfo);
// The node's own usage sample from /proc (no rate: the consumer derives it).
UsageSample readNodeStats(Clock::time_point now);

}  // namespace minik8s::kubelet::server
