// VolumeProtectionController: kube-controller-manager's pvc-protection and pv-protection.
//
// Every PersistentVolumeClaim carries the kubernetes.io/pvc-protection finalizer and every
// PersistentVolume kubernetes.io/pv-protection (added here when missing), so deleting one that is
// still in use only marks it: a claim's finalizer goes once no pod that has not finished mounts
// it (checked against a live list before removal, the cache may lag a new pod), a volume's once
// it is no longer Bound. Pods that finish or go away, and volumes that stop being Bound, bring
// their claims and volumes back for another look. Level-triggered; thread-safe.
#pragma once

#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct VolumeProtectionControllerOptions {
  int workers = 1;
  // Which half runs: kube-controller-manager's pvc-protection and pv-protection are registered
  // (and turned off) separately.
  bool claims = true;
  bool volumes = true;
  const client::Clock* clock = &client::RealClock::instance();
};

class VolumeProtectionController {
 public:
  // `pods` must carry the "namespace" index. Registers handlers: construct before the informers
  // start.
  VolumeProtectionController(client::RestClient& rest, client::Informer& claims,
                             client::Informer& volumes, client::Informer& pods,
                             VolumeProtectionControllerOptions options = {});
  ~VolumeProtectionController();
  void start();
  void stop();

  // key: "claim/NAMESPACE/NAME" or "volume/NAME".
  Status sync(const std::string& key);

 private:
  Status syncClaim(const std::string& ns, const std::string& name);
  Status syncVolume(const std::string& name);
  // Whether a pod that has not finished uses the claim, per `pods`.
  static bool claimUsed(const std::string& claim, const std::vector<json>& pods);

  client::RestClient& rest_;
  client::Informer& claims_;
  client::Informer& volumes_;
  client::Informer& pods_;
  VolumeProtectionControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
