// MeshRolloutController (name `meshrollout`): drives MeshRollouts (mesh.minik8s.io/v1,
// mesh/rollout_resource.h), Flagger's Canary controller for our mesh. Each sync takes ONE step
// of mesh::Rollout from the state kept in the object's status and writes the new state back
// before the next (resourceVersion-guarded), then asks to be called again when the step wants
// (250 ms while new pods start, every second while a step is analysed). Nothing lives only in
// memory, the sidecars' counter baseline included, so a restarted control plane resumes every
// rollout where its status says. The first sync resolves the old and new Deployments and
// versions into the status; later ones never resolve again.
//
// Deleting a MeshRollout that is still Progressing rolls the service back first (finalizer
// mesh.minik8s.io/rollback), as Flagger does when a Canary is deleted; an ended one goes at
// once. The spec is read at every step: service, image, version and container count only at
// the start; stepPercent, interval, maxErrorRate and minRequests from the next step on.
//
// The sidecars' counters come through `metrics` (production: mesh::ExecRolloutMetrics, which
// runs `minik8s mesh-proxy-metrics` in every sidecar through pods/exec), time through `clock`;
// unit tests give fakes and call syncRollout() themselves. Thread-safe (one worker).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "mesh/rollout.h"

namespace minik8s::controllers {

struct MeshRolloutControllerOptions {
  // The sidecars' counters for service `service` of namespace `ns`.
  std::function<std::unique_ptr<mesh::RolloutMetrics>(const std::string& ns,
                                                      const std::string& service)>
      metrics;
  mesh::RolloutClock* clock = nullptr;              // nullptr: the wall clock
  const client::Clock* queueClock = nullptr;        // nullptr: the real one
  std::chrono::milliseconds readyTimeout{120'000};  // for one step's new pods
  std::chrono::milliseconds settle{1'000};          // after they are ready endpoints
  // Events on the MeshRollout (kubectl describe): Started, Advanced (each weight), Promoted;
  // Warnings RolledBack and Failed. Null: none.
  client::EventRecorder* events = nullptr;
};

class MeshRolloutController {
 public:
  // Registers handlers on `meshRollouts` (an informer of mesh::kMeshRollouts): construct before
  // it starts.
  MeshRolloutController(client::RestClient& rest, client::Informer& meshRollouts,
                        MeshRolloutControllerOptions options);
  ~MeshRolloutController();
  void start();
  void stop();

  // One step of the MeshRollout "ns/name" (read from the API server, not the cache: the
  // previous step's write must be seen). When to look again (nullopt: it has ended or is gone);
  // an error (a conflict, the API server away) is retried by the queue.
  Result<std::optional<std::chrono::milliseconds>> syncRollout(const std::string& key);

 private:
  // The status of `state` (with the resolved names, conditions, observedGeneration and
  // lastTransitionTime) written when it differs; `obj` becomes what the server returned.
  Status writeStatus(json& obj, const mesh::RolloutState& state, const json& names);
  Status dropFinalizer(json& obj);
  void event(const json& obj, const std::string& type, const std::string& reason,
             const std::string& message);

  client::RestClient& rest_;
  client::Informer& meshRollouts_;
  MeshRolloutControllerOptions options_;
  std::unique_ptr<mesh::RolloutClock> ownClock_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
