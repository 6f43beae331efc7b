// SchedulerCache: the scheduler's own view of nodes and of the pods assigned to them, kept up
// to date from informer events, plus "assumed" pods: pods the scheduler has chosen a node for
// whose binding the informer has not yet reported. Counting assumed pods at once is what lets
// the next pod see the resources and spreading the previous one took.
//
// Pods that have terminated (phase Succeeded or Failed) hold no resources and are dropped.
// Thread-safe: informer handlers update it while the scheduling thread reads it in withView().
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "scheduler/framework.h"

namespace minik8s::scheduler {

class SchedulerCache {
 public:
  void addOrUpdateNode(json node);
  void removeNode(const std::string& name);

  // A pod seen by the informer: counted on its node when assigned and running, else dropped.
  // Confirms an assumed pod. The shared form keeps `pod` (an informer's object) without a copy.
  void addOrUpdatePod(const json& pod);
  void addOrUpdatePod(std::shared_ptr<const json> pod);
  void removePod(const std::string& key);

  // Counts `pod` on `nodeName` until the informer confirms or forgetPod() undoes it.
  void assumePod(PodInfo pod, const std::string& nodeName);
  void forgetPod(const std::string& key);
  bool isAssumed(const std::string& key);

  // Runs `fn` on the current nodes (name order) under the cache lock.
  template <typename F>
  auto withView(F&& fn) {
    std::lock_guard l(mu_);
    return fn(view_);
  }

  size_t nodeCount();
  // The node a pod is counted on ("" when none).
  std::string nodeOf(const std::string& key);

 private:
  void placeLocked(PodInfo pod, const std::string& nodeName);
  void unplaceLocked(const std::string& key);
  void rebuildViewLocked();

  std::mutex mu_;
  std::map<std::string, NodeInfo> nodes_;  // includes placeholders for pods on unknown nodes
  std::set<std::string> presentNodes_;
  std::map<std::string, std::string> podNode_;  // pod key -> node name
  std::set<std::string> assumed_;
  ClusterView view_;
};

}  // namespace minik8s::scheduler
