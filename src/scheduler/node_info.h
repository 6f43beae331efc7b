// PodInfo and NodeInfo: what the scheduler needs to know about pods and nodes, parsed once from
// their API objects so that filter and score plugins run on plain values.
//
// A NodeInfo aggregates the pods assigned (or assumed) to one node: their summed requests, the
// host ports they use and how many pods of each owner run there. Plain values, not thread-safe;
// the SchedulerCache guards them.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/status.h"

namespace minik8s::scheduler {

// Requests, or allocatable amounts, in the units the fit check compares.
struct Resources {
  int64_t milliCpu = 0;
  int64_t memory = 0;            // bytes
  int64_t ephemeralStorage = 0;  // bytes
  int64_t pods = 0;
  std::map<std::string, int64_t> scalar;  // extended resources (nvidia.com/gpu, hugepages-2Mi...)

  void add(const Resources& other);
  void subtract(const Resources& other);
};

// Kubernetes' defaults for containers without requests, used only when scoring.
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

// A host port a container asks for: {protocol, hostIP, port}; hostIP "0.0.0.0" means all.
struct HostPort {
  std::string protocol;
  std::string hostIp;
  int32_t port = 0;
  auto operator<=>(const HostPort&) const = default;
};

struct PodInfo {
  std::string key;  // namespace/name
  std::string ns, name, uid, nodeName;
  std::string ownerUid;  // the controller's uid, for spreading pods of one owner
  std::shared_ptr<const json> pod;
  Resources requests;         // max(sum(containers), each init container) + overhead; pods = 1
  Resources nonZeroRequests;  // the same with the scoring defaults for empty cpu/memory
  std::vector<HostPort> hostPorts;
  // The PersistentVolumeClaims its volumes use (api::podClaimNames), parsed once: the volume
  // filters run for every node and pod, and most pods have none.
  std::vector<std::string> claimNames;
  bool hasRequiredAntiAffinity = false;

  const json& labels() const;
};

// Parses a pod object. Malformed quantities count as zero (validation already rejected them).
// The shared form keeps the object it is given (an informer's, which nobody changes) instead
// of a copy.
PodInfo makePodInfo(json pod);
PodInfo makePodInfo(std::shared_ptr<const json> pod);

// The node's allocatable resources (status.allocatable, falling back to status.capacity).
Resources allocatableOf(const json& node);

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(json node);

  const std::string& name() const { return name_; }
  const json& node() const { return *node_; }
  void setNode(json node);

  // Its last Ready condition says "True" (parsed once per node update).
  bool ready() const { return ready_; }
  const Resources& allocatable() const { return allocatable_; }
  const Resources& requested() const { return requested_; }
  const Resources& nonZeroRequested() const { return nonZeroRequested_; }
  const std::map<std::string, PodInfo>& pods() const { return pods_; }
  const std::multiset<HostPort>& usedPorts() const { return usedPorts_; }
  // How many pods controlled by `ownerUid` run here.
  int podsOfOwner(const std::string& ownerUid) const;
  // Pods here whose spec has required pod anti-affinity terms.
  const std::set<std::string>& podsWithRequiredAntiAffinity() const { return antiAffinityPods_; }

  void addPod(const PodInfo& pod);
  bool removePod(const std::string& key);

 private:
  std::string name_;
  std::shared_ptr<const json> node_ = std::make_shared<const json>(json::object());
  bool ready_ = false;
  Resources allocatable_, requested_, nonZeroRequested_;
  std::map<std::string, PodInfo> pods_;
  std::multiset<HostPort> usedPorts_;
  std::map<std::string, int> ownerCounts_;
  std::set<std::string> antiAffinityPods_;
};

}  // namespace minik8s::scheduler
