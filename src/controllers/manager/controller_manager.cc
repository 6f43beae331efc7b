#include "controllers/manager/controller_manager.h"

#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/certificates/csr_approving_controller.h"
#include "controllers/certificates/csr_rules.h"
#include "controllers/certificates/csr_signing_controller.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/daemonset/daemonset_controller.h"
#include "controllers/deployment/deployment_controller.h"
#include "controllers/endpoints/endpoints_controller.h"
#include "controllers/endpoints/endpointslice_controller.h"
#include "controllers/gc/garbage_collector.h"
#include "controllers/hpa/hpa_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/nodeipam/node_ipam_controller.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "controllers/serviceaccount/root_ca_publisher.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "controllers/statefulset/statefulset_controller.h"

namespace minik8s::controllers {

namespace res = client::resources;

Result<std::chrono::milliseconds> parseDurationFlag(const std::string& flag,
                                                    const std::string& value) {
  bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  if (digits) return std::chrono::milliseconds(std::stoll(value) * 1000);
  if (auto d = parseGoDuration(value)) return *d;
  return Status::BadRequest("invalid value \"" + value + "\" for " + flag +
                            ": want a duration such as 15s, 5m0s or 1m30s");
}

Status ControllerDurationFlags::applyTo(ControllerManager::Options& options) const {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  auto sync = parseDurationFlag("--horizontal-pod-autoscaler-sync-period", hpaSyncPeriod);
  auto window = parseDurationFlag("--horizontal-pod-autoscaler-downscale-stabilization",
                                  hpaDownscaleStabilization);
  auto grace = parseDurationFlag("--node-monitor-grace-period", nodeMonitorGracePeriod);
  auto eviction = parseDurationFlag("--pod-eviction-timeout", podEvictionTimeout);
  for (const auto* r : {&sync, &window, &grace, &eviction}) {
    if (!r->ok()) return r->status();
  }
  options.hpaSyncPeriod = *sync;
  options.hpaDownscaleStabilization = duration_cast<seconds>(*window);
  options.nodeMonitorGracePeriod = duration_cast<seconds>(*grace);
  options.podEvictionTimeout = duration_cast<seconds>(*eviction);
  options.terminatedPodGcThreshold = terminatedPodGcThreshold;
  return Status::Ok();
}

ControllerManager::ControllerManager(client::RestClient& rest, Options options)
    : rest_(rest), options_(options) {
  pods_ = std::make_unique<client::Informer>(rest_, res::kPods);
  replicaSets_ = std::make_unique<client::Informer>(rest_, res::kReplicaSets);
  deployments_ = std::make_unique<client::Informer>(rest_, res::kDeployments);
  addNamespaceIndex(*pods_);
  if (options_.enableEndpoints) {
    services_ = std::make_unique<client::Informer>(rest_, res::kServices);
    endpointsEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "endpoint-controller"});
    endpointSliceEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "endpoint-slice-controller"});
    endpointsController_ = std::make_unique<EndpointsController>(
        rest_, *services_, *pods_, options_.workersPerController, endpointsEvents_.get());
    endpointSliceController_ = std::make_unique<EndpointSliceController>(
        rest_, *services_, *pods_, options_.workersPerController, endpointSliceEvents_.get());
  }
  replicaSetEvents_ = std::make_unique<client::ApiEventRecorder>(
      rest_, client::ApiEventRecorderOptions{.component = "replicaset-controller"});
  deploymentEvents_ = std::make_unique<client::ApiEventRecorder>(
      rest_, client::ApiEventRecorderOptions{.component = "deployment-controller"});
  ReplicaSetControllerOptions rsOpts;
  rsOpts.workers = options_.workersPerController;
  rsOpts.events = replicaSetEvents_.get();
  replicaSetController_ =
      std::make_unique<ReplicaSetController>(rest_, *replicaSets_, *pods_, rsOpts);
  DeploymentControllerOptions dOpts;
  dOpts.workers = options_.workersPerController;
  dOpts.events = deploymentEvents_.get();
  deploymentController_ =
      std::make_unique<DeploymentController>(rest_, *deployments_, *replicaSets_, *pods_, dOpts);
  if (options_.enableJobs) {
    jobs_ = std::make_unique<client::Informer>(rest_, res::kJobs);
    jobEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "job-controller"});
    JobControllerOptions jOpts;
    jOpts.workers = options_.workersPerController;
    jOpts.events = jobEvents_.get();
    jobController_ = std::make_unique<JobController>(rest_, *jobs_, *pods_, jOpts);
    ttlAfterFinished_ = std::make_unique<TtlAfterFinishedController>(rest_, *jobs_);
    addNamespaceIndex(*jobs_);
    cronJobs_ = std::make_unique<client::Informer>(rest_, kCronJobs);
    cronJobEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "cronjob-controller"});
    CronJobControllerOptions cOpts;
    cOpts.events = cronJobEvents_.get();
    cronJobController_ = std::make_unique<CronJobController>(rest_, *cronJobs_, *jobs_, cOpts);
  }
  if (options_.enableDaemonSets) {
    if (!nodes_) nodes_ = std::make_unique<client::Informer>(rest_, res::kNodes);
    daemonSets_ = std::make_unique<client::Informer>(rest_, kDaemonSets);
    controllerRevisions_ = std::make_unique<client::Informer>(rest_, kControllerRevisions);
    addNamespaceIndex(*controllerRevisions_);
    daemonSetEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "daemonset-controller"});
    DaemonSetControllerOptions dsOpts;
    dsOpts.workers = options_.workersPerController;
    dsOpts.events = daemonSetEvents_.get();
    daemonSetController_ = std::make_unique<DaemonSetController>(
        rest_, *daemonSets_, *pods_, *nodes_, *controllerRevisions_, dsOpts);
    statefulSets_ = std::make_unique<client::Informer>(rest_, kStatefulSets);
    statefulSetEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "statefulset-controller"});
    StatefulSetControllerOptions ssOpts;
    ssOpts.workers = options_.workersPerController;
    ssOpts.events = statefulSetEvents_.get();
    statefulSetController_ = std::make_unique<StatefulSetController>(rest_, *statefulSets_, *pods_,
                                                                     *controllerRevisions_, ssOpts);
  }
  if (options_.enableGarbageCollector) {
    std::vector<GcKind> kinds = {{"Pod", res::kPods, pods_.get()},
                                 {"ReplicaSet", res::kReplicaSets, replicaSets_.get()},
                                 {"Deployment", res::kDeployments, deployments_.get()}};
    if (jobs_) kinds.push_back({"Job", res::kJobs, jobs_.get()});
    if (cronJobs_) kinds.push_back({"CronJob", kCronJobs, cronJobs_.get()});
    if (daemonSets_) {
      kinds.push_back({"DaemonSet", kDaemonSets, daemonSets_.get()});
      kinds.push_back({"StatefulSet", kStatefulSets, statefulSets_.get()});
      kinds.push_back({"ControllerRevision", kControllerRevisions, controllerRevisions_.get()});
    }
    garbageCollector_ =
        std::make_unique<GarbageCollector>(rest_, std::move(kinds), options_.workersPerController);
  }
  if (!nodes_ &&
      (options_.enableNodeIpam || options_.enableNodeLifecycle || options_.enablePodGc)) {
    nodes_ = std::make_unique<client::Informer>(rest_, res::kNodes);
  }
  if (options_.enableNodeIpam) {
    nodeIpam_ = std::make_unique<NodeIpamController>(rest_, *nodes_,
                                                     NodeIpamOptions{options_.clusterCidr, 24});
  }
  if (options_.enableHorizontalPodAutoscaler) {
    hpas_ = std::make_unique<client::Informer>(rest_, res::kHpas);
    metricsSource_ = std::make_unique<hpa::RestMetricsSource>(rest_);
    hpa::HpaControllerOptions hOpts;
    hOpts.syncPeriod = options_.hpaSyncPeriod;
    hOpts.downscaleStabilization = options_.hpaDownscaleStabilization;
    hpaController_ = std::make_unique<hpa::HorizontalPodAutoscalerController>(
        rest_, *hpas_, *pods_, *metricsSource_, hOpts);
  }
  if (options_.enableNodeLifecycle) {
    leases_ = std::make_unique<client::Informer>(rest_, res::kLeases, "kube-node-lease");
    NodeLifecycleOptions nOpts;
    nOpts.gracePeriod = options_.nodeMonitorGracePeriod;
    nOpts.defaultTolerationSeconds = options_.podEvictionTimeout;
    nodeLifecycleEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "node-controller"});
    nOpts.events = nodeLifecycleEvents_.get();
    nodeLifecycle_ =
        std::make_unique<NodeLifecycleController>(rest_, *nodes_, *pods_, *leases_, nOpts);
  }
  if (options_.enablePodGc) {
    PodGcOptions gOpts;
    gOpts.terminatedPodThreshold = options_.terminatedPodGcThreshold;
    gOpts.quarantine = options_.podGcQuarantine;
    podGc_ = std::make_unique<PodGcController>(rest_, *pods_, *nodes_, gOpts);
  }
  if (options_.enableServiceAccounts) {
    namespaces_ = std::make_unique<client::Informer>(rest_, res::kNamespaces);
    serviceAccounts_ = std::make_unique<client::Informer>(rest_, res::kServiceAccounts);
    serviceAccountsController_ =
        std::make_unique<ServiceAccountsController>(rest_, *namespaces_, *serviceAccounts_);
    if (!options_.rootCaPem.empty()) {
      client::ListParams onlyRootCa;
      onlyRootCa.fieldSelector = std::string("metadata.name=") + kRootCaConfigMapName;
      rootCaConfigMaps_ =
          std::make_unique<client::Informer>(rest_, res::kConfigMaps, "", onlyRootCa);
      rootCaPublisher_ = std::make_unique<RootCaPublisher>(rest_, *namespaces_, *rootCaConfigMaps_,
                                                           options_.rootCaPem);
    }
  }
  const bool signing = !options_.signingCa.certPem.empty() && !options_.signingCa.keyPem.empty();
  if (options_.enableCsrApproving || signing) {
    csrs_ = std::make_unique<client::Informer>(rest_, certificates::kCertificateSigningRequests);
  }
  if (options_.enableCsrApproving) {
    csrApproving_ = std::make_unique<certificates::CsrApprovingController>(rest_, *csrs_);
  }
  if (signing) {
    certificates::CsrSigningOptions sOpts;
    sOpts.ca = options_.signingCa;
    csrSigning_ = std::make_unique<certificates::CsrSigningController>(rest_, *csrs_, sOpts);
  }
}

