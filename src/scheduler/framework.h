// The scheduling framework: named filter and score plugins run over a list of nodes to pick one
// for a pod, and the selection policy chosen at start (--scheduler-policy).
//
// A filter plugin says why a node cannot take the pod (Kubernetes' reason strings, such as
// "Insufficient cpu"); a score plugin ranks the feasible nodes 0..100. When no node fits,
// ScheduleResult::message is Kubernetes' FitError text: "0/3 nodes are available: 3 Insufficient
// cpu.". Plugins are stateless; a Framework is immutable after construction except for the
// round-robin cursor and random generator of schedule(), so one scheduling thread uses it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "scheduler/node_info.h"

namespace minik8s::scheduler {

// All nodes with their pods, as the scheduler cache sees them during one scheduling cycle.
struct ClusterView {
  std::vector<const NodeInfo*> nodes;
  // PersistentVolumeClaims ("namespace/name") and PersistentVolumes (name) as the scheduler's
  // informers see them; null when the scheduler watches no storage (tests): every claim is then
  // missing.
  std::function<std::optional<json>(const std::string&)> claim;
  std::function<std::optional<json>(const std::string&)> volume;
  std::function<std::vector<json>()> volumes;                           // all of them
  std::function<std::optional<json>(const std::string&)> storageClass;  // by name
  // storage.k8s.io CSINodes (by node name; all of them): which node serves which CSI driver.
  std::function<std::optional<json>(const std::string&)> csiNode;
  std::function<std::vector<json>()> csiNodes;
};

// What a filter plugin works out once per pod and scheduling cycle instead of once per node
// (Kubernetes' PreFilter): the pod's parsed terms, what in the cluster concerns the pod.
struct FilterState {
  virtual ~FilterState() = default;
};

class FilterPlugin {
 public:
  virtual ~FilterPlugin() = default;
  virtual std::string name() const = 0;
  // Empty when the node can take the pod; otherwise the reasons it cannot.
  virtual std::vector<std::string> filter(const PodInfo& pod, const NodeInfo& node,
                                          const ClusterView& cluster) const = 0;
  // The node-independent part of filter() for `pod` in `cluster` (null: none), and filter()
  // given it: the framework calls preFilter() once per cycle, then filterWith() for every node.
  // Both give what filter() alone gives.
  virtual std::unique_ptr<FilterState> preFilter(const PodInfo&, const ClusterView&) const {
    return nullptr;
  }
  virtual std::vector<std::string> filterWith(const PodInfo& pod, const NodeInfo& node,
                                              const ClusterView& cluster,
                                              const FilterState*) const {
    return filter(pod, node, cluster);
  }
};

class ScorePlugin {
 public:
  virtual ~ScorePlugin() = default;
  virtual std::string name() const = 0;
  // One score in [0, 100] per feasible node, in the order given.
  virtual std::vector<int64_t> score(const PodInfo& pod,
                                     const std::vector<const NodeInfo*>& feasible) const = 0;
};

enum class Policy { kDefault, kRoundRobin, kRandom, kLeastAllocated };

// "default", "round-robin", "random", "least-allocated"; BadRequest for anything else.
Result<Policy> parsePolicy(const std::string& text);

struct ScheduleResult {
  std::string nodeName;  // empty: the pod fits nowhere
  std::string message;   // why not, as Kubernetes words it
  size_t feasibleNodes = 0;
  std::map<std::string, int> reasonCounts;  // reason -> how many nodes gave it
};

// "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
std::string fitErrorMessage(size_t numNodes, const std::map<std::string, int>& reasonCounts);

class Framework {
 public:
  struct WeightedScore {
    std::unique_ptr<ScorePlugin> plugin;
    int64_t weight = 1;
  };

  Framework(std::vector<std::unique_ptr<FilterPlugin>> filters, std::vector<WeightedScore> scores,
            Policy policy = Policy::kDefault, uint64_t seed = std::random_device{}());

  // The plugins Kubernetes' default profile would run for this policy: every filter, and the
  // scores LeastAllocated, BalancedAllocation and SelectorSpread (only LeastAllocated for the
  // least-allocated policy, none for round-robin and random).
  static std::unique_ptr<Framework> withDefaultPlugins(Policy policy,
                                                       uint64_t seed = std::random_device{}());

  ScheduleResult schedule(const PodInfo& pod, const ClusterView& cluster);

  // Total weighted scores of the feasible nodes (exposed for tests).
  std::vector<int64_t> scoreNodes(const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& feasible) const;

  std::vector<std::string> filterNames() const;
  std::vector<std::string> scoreNames() const;

 private:
  std::vector<std::unique_ptr<FilterPlugin>> filters_;
  std::vector<WeightedScore> scores_;
  Policy policy_;
  std::mt19937_64 random_;
  uint64_t roundRobinNext_ = 0;
};

}  // namespace minik8s::scheduler
