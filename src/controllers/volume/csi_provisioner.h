// CsiProvisioner: dynamic provisioning and expansion through CSI drivers, as Kubernetes'
// external-provisioner and external-resizer sidecars do for their driver.
//
// A claim the binder marked for one of our drivers (annotation volume.kubernetes.io/storage-
// provisioner, set because its StorageClass names the driver as provisioner; for
// WaitForFirstConsumer classes once the scheduler chose a node) gets a volume: CreateVolume
// named pvc-<claim uid> with the claim's size, access modes and the class's parameters, then a
// PersistentVolume of that name with a csi source, the class's reclaim policy and mount options,
// pre-bound to the claim (the binder finishes the binding) and annotated
// pv.kubernetes.io/provisioned-by. A Released volume of ours with reclaim policy Delete is
// deleted from the driver (DeleteVolume) and then from the API. A bound claim asking for more
// than its volume holds, in a class with allowVolumeExpansion, is expanded
// (ControllerExpandVolume, then the volume's capacity; the binder copies it to the claim).
// Events: Provisioning, ProvisioningSucceeded, ProvisioningFailed, VolumeFailedDelete,
// VolumeResizeSuccessful, VolumeResizeFailed. Failures are retried with back-off. Level-
// triggered and idempotent (CreateVolume of an existing name returns it); thread-safe.
//
// A volume the driver reports accessible_topology for gets a required nodeAffinity of those
// segments. With `nodeName` set, the provisioner runs in node-deployment mode, as
// external-provisioner --node-deployment does for node-local drivers (one per agent, next to the
// driver of that node): it provisions only claims whose selected-node is this node (asking the
// driver for this node's topology, NodeGetInfo, as the requisite), deletes only volumes pinned to
// this node (api::volumePinnedToNode), and expands nothing.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "csi/csi_client.h"

namespace minik8s::controllers {

struct CsiProvisionerOptions {
  // Driver name -> endpoint of its Controller service (unix socket).
  std::map<std::string, std::string> drivers;
  // Deadline of each CSI call (external-provisioner's --timeout); a failed call is retried.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  int workers = 1;
  // Non-empty: node-deployment mode for this node (see above).
  std::string nodeName;
  const client::Clock* clock = &client::RealClock::instance();
  client::EventRecorder* events = nullptr;  // source external-provisioner
};

class CsiProvisioner {
 public:
  // Registers handlers: construct before the informers start.
  CsiProvisioner(client::RestClient& rest, client::Informer& claims, client::Informer& volumes,
                 client::Informer& classes, CsiProvisionerOptions options);
  ~CsiProvisioner();
  void start();
  void stop();

  // key: "claim/NAMESPACE/NAME" or "volume/NAME".
  Status sync(const std::string& key);

 private:
  Status syncClaim(const json& claim);
  Status provision(const json& claim, const json& cls, const std::string& driver);
  Status expand(const json& claim, const json& volume, const std::string& driver);
  Status syncVolume(const json& volume);
  csi::CsiClient* clientFor(const std::string& driver);
  void event(const json& obj, const std::string& kind, const std::string& type,
             const std::string& reason, const std::string& message);

  client::RestClient& rest_;
  client::Informer& claims_;
  client::Informer& volumes_;
  client::Informer& classes_;
  CsiProvisionerOptions options_;
  std::map<std::string, std::unique_ptr<csi::CsiClient>> clients_;  // by driver, made at start
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