ControllerManager::~ControllerManager() { stop(); }

std::vector<client::Informer*> ControllerManager::workloadInformers() const {
  std::vector<client::Informer*> out;
  for (auto* inf :
       {pods_.get(), replicaSets_.get(), deployments_.get(), jobs_.get(), cronJobs_.get(),
        daemonSets_.get(), statefulSets_.get(), controllerRevisions_.get()}) {
    if (inf) out.push_back(inf);
  }
  return out;
}

Status ControllerManager::start() {
  for (auto* inf : workloadInformers()) {
    if (inf) inf->start();
  }
  started_ = true;
  for (auto* inf : workloadInformers()) {
    if (inf && !inf->waitForSync(options_.syncTimeout)) {
      return Status::Unavailable("controller-manager: informer caches did not sync from " +
                                 rest_.baseUrl());
    }
  }
  if (nodes_) {
    nodes_->start();
    if (!nodes_->waitForSync(options_.syncTimeout))
      return Status::Unavailable("controller-manager: node cache did not sync");
    if (nodeIpam_) nodeIpam_->start();
  }
  for (auto* inf : {hpas_.get(), leases_.get()}) {
    if (!inf) continue;
    inf->start();
    if (!inf->waitForSync(options_.syncTimeout))
      return Status::Unavailable("controller-manager: hpa/lease cache did not sync");
  }
  if (hpaController_) hpaController_->start();
  if (nodeLifecycle_) nodeLifecycle_->start();
  if (podGc_) podGc_->start();
  if (services_) {
    services_->start();
    if (!services_->waitForSync(options_.syncTimeout))
      return Status::Unavailable("controller-manager: service cache did not sync");
    endpointsController_->start();
    endpointSliceController_->start();
  }
  for (auto* inf :
       {namespaces_.get(), serviceAccounts_.get(), rootCaConfigMaps_.get(), csrs_.get()}) {
    if (!inf) continue;
    inf->start();
    if (!inf->waitForSync(options_.syncTimeout))
      return Status::Unavailable(
          "controller-manager: namespace/serviceaccount/configmap/csr "
          "cache did not sync");
  }
  if (serviceAccountsController_) serviceAccountsController_->start();
  if (rootCaPublisher_) rootCaPublisher_->start();
  if (csrApproving_) csrApproving_->start();
  if (csrSigning_) csrSigning_->start();
  replicaSetController_->start();
  deploymentController_->start();
  if (jobController_) jobController_->start();
  if (ttlAfterFinished_) ttlAfterFinished_->start();
  if (cronJobController_) cronJobController_->start();
  if (daemonSetController_) daemonSetController_->start();
  if (statefulSetController_) statefulSetController_->start();
  if (garbageCollector_) garbageCollector_->start();
  LOG_INFO("controller-manager: replicaset, deployment{}{} controllers running against {}",
           jobController_ ? ", job, cronjob, ttl-after-finished, daemonset, statefulset" : "",
           garbageCollector_ ? ", garbage-collector" : "", rest_.baseUrl());
  return Status::Ok();
}

