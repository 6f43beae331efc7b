#include "kubelet/server/stats_summary.h"

#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "common/strings.h"

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
  if (u.usageBytes) mem["usageBytes"] = *u.usageBytes;
  if (u.rssBytes) mem["rssBytes"] = *u.rssBytes;
  out["cpu"] = cpu;
  out["memory"] = mem;
}

json interfaceToJson(const InterfaceUsage& i) {
  return {{"name", i.name},
          {"rxBytes", i.rxBytes},
          {"rxErrors", i.rxErrors},
          {"txBytes", i.txBytes},
          {"txErrors", i.txErrors}};
}

// The kubelet's NetworkStats: the default interface (eth0) inline, every interface listed.
void addNetwork(json& out, const std::optional<NetworkUsage>& n) {
  if (!n) return;
  json net = {{"time", formatNano(n->time)}};
  json interfaces = json::array();
  for (const auto& i : n->interfaces) {
    if (i.name == "eth0") net.update(interfaceToJson(i));
    interfaces.push_back(interfaceToJson(i));
  }
  net["interfaces"] = interfaces;
  out["network"] = net;
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

bool ignoredDevice(std::string_view name) {
  const std::string lower = asciiLower(name);
  for (std::string_view prefix : {"lo", "veth", "docker", "nerdctl"}) {
    if (lower.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

UsageSample podTotal(const PodUsage& pod) {
  UsageSample total;
  for (const auto& c : pod.containers) {
    total.time = std::max(total.time, c.usage.time);
    addOpt(total.usageCoreNanoSeconds, c.usage.usageCoreNanoSeconds);
    addOpt(total.usageNanoCores, c.usage.usageNanoCores);
    addOpt(total.workingSetBytes, c.usage.workingSetBytes);
    addOpt(total.usageBytes, c.usage.usageBytes);
    addOpt(total.rssBytes, c.usage.rssBytes);
  }
  return total;
}

json summaryToJson(const StatsSummary& summary) {
  json node = {{"nodeName", summary.nodeName}};
  addUsage(node, summary.node);
  addNetwork(node, summary.nodeNetwork);
  json pods = json::array();
  for (const auto& p : summary.pods) {
    json pod = {{"podRef", {{"name", p.name}, {"namespace", p.namespaceName}, {"uid", p.uid}}}};
    json containers = json::array();
    for (const auto& c : p.containers) {
      json cj = {{"name", c.name}};
      if (c.startTime) cj["startTime"] = formatRfc3339(*c.startTime);
      addUsage(cj, c.usage);
      containers.push_back(cj);
    }
    pod["containers"] = containers;
    addUsage(pod, podTotal(p));
    addNetwork(pod, p.network);
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

Result<std::vector<InterfaceUsage>> parseProcNetDev(const std::string& netDev) {
  std::istringstream in(netDev);
  std::string line;
  for (int header = 0; header < 2; ++header) {
    if (!std::getline(in, line)) return Status::BadRequest("net/dev: missing header lines");
  }
  std::vector<InterfaceUsage> out;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    // "  eth0: 1234 ..." (the counters may touch the colon when they are wide).
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      return Status::BadRequest("net/dev: no interface name in line \"" + line + "\"");
    }
    std::istringstream fields(line.substr(colon + 1));
    uint64_t v[16];
    int n = 0;
    while (n < 16 && fields >> v[n]) ++n;
    std::string extra;
    if (n != 16 || (fields >> extra)) {
      return Status::BadRequest("net/dev: expected 16 counters in line \"" + line + "\"");
    }
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (ignoredDevice(name)) continue;
    // receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes packets
    // errs drop fifo colls carrier compressed.
    out.push_back({name, v[0], v[1], v[2], v[3], v[8], v[9], v[10], v[11]});
  }
  return out;
}

Result<NetworkUsage> readNetworkStats(const std::string& netDevPath, Clock::time_point now) {
  std::ifstream in(netDevPath);
  if (!in) return Status::NotFoundMessage("cannot read " + netDevPath);
  std::stringstream ss;
  ss << in.rdbuf();
  auto interfaces = parseProcNetDev(ss.str());
  if (!interfaces.ok()) return interfaces.status();
  return NetworkUsage{now, std::move(*interfaces)};
}

}  // namespace minik8s::kubelet::server
