// The node's resource usage summary served at GET /stats/summary, in the shape of the
// Kubernetes kubelet's stats/v1alpha1 Summary (node and pods: cpu, memory, network), which the
// API server's metrics API reads; the same data feeds /metrics/cadvisor and /metrics/resource
// (prometheus_stats.h).
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
  std::optional<uint64_t> usageBytes;  // all memory charged, page cache included
  std::optional<uint64_t> rssBytes;    // anonymous memory and swap cache
};

// One interface of a network namespace, as /proc/<pid>/net/dev counts it.
struct InterfaceUsage {
  std::string name;
  uint64_t rxBytes = 0, rxPackets = 0, rxErrors = 0, rxDropped = 0;
  uint64_t txBytes = 0, txPackets = 0, txErrors = 0, txDropped = 0;
};

struct NetworkUsage {
  Clock::time_point time{};
  std::vector<InterfaceUsage> interfaces;  // loopback and host-side veths left out
};

struct ContainerUsage {
  std::string name;
  UsageSample usage;
  std::string id;     // the runtime's container id
  std::string image;  // as the pod spec names it
  std::optional<Clock::time_point> startTime;
};

struct PodUsage {
  std::string name, namespaceName, uid;
  std::vector<ContainerUsage> containers;
  // The pod's cgroup ("/kubepods/pod<uid>" style; see stats_provider.h) and its sandbox (the
  // pause container): cAdvisor reports a pod's network on the sandbox's series.
  std::string cgroupPath;
  std::string sandboxId, sandboxImage;
  std::optional<Clock::time_point> sandboxStartTime;
  std::optional<NetworkUsage> network;  // absent for hostNetwork pods (the node's traffic)
};

// What cAdvisor's machine_* metrics report.
struct MachineFacts {
  uint64_t cpuCores = 0, memoryBytes = 0;
  std::string machineId, systemUuid, bootId;
};

struct StatsSummary {
  std::string nodeName;
  UsageSample node;
  std::vector<PodUsage> pods;
  std::optional<NetworkUsage> nodeNetwork;
  std::optional<MachineFacts> machine;
};

// A pod's usage: the sums over its containers at the latest of their sample times (fields no
// container reports stay empty).
UsageSample podTotal(const PodUsage& pod);

// {"node":{"nodeName",...,"cpu":{"time","usageNanoCores","usageCoreNanoSeconds"},"memory":
// {"time","workingSetBytes","usageBytes","rssBytes"},"network":{...}},"pods":[{"podRef":
// {name,namespace,uid},"containers":[...],"cpu","memory","network"}]}; a pod's cpu and memory are
// podTotal(); network as the kubelet shapes it: {"time","name":"eth0","rxBytes","rxErrors",
// "txBytes","txErrors","interfaces":[{"name",...}]}.
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

// The interfaces of /proc/<pid>/net/dev (two header lines, then "name: 16 counters"), without the
// devices cAdvisor leaves out (names starting with lo, veth, docker or nerdctl). A malformed
// line fails the whole file, as in cAdvisor: partial counters would look like resets.
Result<std::vector<InterfaceUsage>> parseProcNetDev(const std::string& netDev);
// parseProcNetDev of a file (e.g. /proc/1234/net/dev); 404 when it cannot be read.
Result<NetworkUsage> readNetworkStats(const std::string& netDevPath, Clock::time_point now);

}  // namespace minik8s::kubelet::server
