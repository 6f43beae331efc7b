// DeploymentController: rolls a Deployment's pod template out through ReplicaSets.
//
// sync(key) claims the Deployment's ReplicaSets, finds or creates the one whose template (with
// the pod-template-hash label) matches spec.template, then scales: Recreate (old to zero, then
// new) or RollingUpdate (maxSurge/maxUnavailable, see rolling_update.h). It maintains the
// deployment.kubernetes.io/revision annotations (a rollback via `kubectl rollout undo` just
// makes an old ReplicaSet the new one again and bumps its revision), deletes old ReplicaSets
// beyond revisionHistoryLimit, honours spec.paused, and writes status with the Progressing
// (NewReplicaSetAvailable, ReplicaSetUpdated, ProgressDeadlineExceeded) and Available conditions.
// Thread-safe like ReplicaSetController.
#pragma once

#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct DeploymentControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  NowFn now = [] { return WallClock::now(); };
  // ScalingReplicaSet Events go here when set.
  client::EventRecorder* events = nullptr;
};

class DeploymentController {
 public:
  // Registers handlers: construct before the informers start. `pods` needs the "namespace"
  // index (addNamespaceIndex in replicaset_controller.h).
  DeploymentController(client::RestClient& rest, client::Informer& deployments,
                       client::Informer& replicaSets, client::Informer& pods,
                       DeploymentControllerOptions options = {});
  ~DeploymentController();

  void start();
  void stop();
  Status sync(const std::string& key);

 private:
  void enqueueForReplicaSet(const json& rs);
  Result<std::vector<json>> claimReplicaSets(const json& d);
  Result<json> createNewReplicaSet(const json& d, const std::string& hash, int64_t replicas,
                                   int64_t revision);
  Status scaleReplicaSet(json& rs, int64_t replicas, const json& d, int64_t maxSurge);
  bool oldPodsRunning(const json& d, const std::vector<json>& oldSets);
  void cleanupOldReplicaSets(const json& d, const std::vector<json>& oldSets);
  Status updateStatus(const json& d, const json* newRs, const std::vector<json>& all,
                      int64_t maxUnavailable);

  client::RestClient& rest_;
  client::Informer& deployments_;
  client::Informer& replicaSets_;
  client::Informer& pods_;
  DeploymentControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
