#include "scheduler/framework.h"

#include <algorithm>

#include "scheduler/plugins.h"

namespace minik8s::scheduler {

Result<Policy> parsePolicy(const std::string& text) {
  if (text == "default" || text.empty()) return Policy::kDefault;
  if (text == "round-robin") return Policy::kRoundRobin;
  if (text == "random") return Policy::kRandom;
  if (text == "least-allocated") return Policy::kLeastAllocated;
  return Status::BadRequest("unknown scheduler policy \"" + text +
                            "\": use default, round-robin, random or least-allocated");
}

std::string fitErrorMessage(size_t numNodes, const std::map<std::string, int>& reasonCounts) {
  std::vector<std::string> parts;
  for (const auto& [reason, count] : reasonCounts) {
    parts.push_back(std::to_string(count) + " " + reason);
  }
  std::sort(parts.begin(), parts.end());  // Kubernetes sorts the "N reason" strings
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : ", ") + p;
  return "0/" + std::to_string(numNodes) + " nodes are available: " + joined + ".";
}

Framework::Framework(std::vector<std::unique_ptr<FilterPlugin>> filters,
                     std::vector<WeightedScore> scores, Policy policy, uint64_t seed)
    : filters_(std::move(filters)), scores_(std::move(scores)), policy_(policy), random_(seed) {}

std::unique_ptr<Framework> Framework::withDefaultPlugins(Policy policy, uint64_t seed) {
  std::vector<std::unique_ptr<FilterPlugin>> filters;
  for (const auto& name : defaultFilterOrder()) filters.push_back(filterPlugins().at(name)());
  std::vector<WeightedScore> scores;
  auto add = [&](const char* name) { scores.push_back({scorePlugins().at(name)(), 1}); };
  if (policy == Policy::kDefault) {
    add("NodeResourcesLeastAllocated");
    add("NodeResourcesBalancedAllocation");
    add("SelectorSpread");
  } else if (policy == Policy::kLeastAllocated) {
    add("NodeResourcesLeastAllocated");
  }
  return std::make_unique<Framework>(std::move(filters), std::move(scores), policy, seed);
}

std::vector<int64_t> Framework::scoreNodes(const PodInfo& pod,
                                           const std::vector<const NodeInfo*>& feasible) const {
  std::vector<int64_t> total(feasible.size(), 0);
  for (const auto& s : scores_) {
    std::vector<int64_t> part = s.plugin->score(pod, feasible);
    for (size_t i = 0; i < total.size() && i < part.size(); ++i) total[i] += part[i] * s.weight;
  }
  return total;
}

ScheduleResult Framework::schedule(const PodInfo& pod, const ClusterView& cluster) {
  ScheduleResult result;
  if (cluster.nodes.empty()) {
    result.message = "no nodes available to schedule pods";
    return result;
  }
  std::vector<std::unique_ptr<FilterState>> states;
  states.reserve(filters_.size());
  for (const auto& f : filters_) states.push_back(f->preFilter(pod, cluster));
  std::vector<const NodeInfo*> feasible;
  for (const NodeInfo* node : cluster.nodes) {
    std::vector<std::string> why;
    for (size_t i = 0; i < filters_.size(); ++i) {
      why = filters_[i]->filterWith(pod, *node, cluster, states[i].get());
      if (!why.empty()) break;  // the first failing plugin speaks for the node
    }
    if (why.empty()) {
      feasible.push_back(node);
    } else {
      for (const auto& r : why) ++result.reasonCounts[r];
    }
  }
  result.feasibleNodes = feasible.size();
  if (feasible.empty()) {
    result.message = fitErrorMessage(cluster.nodes.size(), result.reasonCounts);
    return result;
  }
  size_t chosen = 0;
  switch (policy_) {
    case Policy::kRoundRobin:
      chosen = roundRobinNext_++ % feasible.size();
      break;
    case Policy::kRandom:
      chosen = std::uniform_int_distribution<size_t>(0, feasible.size() - 1)(random_);
      break;
    case Policy::kDefault:
    case Policy::kLeastAllocated: {
      std::vector<int64_t> scores = scoreNodes(pod, feasible);
      int64_t best = *std::max_element(scores.begin(), scores.end());
      // Ties are broken at random, as kube-scheduler does, so equal nodes share the load.
      size_t ties = 0;
      for (size_t i = 0; i < scores.size(); ++i) {
        if (scores[i] != best) continue;
        ++ties;
        if (std::uniform_int_distribution<size_t>(1, ties)(random_) == 1) chosen = i;
      }
      break;
    }
  }
  result.nodeName = feasible[chosen]->name();
  return result;
}

std::vector<std::string> Framework::filterNames() const {
  std::vector<std::string> out;
  for (const auto& f : filters_) out.push_back(f->name());
  return out;
}

std::vector<std::string> Framework::scoreNames() const {
  std::vector<std::string> out;
  for (const auto& s : scores_) out.push_back(s.plugin->name());
  return out;
}

}  // namespace minik8s::scheduler
