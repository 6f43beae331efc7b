// PersistentVolumeController: binds PersistentVolumeClaims to PersistentVolumes and keeps both
// phases, as kube-controller-manager's persistentvolume-binder does.
//
// A claim is bound to the volume findMatchingVolume() picks (volume_binding.h): first the
// volume's spec.claimRef is set (annotation pv.kubernetes.io/bound-by-controller when the
// controller chose it) and its phase becomes Bound, then the claim's spec.volumeName and its
// pv.kubernetes.io/bind-completed annotation, then its status (Bound, the volume's capacity and
// access modes). Each step is one write, so a crash in between is finished by the next sync.
// A claim whose volume vanished is Lost. A claim nothing matches stays Pending with an Event:
// its class's provisioner is asked for through the volume.kubernetes.io/storage-provisioner
// annotation (Immediate classes; WaitForFirstConsumer ones once the scheduler chose a node in
// volume.kubernetes.io/selected-node: such claims bind only volumes the scheduler pre-bound to
// them), a class that does not exist is a ProvisioningFailed warning. A volume whose claim went
// away is Released; persistentVolumeReclaimPolicy Retain keeps it so, Delete leaves it to its
// provisioner (pv.kubernetes.io/provisioned-by) or, with no provisioner, marks it Failed as
// Kubernetes does; a volume the controller bound to a claim that bound elsewhere is unbound again.
// Level-triggered, restart-safe; thread-safe (one key at a time).
#pragma once

#include <optional>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

extern const client::Resource kPersistentVolumes;       // v1 persistentvolumes
extern const client::Resource kPersistentVolumeClaims;  // v1 persistentvolumeclaims
extern const client::Resource kStorageClasses;          // storage.k8s.io/v1 storageclasses

struct PersistentVolumeControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  client::EventRecorder* events = nullptr;  // source persistentvolume-controller
};

class PersistentVolumeController {
 public:
  // Registers handlers: construct before the informers start.
  PersistentVolumeController(client::RestClient& rest, client::Informer& volumes,
                             client::Informer& claims, client::Informer& classes,
                             PersistentVolumeControllerOptions options = {});
  ~PersistentVolumeController();
  void start();
  void stop();

  // key: "claim/NAMESPACE/NAME" or "volume/NAME".
  Status sync(const std::string& key);
  Status syncClaim(const std::string& ns, const std::string& name);
  Status syncVolume(const std::string& name);

 private:
  Status syncUnboundClaim(const json& claim);
  Status syncBoundClaim(const json& claim);
  Status bind(json volume, json claim);
  Status setClaimStatus(const json& claim, const std::string& phase, const json* volume);
  // The volume as written (or as given when nothing changed).
  Result<json> setVolumePhase(const json& volume, const std::string& phase,
                              const std::string& message);
  // The class a claim asks for as an object, nullopt when it does not exist.
  std::optional<json> classOf(const std::string& name) const;
  void enqueuePendingClaims();
  void event(const json& obj, const std::string& kind, const std::string& type,
             const std::string& reason, const std::string& message);

  client::RestClient& rest_;
  client::Informer& volumes_;
  client::Informer& claims_;
  client::Informer& classes_;
  PersistentVolumeControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
