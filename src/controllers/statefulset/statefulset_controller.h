// StatefulSetController: apps/v1 StatefulSets, as kube-controller-manager's statefulset
// controller.
//
// Pods are NAME-0 .. NAME-(replicas-1) (from spec.ordinals.start), each with hostname = its name
// and subdomain = spec.serviceName, so the headless Service gives it the stable DNS name
// NAME-i.SERVICE.NAMESPACE.svc.cluster.local, and the labels statefulset.kubernetes.io/pod-name
// and apps.kubernetes.io/pod-index. OrderedReady (default) creates one pod at a time in
// ordinal order, each once its predecessors are Running and Ready, and removes from the highest
// ordinal down, one at a time; Parallel does both at once. A deleted or failed pod comes back
// with the same name. volumeClaimTemplates become claims TEMPLATE-POD, created before the pod
// and never deleted by the controller (scale-down and pod deletion keep the data, a pod coming
// back with its name finds its claim), mounted as persistentVolumeClaim volumes.
//
// Templates are ControllerRevisions (controller_history.h); status.currentRevision /
// updateRevision and each pod's controller-revision-hash say who runs what. RollingUpdate
// replaces pods from the highest ordinal down to spec.updateStrategy.rollingUpdate.partition,
// one at a time once all are ready; OnDelete waits for pods to be deleted. Level-triggered;
// thread-safe (one key at a time).
#pragma once

#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_history.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

extern const client::Resource kStatefulSets;  // apps/v1 statefulsets

struct StatefulSetControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  NowFn now = [] { return WallClock::now(); };  // minReadySeconds
  client::EventRecorder* events = nullptr;      // source statefulset-controller
};

// The ordinal of `podName` as a pod of the StatefulSet `setName`, or -1.
int64_t statefulPodOrdinal(const std::string& setName, const std::string& podName);

class StatefulSetController {
 public:
  // Registers handlers: construct before the informers start. The pod and revision informers
  // must carry the "namespace" index.
  StatefulSetController(client::RestClient& rest, client::Informer& statefulSets,
                        client::Informer& pods, client::Informer& revisions,
                        StatefulSetControllerOptions options = {});
  ~StatefulSetController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  Status createPod(const json& set, const json& revision, int64_t ordinal);
  // The claim TEMPLATE-POD from a volumeClaimTemplate (labels: the template's and the set's
  // selector); one that exists already is kept as it is.
  Status createClaim(const json& set, const json& templ, const std::string& podName);
  Status deletePod(const json& set, const json& pod);
  void recordEvent(const json& set, const std::string& type, const std::string& reason,
                   const std::string& message);

  client::RestClient& rest_;
  client::Informer& statefulSets_;
  client::Informer& pods_;
  client::Informer& revisions_;
  StatefulSetControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
