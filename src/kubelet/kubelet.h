// Kubelet: the node agent's core. It registers the Node, keeps its Lease fresh, watches the pods
// bound to the node (an Informer with fieldSelector spec.nodeName=<node>) and hands each pod to
// the pod workers, which run PodSyncer::syncPod and report statuses through the StatusManager.
//
// Like the PLEG, a relist loop requeues every pod about once a second, so container exits are
// noticed within a second and back-offs and probes fire on time. Deleted pods are terminated
// gracefully (StopContainer with the grace period, sandbox removed) and then confirmed with
// DELETE gracePeriodSeconds=0. Housekeeping removes runtime pods and pod directories that no
// API pod owns (pods deleted while the agent was down). After a restart, sandboxes and
// containers are adopted through their CRI labels.
//
// Pod and container Events (Pulled, Created, Started, Killing, BackOff, Unhealthy ...) go
// through an ApiEventRecorder. It also implements the agent server's PodLookup. Thread-safe;
// start() once, stop() once.
//
// Metrics (metrics::defaultRegistry(), served on the agent server's /metrics): kubelet_running_pods
// and kubelet_running_containers{container_state} asked of the runtime at scrape time,
// kubelet_pod_start_duration_seconds (first sync of a pod to its first Running status) and the
// pod workers' queue as workqueue_*{name="kubelet_pod_workers"}.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "client/work_queue.h"
#include "common/metrics.h"
#include "cri/runtime_service.h"
#include "kubelet/node_status.h"
#include "kubelet/object_source.h"
#include "kubelet/pod_sync.h"
#include "kubelet/prober.h"
#include "kubelet/server/pod_lookup.h"
#include "kubelet/server/streaming_runtime.h"
#include "kubelet/status_manager.h"
#include "kubelet/token_manager.h"
#include "kubelet/volume_manager.h"

namespace minik8s::kubelet {

struct KubeletOptions {
  std::string nodeName;
  std::string dataDir;  // pods/<uid>/volumes and logs/pods live here
  std::string hostIP;
  std::map<std::string, std::string> nodeLabels;
  json registerTaints = json::array();  // spec.taints of the Node when it is created
  std::string podCIDR;
  std::string cgroupRoot;  // default /minik8s/<node>/kubepods
  std::vector<std::string> clusterDNS;
  std::string clusterDomain = "cluster.local";
  int maxPods = 110;
  std::map<std::string, std::string> capacityOverrides;  // node.yaml `capacity`
  std::vector<std::string> allowedUnsafeSysctls;         // --allowed-unsafe-sysctls
  int kubeletPort = 10250;
  int workers = 4;
  std::chrono::milliseconds relistPeriod{1000};
  std::chrono::seconds leaseRenewPeriod{10};
  std::chrono::seconds nodeStatusPeriod{60};
  // How long the runtime may not answer before the node says NotReady (RuntimeReadiness).
  std::chrono::seconds runtimeDownGrace{30};
  bool registerNode = true;
  // CSI drivers on this node: driver name -> endpoint of its Node service.
  std::map<std::string, std::string> csiDrivers;
  // Where the Services informer comes from (the agent's, shared with its service proxy); the
  // kubelet's own when null.
  client::SharedInformers* informers = nullptr;
};

class Kubelet : public server::PodLookup, public server::StreamingRuntime {
 public:
  Kubelet(client::RestClient& client, cri::RuntimeService& runtime, cri::ImageService& images,
          KubeletOptions options);
  ~Kubelet() override;
  Kubelet(const Kubelet&) = delete;
  Kubelet& operator=(const Kubelet&) = delete;

  // Registers the node and starts the pod workers once the node's pods are listed. A failure
  // (the API server unreachable) leaves nothing running, so start() may be called again.
  Status start();
  void stop();

  Result<server::ContainerLocation> findContainer(const std::string& ns, const std::string& pod,
                                                  const std::string& container,
                                                  bool previous) override;
  Result<std::string> attachUrl(const server::AttachSpec& spec) override;
  Result<std::string> portForwardUrl(const std::string& ns, const std::string& pod) override;

  // One pass of each loop (exposed for tests).
  void syncPodKey(const std::string& key);
  void housekeeping();

 private:
  void workerLoop();
  void relistLoop();
  // kubelet_pod_start_duration_seconds: `status` is the pod's status after a successful sync.
  void recordPodStart(const std::string& uid, const json& status);
  void forgetPodStart(const std::string& uid);
  void nodeLoop();

  client::RestClient& client_;
  cri::RuntimeService& runtime_;
  cri::ImageService& images_;
  KubeletOptions options_;
  RestClientObjectSource objects_;
  client::ApiEventRecorder events_;
  client::WorkQueue queue_;
  RestClientTokenRequester tokenRequester_;
  TokenManager tokens_;
  VolumeManager volumes_;
  ProbeManager probes_;
  PodSyncer syncer_;
  StatusManager statusManager_;
  std::unique_ptr<NodeStatus> nodeStatus_;
  std::unique_ptr<client::Informer> informer_;
  // Every namespace's Services, for the containers' service environment variables.
  std::unique_ptr<client::Informer> services_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;

  std::mutex startMu_;
  // Pods synced but not yet seen Running (since when), and pods already counted as started.
  std::map<std::string, std::chrono::steady_clock::time_point> firstSeen_;
  std::set<std::string> started_;
  std::vector<metrics::CallbackHandle> runtimeMetrics_;  // read runtime_: destroyed first
};

}  // namespace minik8s::kubelet
