// NodeLifecycleController: notices nodes whose agent stopped reporting and moves their pods
// elsewhere, as Kubernetes' node lifecycle controller and NoExecute taint manager do.
//
// Every monitor period (5 s) monitorNodeHealth() looks at each node's heartbeats: the Ready
// condition's lastHeartbeatTime and the node's Lease in kube-node-lease (renewTime). A change of
// either, observed on this controller's clock, is a heartbeat. A node without one for the grace
// period (40 s; 60 s for a node that never posted Ready) gets all its conditions set to Unknown
// (reason NodeStatusUnknown, "Kubelet stopped posting node status.") and its pods marked
// Ready=False. Taints follow the Ready condition: node.kubernetes.io/unreachable (Unknown) or
// node.kubernetes.io/not-ready (False), NoSchedule and NoExecute, removed when Ready is True.
// Pods on a node with NoExecute taints are deleted when they do not tolerate them, or once the
// smallest tolerationSeconds of the matching tolerations has passed since the taint was added; a
// pod without a toleration for not-ready/unreachable gets the DefaultTolerationSeconds admission
// default (300 s, configurable), as the API server does not add it. ReplicaSets then recreate
// the pods on healthy nodes.
//
// Events (as Kubernetes' node-controller writes them, when `events` is set): RegisteredNode and
// RemovingNode when a node appears in or leaves the controller, NodeNotReady on the node when it
// turns it from Ready to Unknown, NodeNotReady (Warning, "Node is not ready") on each pod it marks
// not ready, TaintManagerEviction on each pod it deletes for a NoExecute taint.
// Thread-safe: one pass at a time.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

inline constexpr char kTaintNodeUnreachable[] = "node.kubernetes.io/unreachable";
inline constexpr char kTaintNodeNotReady[] = "node.kubernetes.io/not-ready";

struct NodeLifecycleOptions {
  std::chrono::seconds gracePeriod{40};         // --node-monitor-grace-period
  std::chrono::seconds startupGracePeriod{60};  // a node that never posted Ready
  std::chrono::milliseconds monitorPeriod{5000};
  // tolerationSeconds given to pods without a not-ready/unreachable toleration
  // (--pod-eviction-timeout, Kubernetes' --default-unreachable-toleration-seconds).
  std::chrono::seconds defaultTolerationSeconds{300};
  NowFn now = [] { return WallClock::now(); };
  client::EventRecorder* events = nullptr;  // not owned; null: no Events
};

// True when `toleration` tolerates `taint` (key/operator/value/effect as Kubernetes matches).
bool tolerates(const json& toleration, const json& taint);
// The pod's tolerations plus the admission defaults for not-ready and unreachable.
json effectiveTolerations(const json& pod, std::chrono::seconds defaultTolerationSeconds);
// When the pod must leave a node with these taints: nullopt = never, time_point::min() = now.
std::optional<WallClock::time_point> evictionTime(const json& pod, const json& taints,
                                                  std::chrono::seconds defaultTolerationSeconds,
                                                  WallClock::time_point now);

class NodeLifecycleController {
 public:
  // `leases` watches namespace kube-node-lease. Adds the "nodeName" index to `pods`: construct
  // before the informers start.
  NodeLifecycleController(client::RestClient& rest, client::Informer& nodes, client::Informer& pods,
                          client::Informer& leases, NodeLifecycleOptions options = {});
  ~NodeLifecycleController();

  void start();  // the monitor loop
  void stop();

  // One pass: heartbeats, conditions, taints, pod readiness and evictions for every node.
  Status monitorNodeHealth();

 private:
  struct Health {
    std::string readyHeartbeat, leaseRenew;
    WallClock::time_point probeTime{};
    bool seen = false;
    std::string uid;  // for the RemovingNode Event once the node is gone
  };
  Status syncNode(const json& node, WallClock::time_point now);
  Status markPodsNotReady(const std::string& nodeName, WallClock::time_point now);
  Status updateTaints(const json& node, const std::string& readyStatus, WallClock::time_point now);
  void evictPods(const json& node, WallClock::time_point now);
  void record(const json& object, const std::string& type, const std::string& reason,
              const std::string& message);

  client::RestClient& rest_;
  client::Informer& nodes_;
  client::Informer& pods_;
  client::Informer& leases_;
  NodeLifecycleOptions options_;

  std::mutex passMu_;  // one pass at a time
  std::map<std::string, Health> health_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace minik8s::controllers
