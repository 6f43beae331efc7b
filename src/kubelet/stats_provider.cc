#include "kubelet/stats_provider.h"

#include <map>
#include <set>
#include <vector>

#include "kubelet/node_status.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace {

std::string labelOf(const google::protobuf::Map<std::string, std::string>& labels,
                    const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

Clock::time_point fromNanos(int64_t nanos) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(nanos)));
}

}  // namespace

CriStatsProvider::CriStatsProvider(cri::RuntimeService& runtime, std::string nodeName,
                                   std::string procRoot)
    : runtime_(runtime), nodeName_(std::move(nodeName)), procRoot_(std::move(procRoot)) {
  MachineInfo m = collectMachineInfo();
  machine_.cpuCores = static_cast<uint64_t>(m.cpuCores);
  machine_.memoryBytes = static_cast<uint64_t>(m.memoryBytes);
  machine_.machineId = m.machineID;
  machine_.systemUuid = m.systemUUID;
  machine_.bootId = m.bootID;
}

std::optional<CriStatsProvider::SandboxFacts> CriStatsProvider::sandboxFacts(
    const std::string& sandboxId) {
  {
    std::lock_guard lock(mu_);
    if (auto it = sandboxes_.find(sandboxId); it != sandboxes_.end()) return it->second;
  }
  auto status = runtime_.podSandboxStatusVerbose(sandboxId);
  if (!status.ok()) return std::nullopt;
  SandboxFacts facts;
  const auto& st = status->status();
  facts.hostNetwork = st.linux().namespaces().options().network() == v1::NODE;
  if (st.created_at() > 0) facts.createdAt = fromNanos(st.created_at());
  if (auto it = status->info().find("info"); it != status->info().end()) {
    json info = json::parse(it->second, nullptr, false);
    if (info.is_object()) {
      if (info.contains("pid") && info["pid"].is_number_integer())
        facts.pid = info["pid"].get<int>();
      if (info.contains("image") && info["image"].is_string())
        facts.image = info["image"].get<std::string>();
      const json* parent = &info;
      for (const char* key : {"config", "linux", "cgroup_parent"}) {
        parent = parent->is_object() && parent->contains(key) ? &(*parent)[key] : nullptr;
        if (!parent) break;
      }
      if (parent && parent->is_string()) facts.cgroupParent = parent->get<std::string>();
    }
  }
  std::lock_guard lock(mu_);
  sandboxes_[sandboxId] = facts;
  return facts;
}

void CriStatsProvider::fillSandbox(server::PodUsage& pod, const std::string& sandboxId) {
  pod.sandboxId = sandboxId;
  auto facts = sandboxFacts(sandboxId);
  if (!facts) return;
  pod.cgroupPath = facts->cgroupParent;
  pod.sandboxImage = facts->image;
  pod.sandboxStartTime = facts->createdAt;
  if (facts->pid <= 0 || facts->hostNetwork) return;
  auto net = server::readNetworkStats(procRoot_ + "/" + std::to_string(facts->pid) + "/net/dev",
                                      Clock::now());
  if (net.ok()) {
    pod.network = std::move(*net);
  } else {
    // The pause process is gone (or the pid was not ours to read): ask again next time.
    std::lock_guard lock(mu_);
    sandboxes_.erase(sandboxId);
  }
}

Result<server::StatsSummary> CriStatsProvider::summary() {
  server::StatsSummary out;
  out.nodeName = nodeName_;
  out.node = server::readNodeStats(Clock::now());
  out.machine = machine_;
  if (auto net = server::readNetworkStats(procRoot_ + "/self/net/dev", Clock::now()); net.ok())
    out.nodeNetwork = std::move(*net);
  v1::ContainerFilter running;
  running.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  auto containers = runtime_.listContainers(running);
  if (!containers.ok()) return containers.status();
  std::map<std::string, const v1::Container*> runningById;
  for (const auto& c : *containers) runningById[c.id()] = &c;
  auto stats = runtime_.listContainerStats();
  if (!stats.ok()) return stats.status();
  std::map<std::string, server::PodUsage> pods;  // by uid
  std::map<std::string, std::string> sandboxOfPod;
  for (const auto& s : *stats) {
    const auto& attrs = s.attributes();
    auto container = runningById.find(attrs.id());
    if (container == runningById.end()) continue;
    std::string uid = labelOf(attrs.labels(), kPodUidLabel);
    if (uid.empty()) continue;
    server::PodUsage& pod = pods[uid];
    pod.uid = uid;
    pod.name = labelOf(attrs.labels(), kPodNameLabel);
    pod.namespaceName = labelOf(attrs.labels(), kPodNamespaceLabel);
    sandboxOfPod.emplace(uid, container->second->pod_sandbox_id());
    server::ContainerUsage cu;
    cu.name = labelOf(attrs.labels(), kContainerNameLabel);
    if (cu.name.empty()) cu.name = attrs.metadata().name();
    cu.id = attrs.id();
    cu.image = container->second->image().image();
    if (container->second->created_at() > 0)
      cu.startTime = fromNanos(container->second->created_at());
    int64_t ts = s.cpu().timestamp() ? s.cpu().timestamp() : s.memory().timestamp();
    cu.usage.time = ts ? fromNanos(ts) : Clock::now();
    if (s.cpu().has_usage_core_nano_seconds())
      cu.usage.usageCoreNanoSeconds = s.cpu().usage_core_nano_seconds().value();
    if (s.cpu().has_usage_nano_cores())
      cu.usage.usageNanoCores = s.cpu().usage_nano_cores().value();
    if (s.memory().has_working_set_bytes())
      cu.usage.workingSetBytes = s.memory().working_set_bytes().value();
    if (s.memory().has_usage_bytes()) cu.usage.usageBytes = s.memory().usage_bytes().value();
    if (s.memory().has_rss_bytes()) cu.usage.rssBytes = s.memory().rss_bytes().value();
    pod.containers.push_back(std::move(cu));
  }
  std::set<std::string> liveSandboxes;
  for (auto& [uid, pod] : pods) {
    const std::string& sandboxId = sandboxOfPod[uid];
    if (!sandboxId.empty()) {
      fillSandbox(pod, sandboxId);
      liveSandboxes.insert(sandboxId);
    }
    out.pods.push_back(std::move(pod));
  }
  std::lock_guard lock(mu_);
  std::erase_if(sandboxes_, [&](const auto& entry) { return !liveSandboxes.count(entry.first); });
  return out;
}

}  // namespace minik8s::kubelet