void ControllerManager::stop() {
  if (!started_) return;
  started_ = false;
  replicaSetController_->stop();
  deploymentController_->stop();
  if (jobController_) jobController_->stop();
  if (ttlAfterFinished_) ttlAfterFinished_->stop();
  if (cronJobController_) cronJobController_->stop();
  if (daemonSetController_) daemonSetController_->stop();
  if (statefulSetController_) statefulSetController_->stop();
  if (garbageCollector_) garbageCollector_->stop();
  if (endpointsController_) endpointsController_->stop();
  if (endpointSliceController_) endpointSliceController_->stop();
  if (services_) services_->stop();
  if (nodeIpam_) nodeIpam_->stop();
  if (hpaController_) hpaController_->stop();
  if (nodeLifecycle_) nodeLifecycle_->stop();
  if (podGc_) podGc_->stop();
  for (auto* inf : {hpas_.get(), leases_.get()}) {
    if (inf) inf->stop();
  }
  if (serviceAccountsController_) serviceAccountsController_->stop();
  if (rootCaPublisher_) rootCaPublisher_->stop();
  if (csrApproving_) csrApproving_->stop();
  if (csrSigning_) csrSigning_->stop();
  for (auto* inf :
       {namespaces_.get(), serviceAccounts_.get(), rootCaConfigMaps_.get(), csrs_.get()}) {
    if (inf) inf->stop();
  }
  if (nodes_) nodes_->stop();
  for (auto* inf : workloadInformers()) {
    if (inf) inf->stop();
  }
}

}  // namespace minik8s::controllers
