#include "controllers/manager/controller_manager.h"

#include <algorithm>
#include <functional>
#include <map>

#include "api/csr_rules.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/certificates/csr_approving_controller.h"
#include "controllers/certificates/csr_cleaner_controller.h"
#include "controllers/certificates/csr_signing_controller.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/daemonset/daemonset_controller.h"
#include "controllers/deployment/deployment_controller.h"
#include "controllers/endpoints/endpoints_controller.h"
#include "controllers/endpoints/endpointslice_controller.h"
#include "controllers/function/function_controller.h"
#include "controllers/gc/garbage_collector.h"
#include "controllers/hpa/hpa_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/mesh/mesh_certificate_controller.h"
#include "controllers/mesh/mesh_controller.h"
#include "controllers/mesh/mesh_rollout_controller.h"
#include "controllers/namespace/namespace_controller.h"
#include "controllers/nodeipam/node_ipam_controller.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/podgc/pod_gc_controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "controllers/resourcequota/resource_quota_controller.h"
#include "controllers/serviceaccount/root_ca_publisher.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "controllers/slurmjob/slurmjob_controller.h"
#include "controllers/statefulset/statefulset_controller.h"
#include "controllers/trigger/trigger_controller.h"
#include "controllers/volume/csi_provisioner.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "controllers/volume/volume_protection_controller.h"
#include "controllers/workflow/workflow_controller.h"
#include "mesh/mesh_resources.h"
#include "mesh/rollout_cluster.h"
#include "mesh/rollout_resource.h"
#include "serverless/function.h"
#include "serverless/trigger.h"
#include "serverless/workflow.h"
#include "slurm/slurm_job.h"

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
  auto quotaSync = parseDurationFlag("--resource-quota-sync-period", resourceQuotaSyncPeriod);
  auto signing = parseDurationFlag("--cluster-signing-duration", clusterSigningDuration);
  for (const auto* r : {&sync, &window, &grace, &eviction, &quotaSync, &signing}) {
    if (!r->ok()) return r->status();
  }
  options.hpaSyncPeriod = *sync;
  options.hpaDownscaleStabilization = duration_cast<seconds>(*window);
  options.nodeMonitorGracePeriod = duration_cast<seconds>(*grace);
  options.podEvictionTimeout = duration_cast<seconds>(*eviction);
  options.terminatedPodGcThreshold = terminatedPodGcThreshold;
  options.resourceQuotaSyncPeriod = *quotaSync;
  options.signingDuration = duration_cast<seconds>(*signing);
  if (options.signingDuration.count() <= 0)
    return Status::BadRequest("--cluster-signing-duration must be positive");
  auto selected = selectControllers(controllers);
  if (!selected.ok()) return selected.status();
  options.controllers = controllers;
  return Status::Ok();
}

// The informers (one handle per resource, namespace and selector on the SharedInformers, which
// all the controllers' handlers register on) and the event recorders the controllers are built
// from. Informers are created on first use, before any starts.
class ControllerManager::Context {
 public:
  Context(client::RestClient& rest, const Options& options, client::SharedInformers& shared)
      : rest(rest), options(options), shared_(shared) {}

  client::Informer& informer(const client::Resource& r, const std::string& ns = "",
                             const client::ListParams& selectors = {}) {
    const std::string key =
        r.path(ns) + "?" + selectors.labelSelector + "&" + selectors.fieldSelector;
    auto it = informers_.find(key);
    if (it == informers_.end()) {
      it = informers_.emplace(key, shared_.informer(r, ns, selectors)).first;
      order_.push_back(it->second.get());
    }
    return *it->second;
  }
  // An informer with the "namespace" index the workload controllers look pods up by.
  client::Informer& indexed(const client::Resource& r) {
    client::Informer& inf = informer(r);
    addNamespaceIndex(inf);
    return inf;
  }
  client::ApiEventRecorder* recorder(const std::string& component) {
    recorders_.push_back(std::make_unique<client::ApiEventRecorder>(
        rest, client::ApiEventRecorderOptions{.component = component}));
    return recorders_.back().get();
  }
  const std::vector<client::Informer*>& informers() const { return order_; }

  client::RestClient& rest;
  const Options& options;

 private:
  client::SharedInformers& shared_;
  std::map<std::string, std::unique_ptr<client::Informer>> informers_;
  std::vector<client::Informer*> order_;
  std::vector<std::unique_ptr<client::ApiEventRecorder>> recorders_;
};

