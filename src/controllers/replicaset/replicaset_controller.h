// ReplicaSetController: keeps exactly spec.replicas active pods for every ReplicaSet.
//
// sync(key) is level-triggered and idempotent: it claims pods (adopts matching orphans, releases
// owned pods the selector no longer matches), creates or deletes the difference (guarded by
// expectations so a lagging cache never causes a double create), and writes status (replicas,
// fullyLabeledReplicas, readyReplicas, availableReplicas with minReadySeconds,
// observedGeneration). Reads come from the shared pod and ReplicaSet informers; writes go
// through the RestClient. Thread-safe: sync may run on several workers (one key at a time).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "controllers/replicaset/expectations.h"

namespace minik8s::controllers {

// True when pod `a` should go before pod `b` on scale-down: unscheduled, then Pending before
// Unknown before Running, not ready, ready for a shorter time, more restarts, newer.
bool podDeletionLess(const json& a, const json& b);

struct ReplicaSetControllerOptions {
  int workers = 2;
  int burstReplicas = 500;  // most creates or deletes in one sync
  const client::Clock* clock = &client::RealClock::instance();  // expectations, queue back-off
  NowFn now = [] { return WallClock::now(); };
  // SuccessfulCreate / SuccessfulDelete / FailedCreate Events go here when set.
  client::EventRecorder* events = nullptr;
};

class ReplicaSetController {
 public:
  // Registers handlers on the informers: construct before they start. The pod informer must
  // carry the "namespace" index (see addNamespaceIndex).
  ReplicaSetController(client::RestClient& rest, client::Informer& replicaSets,
                       client::Informer& pods, ReplicaSetControllerOptions options = {});
  ~ReplicaSetController();

  void start();  // worker threads
  void stop();

  // Converges one ReplicaSet ("namespace/name").
  Status sync(const std::string& key);

  ControllerExpectations& expectations() { return expectations_; }
  client::WorkQueue& queue() { return queue_; }

 private:
  void enqueueOwner(const json& pod);
  void enqueueMatching(const json& pod);
  Status managePods(const json& rs, const std::string& key, std::vector<json>& active);
  void recordEvent(const json& rs, const std::string& type, const std::string& reason,
                   const std::string& message);
  // `manageError`: why creating or deleting pods failed this sync (OK when it did not); it
  // becomes the ReplicaFailure condition, as in Kubernetes.
  Status updateStatus(const json& rs, const std::vector<json>& owned, const Status& manageError);

  client::RestClient& rest_;
  client::Informer& replicaSets_;
  client::Informer& pods_;
  ReplicaSetControllerOptions options_;
  client::WorkQueue queue_;
  ControllerExpectations expectations_;
  WorkerPool workers_;
};

// Adds the "namespace" index (metadata.namespace) an informer needs for the controllers.
void addNamespaceIndex(client::Informer& informer);

}  // namespace minik8s::controllers
