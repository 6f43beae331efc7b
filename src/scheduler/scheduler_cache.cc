#include "scheduler/scheduler_cache.h"

#include "common/json_pointer.h"

namespace minik8s::scheduler {

void SchedulerCache::rebuildViewLocked() {
  view_.nodes.clear();
  for (const auto& name : presentNodes_) view_.nodes.push_back(&nodes_.at(name));
}

void SchedulerCache::addOrUpdateNode(json node) {
  std::lock_guard l(mu_);
  std::string name = valueAt(node, "/metadata/name", std::string());
  nodes_[name].setNode(std::move(node));
  if (presentNodes_.insert(name).second) rebuildViewLocked();
}

void SchedulerCache::removeNode(const std::string& name) {
  std::lock_guard l(mu_);
  if (presentNodes_.erase(name) == 0) return;
  auto it = nodes_.find(name);
  if (it != nodes_.end() && it->second.pods().empty()) nodes_.erase(it);
  rebuildViewLocked();
}

void SchedulerCache::placeLocked(PodInfo pod, const std::string& nodeName) {
  unplaceLocked(pod.key);
  podNode_[pod.key] = nodeName;
  auto [it, inserted] = nodes_.try_emplace(nodeName);
  if (inserted) it->second.setNode({{"metadata", {{"name", nodeName}}}});
  it->second.addPod(pod);
}

void SchedulerCache::unplaceLocked(const std::string& key) {
  auto it = podNode_.find(key);
  if (it == podNode_.end()) return;
  auto node = nodes_.find(it->second);
  if (node != nodes_.end()) {
    node->second.removePod(key);
    if (node->second.pods().empty() && !presentNodes_.count(node->first)) nodes_.erase(node);
  }
  podNode_.erase(it);
}

void SchedulerCache::addOrUpdatePod(const json& pod) {
  addOrUpdatePod(std::make_shared<const json>(pod));
}

void SchedulerCache::addOrUpdatePod(std::shared_ptr<const json> pod) {
  const std::string phase = valueAt(*pod, "/status/phase", std::string());
  PodInfo info = makePodInfo(std::move(pod));
  std::lock_guard l(mu_);
  if (info.nodeName.empty()) {
    // Still pending as far as the server knows; an assumed placement stays until the binding.
    if (!assumed_.count(info.key)) unplaceLocked(info.key);
    return;
  }
  assumed_.erase(info.key);
  if (phase == "Succeeded" || phase == "Failed") {
    unplaceLocked(info.key);
    return;
  }
  std::string node = info.nodeName;
  placeLocked(std::move(info), node);
}

void SchedulerCache::removePod(const std::string& key) {
  std::lock_guard l(mu_);
  assumed_.erase(key);
  unplaceLocked(key);
}

void SchedulerCache::assumePod(PodInfo pod, const std::string& nodeName) {
  std::lock_guard l(mu_);
  assumed_.insert(pod.key);
  pod.nodeName = nodeName;
  placeLocked(std::move(pod), nodeName);
}

void SchedulerCache::forgetPod(const std::string& key) {
  std::lock_guard l(mu_);
  if (assumed_.erase(key)) unplaceLocked(key);
}

bool SchedulerCache::isAssumed(const std::string& key) {
  std::lock_guard l(mu_);
  return assumed_.count(key) > 0;
}

size_t SchedulerCache::nodeCount() {
  std::lock_guard l(mu_);
  return presentNodes_.size();
}

std::string SchedulerCache::nodeOf(const std::string& key) {
  std::lock_guard l(mu_);
  auto it = podNode_.find(key);
  return it == podNode_.end() ? "" : it->second;
}

}  // namespace minik8s::scheduler