namespace {

// A node's CSINode (written by its kubelet, owned by the Node): collected with the node.
const client::Resource kCsiNodes{"storage.k8s.io", "v1", "csinodes", false};

using Context = ControllerManager::Context;
using Runnable = ControllerManager::Runnable;

// A controller with start() and stop(), and whatever else it needs kept alive with it.
template <typename T>
class Owned : public Runnable {
 public:
  explicit Owned(std::unique_ptr<T> c, std::shared_ptr<void> keep = nullptr)
      : controller_(std::move(c)), keep_(std::move(keep)) {}
  void start() override { controller_->start(); }
  void stop() override { controller_->stop(); }

 private:
  std::unique_ptr<T> controller_;
  std::shared_ptr<void> keep_;  // destroyed after the controller
};

template <typename T, typename... Args>
std::unique_ptr<Runnable> make(Args&&... args) {
  return std::make_unique<Owned<T>>(std::make_unique<T>(std::forward<Args>(args)...));
}

struct Registration {
  ControllerInfo info;
  // Null when the controller cannot run with these options (it is then skipped with a log line).
  std::function<std::unique_ptr<Runnable>(Context&)> build;
};

// Every controller, in start order. A new controller is one entry here.
const std::vector<Registration>& registrations() {
  static const std::vector<Registration> kRegistrations = {
      {{"endpoint"},
       [](Context& c) {
         return make<EndpointsController>(c.rest, c.informer(res::kServices), c.indexed(res::kPods),
                                          c.options.workersPerController,
                                          c.recorder("endpoint-controller"));
       }},
      {{"endpointslice"},
       [](Context& c) {
         return make<EndpointSliceController>(c.rest, c.informer(res::kServices),
                                              c.indexed(res::kPods), c.options.workersPerController,
                                              c.recorder("endpoint-slice-controller"));
       }},
      {{"replicaset"},
       [](Context& c) {
         ReplicaSetControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("replicaset-controller");
         return make<ReplicaSetController>(c.rest, c.informer(res::kReplicaSets),
                                           c.indexed(res::kPods), o);
       }},
      {{"deployment"},
       [](Context& c) {
         DeploymentControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("deployment-controller");
         return make<DeploymentController>(c.rest, c.informer(res::kDeployments),
                                           c.informer(res::kReplicaSets), c.indexed(res::kPods), o);
       }},
      {{"job"},
       [](Context& c) {
         JobControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("job-controller");
         return make<JobController>(c.rest, c.indexed(res::kJobs), c.indexed(res::kPods), o);
       }},
      {{"ttl-after-finished"},
       [](Context& c) { return make<TtlAfterFinishedController>(c.rest, c.indexed(res::kJobs)); }},
      {{"cronjob"},
       [](Context& c) {
         CronJobControllerOptions o;
         o.events = c.recorder("cronjob-controller");
         return make<CronJobController>(c.rest, c.informer(kCronJobs), c.indexed(res::kJobs), o);
       }},
      {{"daemonset"},
       [](Context& c) {
         DaemonSetControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("daemonset-controller");
         return make<DaemonSetController>(c.rest, c.informer(kDaemonSets), c.indexed(res::kPods),
                                          c.informer(res::kNodes), c.indexed(kControllerRevisions),
                                          o);
       }},
      {{"statefulset"},
       [](Context& c) {
         StatefulSetControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("statefulset-controller");
         return make<StatefulSetController>(c.rest, c.informer(kStatefulSets),
                                            c.indexed(res::kPods), c.indexed(kControllerRevisions),
                                            o);
       }},
      {{"persistentvolume-binder"},
       [](Context& c) {
         PersistentVolumeControllerOptions o;
         o.workers = c.options.workersPerController;
         o.events = c.recorder("persistentvolume-controller");
         return make<PersistentVolumeController>(c.rest, c.informer(kPersistentVolumes),
                                                 c.informer(kPersistentVolumeClaims),
                                                 c.informer(kStorageClasses), o);
       }},
      {{"pvc-protection"},
       [](Context& c) {
         VolumeProtectionControllerOptions o;
         o.volumes = false;
         return make<VolumeProtectionController>(c.rest, c.informer(kPersistentVolumeClaims),
                                                 c.informer(kPersistentVolumes),
                                                 c.indexed(res::kPods), o);
       }},
      {{"pv-protection"},
       [](Context& c) {
         VolumeProtectionControllerOptions o;
         o.claims = false;
         return make<VolumeProtectionController>(c.rest, c.informer(kPersistentVolumeClaims),
                                                 c.informer(kPersistentVolumes),
                                                 c.indexed(res::kPods), o);
       }},
      {{"csi-provisioner"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         if (c.options.csiDrivers.empty()) return nullptr;
         CsiProvisionerOptions o;
         o.drivers = c.options.csiDrivers;
         o.events = c.recorder("external-provisioner");
         return make<CsiProvisioner>(c.rest, c.informer(kPersistentVolumeClaims),
                                     c.informer(kPersistentVolumes), c.informer(kStorageClasses),
                                     o);
       }},
      {{"garbagecollector"},
       [](Context& c) {
         std::vector<GcKind> kinds = {
             {"Pod", res::kPods, &c.indexed(res::kPods)},
             {"ReplicaSet", res::kReplicaSets, &c.informer(res::kReplicaSets)},
             {"Deployment", res::kDeployments, &c.informer(res::kDeployments)},
             {"Job", res::kJobs, &c.indexed(res::kJobs)},
             {"CronJob", kCronJobs, &c.informer(kCronJobs)},
             {"DaemonSet", kDaemonSets, &c.informer(kDaemonSets)},
             {"StatefulSet", kStatefulSets, &c.informer(kStatefulSets)},
             {"ControllerRevision", kControllerRevisions, &c.indexed(kControllerRevisions)},
             {"Node", res::kNodes, &c.informer(res::kNodes)},
             {"CSINode", kCsiNodes, &c.informer(kCsiNodes)}};
         return make<GarbageCollector>(c.rest, std::move(kinds), c.options.workersPerController);
       }},
      {{"nodeipam"},
       [](Context& c) {
         return make<NodeIpamController>(c.rest, c.informer(res::kNodes),
                                         NodeIpamOptions{c.options.clusterCidr, 24});
       }},
      {{"horizontalpodautoscaling"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         auto metrics = std::make_shared<hpa::RestMetricsSource>(c.rest);
         hpa::HpaControllerOptions o;
         o.syncPeriod = c.options.hpaSyncPeriod;
         o.downscaleStabilization = c.options.hpaDownscaleStabilization;
         auto controller = std::make_unique<hpa::HorizontalPodAutoscalerController>(
             c.rest, c.informer(res::kHpas), c.indexed(res::kPods), *metrics, o);
         return std::make_unique<Owned<hpa::HorizontalPodAutoscalerController>>(
             std::move(controller), std::move(metrics));
       }},
      {{"nodelifecycle"},
       [](Context& c) {
         NodeLifecycleOptions o;
         o.gracePeriod = c.options.nodeMonitorGracePeriod;
         o.defaultTolerationSeconds = c.options.podEvictionTimeout;
         o.events = c.recorder("node-controller");
         return make<NodeLifecycleController>(c.rest, c.informer(res::kNodes),
                                              c.indexed(res::kPods),
                                              c.informer(res::kLeases, "kube-node-lease"), o);
       }},
      {{"podgc"},
       [](Context& c) {
         PodGcOptions o;
         o.terminatedPodThreshold = c.options.terminatedPodGcThreshold;
         o.quarantine = c.options.podGcQuarantine;
         return make<PodGcController>(c.rest, c.indexed(res::kPods), c.informer(res::kNodes), o);
       }},
      {{"resourcequota"},
       [](Context& c) {
         ResourceQuotaControllerOptions o;
         o.workers = c.options.workersPerController;
         o.resyncPeriod = c.options.resourceQuotaSyncPeriod;
         std::vector<QuotaMonitor> monitors = {{res::kPods, &c.indexed(res::kPods)}};
         for (const auto* r :
              {&res::kServices, &kPersistentVolumeClaims, &res::kConfigMaps, &res::kSecrets}) {
           monitors.push_back({*r, &c.informer(*r)});
         }
         return make<ResourceQuotaController>(c.rest, c.informer(kResourceQuotas),
                                              std::move(monitors), o);
       }},
      {{"namespace"},
       [](Context& c) { return make<NamespaceController>(c.rest, c.informer(res::kNamespaces)); }},
      {{"serviceaccount"},
       [](Context& c) {
         return make<ServiceAccountsController>(c.rest, c.informer(res::kNamespaces),
                                                c.informer(res::kServiceAccounts));
       }},
      {{"root-ca-cert-publisher"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         if (c.options.rootCaPem.empty()) return nullptr;  // no CA given
         client::ListParams onlyRootCa;
         onlyRootCa.fieldSelector = std::string("metadata.name=") + kRootCaConfigMapName;
         return make<RootCaPublisher>(c.rest, c.informer(res::kNamespaces),
                                      c.informer(res::kConfigMaps, "", onlyRootCa),
                                      c.options.rootCaPem);
       }},
      {{"csrapproving"},
       [](Context& c) {
         return make<certificates::CsrApprovingController>(
             c.rest, c.informer(res::kCertificateSigningRequests));
       }},
      {{"slurmjob"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         // The kind is a CustomResourceDefinition the controller brings along (as operators do);
         // installed before the informers list it.
         Status crd = slurm::ensureSlurmJobCrd(c.rest);
         if (!crd.ok()) {
           LOG_WARN("slurmjob controller not started: cannot install the SlurmJob CRD: {}",
                    crd.toString());
           return nullptr;
         }
         SlurmJobControllerOptions o;
         o.events = c.recorder("slurmjob-controller");
         return make<SlurmJobController>(c.rest, c.informer(slurm::kSlurmJobs),
                                         c.indexed(res::kJobs), o);
       }},
      {{"function"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         Status crd = serverless::ensureFunctionCrd(c.rest);  // as for SlurmJob above
         if (!crd.ok()) {
           LOG_WARN("function controller not started: cannot install the Function CRD: {}",
                    crd.toString());
           return nullptr;
         }
         FunctionControllerOptions o;
         o.events = c.recorder("function-controller");
         return make<FunctionController>(c.rest, c.informer(serverless::kFunctions),
                                         c.informer(res::kDeployments), c.informer(res::kServices),
                                         c.indexed(res::kPods), o);
       }},
      {{"trigger"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         Status crd = serverless::ensureTriggerCrd(c.rest);  // as for Function above
         if (!crd.ok()) {
           LOG_WARN("trigger controller not started: cannot install the Trigger CRD: {}",
                    crd.toString());
           return nullptr;
         }
         TriggerControllerOptions o;
         o.events = c.recorder("trigger-controller");
         return make<TriggerController>(c.rest, c.informer(serverless::kTriggers),
                                        c.informer(res::kDeployments), o);
       }},
      {{"workflow"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         Status crd = serverless::ensureWorkflowCrds(c.rest);  // as for Function above
         if (!crd.ok()) {
           LOG_WARN("workflow controller not started: cannot install the Workflow CRDs: {}",
                    crd.toString());
           return nullptr;
         }
         WorkflowControllerOptions o;
         o.events = c.recorder("workflow-controller");
         return make<WorkflowController>(c.rest, c.informer(serverless::kWorkflows),
                                         c.informer(serverless::kWorkflowExecutions), o);
       }},
      {{"mesh"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         // VirtualService and DestinationRule CRDs, and the sidecars' read access (docs/mesh.md).
         Status s = mesh::ensureMeshResources(c.rest);
         if (!s.ok()) {
           LOG_WARN("mesh controller not started: cannot install the mesh's kinds: {}",
                    s.toString());
           return nullptr;
         }
         return make<MeshController>(c.rest, c.informer(res::kNamespaces),
                                     client::RealClock::instance(), c.options.meshAllNamespaces);
       }},
      {{"meshrollout"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         // MeshRollouts: progressive rollouts kept in their status (docs/mesh.md).
         Status crd = mesh::ensureMeshRolloutCrd(c.rest);
         if (!crd.ok()) {
           LOG_WARN("meshrollout controller not started: cannot install the MeshRollout CRD: {}",
                    crd.toString());
           return nullptr;
         }
         MeshRolloutControllerOptions o;
         o.events = c.recorder("meshrollout-controller");
         client::RestClient* rest = &c.rest;
         o.metrics = [rest, config = c.options.apiConfig](const std::string& ns,
                                                          const std::string& service) {
           return std::make_unique<mesh::ExecRolloutMetrics>(config, *rest, ns, service);
         };
         return make<MeshRolloutController>(c.rest, c.informer(mesh::kMeshRollouts), o);
       }},
      {{"csrsigning"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         if (c.options.signingCa.certPem.empty() || c.options.signingCa.keyPem.empty()) {
           return nullptr;  // no signing CA given
         }
         certificates::CsrSigningOptions o;
         o.ca = c.options.signingCa;
         o.defaultValidity = c.options.signingDuration;
         o.maxValidity = c.options.signingDuration;
         return make<certificates::CsrSigningController>(
             c.rest, c.informer(res::kCertificateSigningRequests), o);
       }},
      {{"csrcleaner"},
       [](Context& c) {
         // Old CSRs (approved, denied, failed, pending, expired) deleted hourly (its README).
         return make<certificates::CsrCleanerController>(
             c.rest, c.informer(res::kCertificateSigningRequests));
       }},
      {{"meshcertificates"},
       [](Context& c) -> std::unique_ptr<Runnable> {
         // The sidecars' SPIFFE certificates (signer minik8s.io/mesh-workload, docs/mesh.md).
         if (c.options.signingCa.certPem.empty() || c.options.signingCa.keyPem.empty()) {
           return nullptr;  // no signing CA given
         }
         MeshCertificateOptions o;
         o.ca = c.options.signingCa;
         return make<MeshCertificateController>(c.rest,
                                                c.informer(res::kCertificateSigningRequests), o);
       }},
  };
  return kRegistrations;
}

}  // namespace

