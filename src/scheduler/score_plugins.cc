// The score plugins of the default profile, with Kubernetes' formulas on a 0..100 scale.
#include <algorithm>
#include <cmath>

#include "scheduler/plugins.h"

namespace minik8s::scheduler {

namespace {

constexpr int64_t kMaxNodeScore = 100;

// (capacity - requested) * 100 / capacity, 0 when full or when there is no capacity.
int64_t leastRequested(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  return (capacity - requested) * kMaxNodeScore / capacity;
}

// Prefers the node with the most free cpu and memory once the pod is placed (containers without
// requests count as 100m cpu and 200Mi memory, as Kubernetes does).
class LeastAllocated : public ScorePlugin {
 public:
  std::string name() const override { return "NodeResourcesLeastAllocated"; }
  std::vector<int64_t> score(const PodInfo& pod,
                             const std::vector<const NodeInfo*>& feasible) const override {
    std::vector<int64_t> out;
    out.reserve(feasible.size());
    for (const NodeInfo* n : feasible) {
      int64_t cpu = leastRequested(n->nonZeroRequested().milliCpu + pod.nonZeroRequests.milliCpu,
                                   n->allocatable().milliCpu);
      int64_t mem = leastRequested(n->nonZeroRequested().memory + pod.nonZeroRequests.memory,
                                   n->allocatable().memory);
      out.push_back((cpu + mem) / 2);
    }
    return out;
  }
};

// Prefers nodes whose cpu and memory would be used in equal fractions: 100 * (1 - std dev).
class BalancedAllocation : public ScorePlugin {
 public:
  std::string name() const override { return "NodeResourcesBalancedAllocation"; }
  std::vector<int64_t> score(const PodInfo& pod,
                             const std::vector<const NodeInfo*>& feasible) const override {
    std::vector<int64_t> out;
    out.reserve(feasible.size());
    for (const NodeInfo* n : feasible) {
      auto fraction = [](int64_t requested, int64_t capacity) {
        if (capacity <= 0) return 1.0;
        return std::min(1.0, static_cast<double>(requested) / static_cast<double>(capacity));
      };
      double cpu =
          fraction(n->requested().milliCpu + pod.requests.milliCpu, n->allocatable().milliCpu);
      double mem = fraction(n->requested().memory + pod.requests.memory, n->allocatable().memory);
      double stdDev = std::abs(cpu - mem) / 2;  // the standard deviation of two values
      out.push_back(static_cast<int64_t>((1 - stdDev) * kMaxNodeScore));
    }
    return out;
  }
};

// Spreads the pods of one controller: fewer of its pods on a node, higher the score.
class SelectorSpread : public ScorePlugin {
 public:
  std::string name() const override { return "SelectorSpread"; }
  std::vector<int64_t> score(const PodInfo& pod,
                             const std::vector<const NodeInfo*>& feasible) const override {
    std::vector<int64_t> counts;
    counts.reserve(feasible.size());
    int64_t maxCount = 0;
    for (const NodeInfo* n : feasible) {
      counts.push_back(pod.ownerUid.empty() ? 0 : n->podsOfOwner(pod.ownerUid));
      maxCount = std::max(maxCount, counts.back());
    }
    for (auto& c : counts)
      c = maxCount == 0 ? kMaxNodeScore : kMaxNodeScore * (maxCount - c) / maxCount;
    return counts;
  }
};

template <typename T>
ScoreFactory scoreFactory() {
  return [] { return std::make_unique<T>(); };
}

}  // namespace

const std::map<std::string, ScoreFactory>& scorePlugins() {
  static const std::map<std::string, ScoreFactory> kPlugins = {
      {"NodeResourcesLeastAllocated", scoreFactory<LeastAllocated>()},
      {"NodeResourcesBalancedAllocation", scoreFactory<BalancedAllocation>()},
      {"SelectorSpread", scoreFactory<SelectorSpread>()},
  };
  return kPlugins;
}

}  // namespace minik8s::scheduler
