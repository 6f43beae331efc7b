#include "kubelet/server/stats_summary.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace minik8s::kubelet::server {

namespace {

std::string formatNano(Clock::time_point t) {
  // RFC 3339 with nanoseconds, as Go's time.RFC3339Nano (trailing zeros trimmed).
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(t - secs).count();
  std::string base = formatRfc3339(secs);  // ...Z
  if (nanos == 0) return base;
  std::string frac = std::to_string(1000000000 + nanos).substr(1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return base.substr(0, base.size() - 1) + "." + frac + "Z";
}

void addUsage(json& out, const UsageSample& u) {
  json cpu = {{"time", formatNano(u.time)}};
  if (u.usageNanoCores) cpu["usageNanoCores"] = *u.usageNanoCores;
  if (u.usageCoreNanoSeconds) cpu["usageCoreNanoSeconds"] = *u.usageCoreNanoSeconds;
  json mem = {{"time", formatNano(u.time)}};
  if (u.workingSetBytes) mem["workingSetBytes"] = *u.workingSetBytes;
  out["cpu"] = cpu;
  out["memory"] = mem;
}

template <typename T>
void addOpt(std::optional<T>& sum, const std::optional<T>& v) {
  if (v) sum = sum.value_or(0) + *v;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

json summaryToJson(const StatsSummary& summary) {
  json node = {{"nodeName", summary.nodeName}};
  addUsage(node, summary.node);
  json pods = json::array();
  for (const auto& p : summary.pods) {
    json pod = {{"podRef", {{"name", p.name}, {"namespace", p.namespaceName}, {"uid", p.uid}}}};
    json containers = json::array();
    UsageSample total;
    for (const auto& c : p.containers) {
      json cj = {{"name", c.name}};
      addUsage(cj, c.usage);
      containers.push_back(cj);
      total.time = std::max(total.time, c.usage.time);
      addOpt(total.usageCoreNanoSeconds, c.usage.usageCoreNanoSeconds);
      addOpt(total.usageNanoCores, c.usage.usageNanoCores);
      addOpt(total.workingSetBytes, c.usage.workingSetBytes);
    }
    pod["containers"] = containers;
    addUsage(pod, total);
    pods.push_back(pod);
  }
  return {{"node", node}, {"pods", pods}};
}

std::optional<uint64_t> parseProcStatCpu(const std::string& procStat, long ticksPerSecond) {
  std::istringstream in(procStat);
  std::string label;
  in >> label;
  if (label != "cpu" || ticksPerSecond <= 0) return std::nullopt;
  // user nice system idle iowait irq softirq steal
  uint64_t v[8] = {};
  for (auto& x : v) {
    if (!(in >> x)) return std::nullopt;
  }
  uint64_t busyTicks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return busyTicks * (1000000000ULL / static_cast<uint64_t>(ticksPerSecond));
}

std::optional<uint64_t> parseMeminfoWorkingSet(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string key, unit;
  uint64_t value = 0;
  std::optional<uint64_t> total, available;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") available = value * 1024;
  }
  if (!total || !available || *available > *total) return std::nullopt;
  return *total - *available;
}

UsageSample readNodeStats(Clock::time_point now) {
  UsageSample s;
  s.time = now;
  s.usageCoreNanoSeconds = parseProcStatCpu(readFile("/proc/stat"), ::sysconf(_SC_CLK_TCK));
  s.workingSetBytes = parseMeminfoWorkingSet(readFile("/proc/meminfo"));
  return s;
}

}  // namespace minik8s::kubelet::server
