// ControllerManager: runs the workload controllers (ReplicaSet, Deployment, Job, CronJob,
// DaemonSet, StatefulSet, garbage collector) over one set of shared informers (pods, nodes,
// workloads), as kube-controller-manager does. `minik8s server` runs it in-process; `minik8s
// controller-manager --server URL` runs it alone. It only talks to the API server through the
// RestClient, so it is restart-safe: start() lists everything and converges.
// start() and stop() are called from one thread; the controllers run on their own threads.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/pki.h"
#include "common/status.h"

namespace minik8s::controllers {

class ReplicaSetController;
class DeploymentController;
class GarbageCollector;
class EndpointsController;
class EndpointSliceController;
class NodeIpamController;
class NodeLifecycleController;
class PodGcController;
class JobController;
class CronJobController;
class DaemonSetController;
class StatefulSetController;
class TtlAfterFinishedController;
class ServiceAccountsController;
class RootCaPublisher;
namespace certificates {
class CsrApprovingController;
class CsrSigningController;
}  // namespace certificates
namespace hpa {
class HorizontalPodAutoscalerController;
class MetricsSource;
}  // namespace hpa

// A duration flag as Kubernetes writes them ("15s", "5m0s", "1m30s"), or plain seconds ("40").
Result<std::chrono::milliseconds> parseDurationFlag(const std::string& flag,
                                                    const std::string& value);

class ControllerManager {
 public:
  struct Options {
    int workersPerController = 2;
    bool enableGarbageCollector = true;
    bool enableEndpoints = true;  // Endpoints and EndpointSlice controllers
    bool enableNodeIpam = true;
    std::string clusterCidr = "10.244.0.0/16";  // pod network; nodes get /24 blocks of it
    std::chrono::milliseconds syncTimeout = std::chrono::seconds(30);
    // HorizontalPodAutoscaler: --horizontal-pod-autoscaler-sync-period and
    // --horizontal-pod-autoscaler-downscale-stabilization.
    bool enableHorizontalPodAutoscaler = true;
    std::chrono::milliseconds hpaSyncPeriod = std::chrono::seconds(15);
    std::chrono::seconds hpaDownscaleStabilization = std::chrono::seconds(300);
    // Node lifecycle: --node-monitor-grace-period and --pod-eviction-timeout.
    bool enableNodeLifecycle = true;
    std::chrono::seconds nodeMonitorGracePeriod = std::chrono::seconds(40);
    std::chrono::seconds podEvictionTimeout = std::chrono::seconds(300);
    // Pod GC: --terminated-pod-gc-threshold (<= 0 keeps every terminated pod), and how long a
    // pod's node must be missing before its pods are force-deleted (40 s, as Kubernetes).
    bool enablePodGc = true;
    int terminatedPodGcThreshold = 12500;
    std::chrono::milliseconds podGcQuarantine = std::chrono::seconds(40);
    // Service accounts: a "default" ServiceAccount in every namespace, and (when the CA is
    // known) the kube-root-ca.crt ConfigMap pods mount with their token.
    bool enableServiceAccounts = true;
    std::string rootCaPem;
    // Certificates: node CSRs approved by the kubelet rules; approved CSRs signed with the
    // cluster CA (--cluster-signing-cert-file/-key-file) when it is given.
    bool enableCsrApproving = true;
    pki::KeyAndCert signingCa;
    // Jobs and CronJobs (batch/v1), and the TTL-after-finished controller.
    bool enableJobs = true;
    bool enableDaemonSets = true;  // DaemonSets and StatefulSets (with ControllerRevisions)
  };

  ControllerManager(client::RestClient& rest, Options options);
  ~ControllerManager();
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  // Starts the informers, waits for their first list, then starts the controllers. Fails
  // (Unavailable) if the caches do not fill within syncTimeout.
  Status start();
  void stop();

 private:
  // The shared pod and workload informers (those that exist), started and synced first.
  std::vector<client::Informer*> workloadInformers() const;

  client::RestClient& rest_;
  Options options_;
  std::unique_ptr<client::Informer> pods_, replicaSets_, deployments_;
  // Events of the ReplicaSet, Deployment, node lifecycle, Endpoints and EndpointSlice controllers
  // (source replicaset-controller, deployment-controller, node-controller, endpoint-controller,
  // endpoint-slice-controller); declared before the controllers that write to them.
  std::unique_ptr<client::ApiEventRecorder> replicaSetEvents_, deploymentEvents_;
  std::unique_ptr<client::ApiEventRecorder> nodeLifecycleEvents_, endpointsEvents_,
      endpointSliceEvents_;
  std::unique_ptr<ReplicaSetController> replicaSetController_;
  std::unique_ptr<DeploymentController> deploymentController_;
  std::unique_ptr<GarbageCollector> garbageCollector_;
  std::unique_ptr<client::Informer> services_;
  std::unique_ptr<EndpointsController> endpointsController_;
  std::unique_ptr<EndpointSliceController> endpointSliceController_;
  std::unique_ptr<client::Informer> nodes_;
  std::unique_ptr<NodeIpamController> nodeIpam_;
  std::unique_ptr<client::Informer> hpas_, leases_;
  std::unique_ptr<hpa::MetricsSource> metricsSource_;
  std::unique_ptr<hpa::HorizontalPodAutoscalerController> hpaController_;
  std::unique_ptr<NodeLifecycleController> nodeLifecycle_;
  std::unique_ptr<PodGcController> podGc_;
  std::unique_ptr<client::Informer> namespaces_, serviceAccounts_, rootCaConfigMaps_, csrs_;
  std::unique_ptr<ServiceAccountsController> serviceAccountsController_;
  std::unique_ptr<RootCaPublisher> rootCaPublisher_;
  std::unique_ptr<certificates::CsrApprovingController> csrApproving_;
  std::unique_ptr<certificates::CsrSigningController> csrSigning_;
  std::unique_ptr<client::Informer> jobs_;
  std::unique_ptr<client::ApiEventRecorder> jobEvents_;
  std::unique_ptr<JobController> jobController_;
  std::unique_ptr<TtlAfterFinishedController> ttlAfterFinished_;
  std::unique_ptr<client::Informer> cronJobs_;
  std::unique_ptr<client::ApiEventRecorder> cronJobEvents_;
  std::unique_ptr<CronJobController> cronJobController_;
  std::unique_ptr<client::Informer> daemonSets_, controllerRevisions_;
  std::unique_ptr<client::ApiEventRecorder> daemonSetEvents_;
  std::unique_ptr<DaemonSetController> daemonSetController_;
  std::unique_ptr<client::Informer> statefulSets_;
  std::unique_ptr<client::ApiEventRecorder> statefulSetEvents_;
  std::unique_ptr<StatefulSetController> statefulSetController_;
  bool started_ = false;
};

// The controller flags `minik8s server` and `minik8s controller-manager` share, as typed
// (durations, and the one count).
struct ControllerDurationFlags {
  std::string hpaSyncPeriod = "15s";               // --horizontal-pod-autoscaler-sync-period
  std::string hpaDownscaleStabilization = "5m0s";  // ...-downscale-stabilization
  std::string nodeMonitorGracePeriod = "40s";      // --node-monitor-grace-period
  std::string podEvictionTimeout = "5m0s";         // --pod-eviction-timeout
  int terminatedPodGcThreshold = 12500;            // --terminated-pod-gc-threshold
  // BadRequest naming the flag when a value does not parse.
  Status applyTo(ControllerManager::Options& options) const;
};

}  // namespace minik8s::controllers
