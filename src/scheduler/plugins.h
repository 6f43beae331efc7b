// The built-in filter and score plugins, under Kubernetes' plugin names, and a registry that
// makes them by name. Each plugin is stateless and thread-safe.
//
// Filters (in the order the default profile runs them; a node's first failing filter gives its
// reasons): NodeReady, NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector and
// required nodeAffinity), NodePorts, NodeResourcesFit, InterPodAffinity (required pod affinity
// and anti-affinity). Scores: NodeResourcesLeastAllocated, NodeResourcesBalancedAllocation,
// SelectorSpread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "api/node_placement.h"
#include "scheduler/framework.h"

namespace minik8s::scheduler {

// Kubernetes' reason strings, as FitError messages count them.
namespace reasons {
inline constexpr const char* kNodeNotReady = "node(s) were not ready";
inline constexpr const char* kNodeUnschedulable = "node(s) were unschedulable";
inline constexpr const char* kNodeAffinity = "node(s) didn't match Pod's node affinity/selector";
inline constexpr const char* kNodePorts =
    "node(s) didn't have free ports for the requested pod ports";
inline constexpr const char* kTooManyPods = "Too many pods";
inline constexpr const char* kPodAffinity = "node(s) didn't match pod affinity rules";
inline constexpr const char* kPodAntiAffinity = "node(s) didn't match pod anti-affinity rules";
inline constexpr const char* kExistingAntiAffinity =
    "node(s) didn't satisfy existing pods anti-affinity rules";
}  // namespace reasons

using FilterFactory = std::function<std::unique_ptr<FilterPlugin>()>;
using ScoreFactory = std::function<std::unique_ptr<ScorePlugin>()>;

// Name -> factory for every built-in plugin.
const std::map<std::string, FilterFactory>& filterPlugins();
const std::map<std::string, ScoreFactory>& scorePlugins();
// The default profile's filter order.
const std::vector<std::string>& defaultFilterOrder();

// Taints and node affinity: the rules live in api/node_placement.h (the DaemonSet controller
// shares them).
using api::matchesNodeSelectorAndAffinity;
using api::toleratesTaint;

}  // namespace minik8s::scheduler
