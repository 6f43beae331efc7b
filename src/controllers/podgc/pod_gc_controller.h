// PodGcController: removes pods nobody else will, as kube-controller-manager's podgc does.
//
// Each pass (gc()) over the pod and node caches:
// - terminated pods (Succeeded/Failed) beyond terminatedPodThreshold are deleted, evicted ones
//   first, then oldest first (creationTimestamp, then name); a threshold <= 0 turns this off;
// - terminating pods on a node that is not Ready and carries the
//   node.kubernetes.io/out-of-service taint are marked Failed and force-deleted;
// - pods bound to a node missing from the cache are orphans: once the node has been missing for
//   the quarantine (40 s) and a live GET confirms it is gone, they are marked Failed with a
//   DisruptionTarget condition (reason DeletionByPodGC) and force-deleted;
// - terminating pods that were never scheduled are force-deleted (no kubelet will confirm them).
// "Force-deleted" is a delete with gracePeriodSeconds 0 and the pod's uid as precondition.
// Passes run on one worker from a work queue: every gcPeriod, when a node is deleted or gains
// the out-of-service taint, when a pod needs attention, and when a quarantine ends. Nothing is
// kept but the quarantine start times, so a restart only starts the quarantines again.
// Thread-safe: one pass at a time.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

inline constexpr char kTaintNodeOutOfService[] = "node.kubernetes.io/out-of-service";

struct PodGcOptions {
  int terminatedPodThreshold = 12500;           // --terminated-pod-gc-threshold
  std::chrono::milliseconds quarantine{40000};  // before an orphan's node is checked
  std::chrono::milliseconds gcPeriod{20000};    // between periodic passes
  const client::Clock* clock = &client::RealClock::instance();  // quarantine and period
  NowFn now = [] { return WallClock::now(); };                  // condition timestamps
};

// The terminated pods to delete so that at most `threshold` remain: evicted first, then by
// creationTimestamp, then by name. Empty when threshold <= 0.
std::vector<json> terminatedPodsToDelete(const std::vector<json>& pods, int threshold);

class PodGcController {
 public:
  // Adds handlers to `pods` and `nodes`: construct before the informers start.
  PodGcController(client::RestClient& rest, client::Informer& pods, client::Informer& nodes,
                  PodGcOptions options = {});
  ~PodGcController();
  PodGcController(const PodGcController&) = delete;
  PodGcController& operator=(const PodGcController&) = delete;

  void start();
  void stop();

  // One pass (see above). Does nothing until both caches have synced.
  Status gc();

 private:
  Status gcTerminated(const std::vector<client::SharedObject>& pods);
  Status gcOutOfService(const std::vector<client::SharedObject>& pods);
  Status gcOrphaned(const std::vector<client::SharedObject>& pods);
  Status gcUnscheduledTerminating(const std::vector<client::SharedObject>& pods);
  // Marks the pod Failed (with `condition` when not null) unless it is terminal, then
  // force-deletes it. A pod already gone is success.
  Status markFailedAndDelete(const json& pod, const json& condition);
  bool needsAttention(const json& pod) const;
  bool outOfServiceAndNotReady(const std::string& nodeName) const;

  client::RestClient& rest_;
  client::Informer& pods_;
  client::Informer& nodes_;
  PodGcOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;

  std::mutex passMu_;  // one pass at a time; guards quarantine_
  // Nodes missing from the cache -> when their quarantine ends (options_.clock).
  std::map<std::string, std::chrono::steady_clock::time_point> quarantine_;
};

}  // namespace minik8s::controllers
