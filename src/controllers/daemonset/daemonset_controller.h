// DaemonSetController: one pod of an apps/v1 DaemonSet on every eligible node, as
// kube-controller-manager's daemonset controller.
//
// A node is eligible when the template's nodeSelector and required node affinity match it and
// its NoSchedule/NoExecute taints are tolerated (the template's tolerations plus the ones every
// daemon pod gets: not-ready, unreachable, disk/memory/pid pressure, unschedulable). Pods are
// created with a required node affinity on metadata.name = the node, which the scheduler honours,
// so they land on their node whatever else it weighs. Nodes that come get a pod, nodes that go
// or stop matching lose theirs, failed daemon pods are replaced.
//
// Each template is recorded in a ControllerRevision (data = the template as a strategic merge
// patch with $patch: replace, as kubectl rollout history/undo read it) and the pods carry its
// controller-revision-hash. RollingUpdate replaces old pods node by node within maxUnavailable,
// or, with maxSurge, starts the new pod beside the old one and removes the old one once the new
// one is available; OnDelete leaves old pods until someone deletes them. Status as kubectl
// rollout status reads it. Level-triggered; thread-safe (one key at a time).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_history.h"
#include "controllers/common/controller_utils.h"
#include "controllers/replicaset/expectations.h"

namespace minik8s::controllers {

extern const client::Resource kDaemonSets;  // apps/v1 daemonsets

struct DaemonSetControllerOptions {
  int workers = 2;
  int burst = 250;  // most pod creates or deletes in one sync
  const client::Clock* clock = &client::RealClock::instance();
  NowFn now = [] { return WallClock::now(); };  // minReadySeconds
  client::EventRecorder* events = nullptr;      // source daemonset-controller
};

// Whether a daemon pod built from `podTemplate` belongs on `node`: its selector and affinity
// match, and the node's NoExecute taints (and, for a new pod, its NoSchedule ones too) are
// tolerated. An existing pod stays through a NoSchedule taint, as in Kubernetes.
bool daemonPodShouldRun(const json& podTemplate, const json& node, bool newPod = true);
// The node a daemon pod is for: spec.nodeName, else its metadata.name node affinity.
std::string daemonPodNode(const json& pod);

class DaemonSetController {
 public:
  // Registers handlers: construct before the informers start. The pod and revision informers
  // must carry the "namespace" index (addNamespaceIndex).
  DaemonSetController(client::RestClient& rest, client::Informer& daemonSets,
                      client::Informer& pods, client::Informer& nodes, client::Informer& revisions,
                      DaemonSetControllerOptions options = {});
  ~DaemonSetController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  // The hash of the current template's ControllerRevision (controller_history.h).
  Result<std::string> syncRevisions(const json& ds, const std::vector<json>& pods);
  Status createPod(const json& ds, const std::string& key, const std::string& node,
                   const std::string& hash);
  Status deletePods(const json& ds, const std::string& key, const std::vector<json>& pods);
  void recordEvent(const json& ds, const std::string& type, const std::string& reason,
                   const std::string& message);
  void enqueueAll();

  client::RestClient& rest_;
  client::Informer& daemonSets_;
  client::Informer& pods_;
  client::Informer& nodes_;
  client::Informer& revisions_;
  DaemonSetControllerOptions options_;
  client::WorkQueue queue_;
  ControllerExpectations expectations_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