std::vector<ControllerInfo> knownControllers() {
  std::vector<ControllerInfo> out;
  for (const auto& r : registrations()) out.push_back(r.info);
  return out;
}

Result<std::vector<std::string>> selectControllers(const std::vector<std::string>& flags) {
  std::map<std::string, bool> on;
  for (const auto& r : registrations()) on[r.info.name] = false;
  for (std::string flag : flags) {
    while (!flag.empty() && flag.front() == ' ') flag.erase(0, 1);
    while (!flag.empty() && flag.back() == ' ') flag.pop_back();
    if (flag.empty()) continue;
    if (flag == "*") {
      for (const auto& r : registrations()) {
        if (r.info.enabledByDefault) on[r.info.name] = true;
      }
      continue;
    }
    const bool disable = flag.front() == '-';
    const std::string name = disable ? flag.substr(1) : flag;
    if (!on.count(name)) {
      std::string known;
      for (const auto& r : registrations()) known += (known.empty() ? "" : ", ") + r.info.name;
      return Status::BadRequest("--controllers: unknown controller \"" + name +
                                "\" (known: " + known + ")");
    }
    on[name] = !disable;
  }
  std::vector<std::string> out;
  for (const auto& r : registrations()) {
    if (on[r.info.name]) out.push_back(r.info.name);
  }
  return out;
}

