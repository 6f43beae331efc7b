#include "kubelet/stats_provider.h"

#include <map>
#include <set>

#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace {

std::string labelOf(const google::protobuf::Map<std::string, std::string>& labels,
                    const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? "" : it->second;
}

}  // namespace

Result<server::StatsSummary> CriStatsProvider::summary() {
  server::StatsSummary out;
  out.nodeName = nodeName_;
  out.node = server::readNodeStats(Clock::now());
  v1::ContainerFilter running;
  running.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  auto containers = runtime_.listContainers(running);
  if (!containers.ok()) return containers.status();
  std::set<std::string> runningIds;
  for (const auto& c : *containers) runningIds.insert(c.id());
  auto stats = runtime_.listContainerStats();
  if (!stats.ok()) return stats.status();
  std::map<std::string, server::PodUsage> pods;  // by uid
  for (const auto& s : *stats) {
    const auto& attrs = s.attributes();
    if (!runningIds.count(attrs.id())) continue;
    std::string uid = labelOf(attrs.labels(), kPodUidLabel);
    if (uid.empty()) continue;
    server::PodUsage& pod = pods[uid];
    pod.uid = uid;
    pod.name = labelOf(attrs.labels(), kPodNameLabel);
    pod.namespaceName = labelOf(attrs.labels(), kPodNamespaceLabel);
    server::ContainerUsage cu;
    cu.name = labelOf(attrs.labels(), kContainerNameLabel);
    if (cu.name.empty()) cu.name = attrs.metadata().name();
    int64_t ts = s.cpu().timestamp() ? s.cpu().timestamp() : s.memory().timestamp();
    cu.usage.time = ts ? Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                             std::chrono::nanoseconds(ts)))
                       : Clock::now();
    if (s.cpu().has_usage_core_nano_seconds())
      cu.usage.usageCoreNanoSeconds = s.cpu().usage_core_nano_seconds().value();
    if (s.cpu().has_usage_nano_cores())
      cu.usage.usageNanoCores = s.cpu().usage_nano_cores().value();
    if (s.memory().has_working_set_bytes())
      cu.usage.workingSetBytes = s.memory().working_set_bytes().value();
    pod.containers.push_back(std::move(cu));
  }
  for (auto& [uid, pod] : pods) out.pods.push_back(std::move(pod));
  return out;
}

}  // namespace minik8s::kubelet
