// NodeGraph: which Secrets, ConfigMaps, PersistentVolumeClaims and ServiceAccounts the pods
// bound to each node reference (api/pod_references.h), kept from a watch of the pods (the
// server's watch cache, or the store itself), as Kubernetes' node authorizer keeps its graph from
// informers. The NodeAuthorizer asks
// it whether node N may read object O; a miss is checked once more against the registry (a pod
// bound a moment ago may not have reached the graph yet), so the graph only ever speeds answers
// up and never grants what the stored pods do not reference. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/pod_references.h"
#include "storage/store.h"

namespace minik8s::apiserver {
class Registry;
class WatchCache;
}  // namespace minik8s::apiserver

namespace minik8s::apiserver::auth {

class NodeGraph {
 public:
  enum class Kind { kSecret, kConfigMap, kClaim, kServiceAccount };

  explicit NodeGraph(Registry& registry);
  ~NodeGraph();
  NodeGraph(const NodeGraph&) = delete;
  NodeGraph& operator=(const NodeGraph&) = delete;

  // Lists the pods, then follows their changes on a thread (re-listing after a watch failure):
  // through `cache` when given (the server's one store watch, whose events every watcher shares;
  // a watch of its own reads every pod event from the store again), else from the store.
  void start(WatchCache* cache = nullptr);
  void stop();
  // True once the first list is in.
  bool synced() const { return synced_; }

  // Whether a pod bound to `node` in `ns` references the object, per the graph.
  bool references(const std::string& node, Kind kind, const std::string& ns,
                  const std::string& name) const;

  // The same question answered from the registry (pods listed with spec.nodeName=node).
  static Result<bool> referencesInRegistry(Registry& registry, const std::string& node, Kind kind,
                                           const std::string& ns, const std::string& name);

  // Applies one pod's stored state (empty `pod`: deleted). For the watch, and for tests.
  void setPod(const std::string& key, const json& pod);

 private:
  struct Edge {
    std::string node, ns;
    api::PodReferences refs;
  };
  void run();
  Status listAll(int64_t& revision);
  // Follows the pods from `revision` until the watch fails or stop(); the reason it ended.
  Status followStore(int64_t revision);
  Status followCache(int64_t revision);
  void addEdges(const Edge& e, int delta);

  Registry& registry_;
  WatchCache* cache_ = nullptr;
  std::string prefix_;
  mutable std::mutex mu_;
  std::map<std::string, Edge> pods_;  // store key -> what it references
  // "node\x1fkind\x1fns\x1fname" -> how many pods reference it
  std::map<std::string, int> counts_;
  std::atomic<bool> stop_{false}, synced_{false};
  std::thread thread_;
};

}  // namespace minik8s::apiserver::auth