ControllerManager::ControllerManager(client::RestClient& rest, Options options,
                                     client::SharedInformers* informers)
    : rest_(rest), options_(std::move(options)), sharedInformers_(informers) {}

ControllerManager::~ControllerManager() { stop(); }

std::vector<std::string> ControllerManager::running() const {
  std::vector<std::string> out;
  for (const auto& [name, c] : controllers_) out.push_back(name);
  return out;
}

Status ControllerManager::start() {
  auto selected = selectControllers(options_.controllers);
  if (!selected.ok()) return selected.status();
  if (!sharedInformers_) {
    ownInformers_ = std::make_unique<client::SharedInformers>(rest_);
    sharedInformers_ = ownInformers_.get();
  }
  context_ = std::make_unique<Context>(rest_, options_, *sharedInformers_);
  // Build every selected controller first: they register their informer handlers before any
  // informer starts.
  for (const auto& r : registrations()) {
    if (std::find(selected->begin(), selected->end(), r.info.name) == selected->end()) continue;
    auto controller = r.build(*context_);
    if (!controller) {
      LOG_INFO("controller-manager: {} is not started (its options are not set)", r.info.name);
      continue;
    }
    controllers_.emplace_back(r.info.name, std::move(controller));
  }
  started_ = true;
  for (auto* inf : context_->informers()) inf->start();
  for (auto* inf : context_->informers()) {
    if (!inf->waitForSync(options_.syncTimeout)) {
      return Status::Unavailable("controller-manager: informer caches did not sync from " +
                                 rest_.baseUrl());
    }
  }
  std::string names;
  for (auto& [name, controller] : controllers_) {
    controller->start();
    names += (names.empty() ? "" : ", ") + name;
  }
  LOG_INFO("controller-manager: {} running against {}", names.empty() ? "no controllers" : names,
           rest_.baseUrl());
  return Status::Ok();
}

void ControllerManager::stop() {
  if (!started_) return;
  started_ = false;
  for (auto it = controllers_.rbegin(); it != controllers_.rend(); ++it) it->second->stop();
  if (context_) {
    for (auto* inf : context_->informers()) inf->stop();
  }
  if (ownInformers_) ownInformers_->stop();  // shared ones watch on for their other readers
}

}  // namespace minik8s::controllers
