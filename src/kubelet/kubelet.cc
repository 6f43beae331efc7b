#include "kubelet/kubelet.h"

#include <algorithm>

#include "common/logging.h"
#include "kubelet/csi_node_registration.h"
#include "kubelet/pod_util.h"

namespace minik8s::kubelet {

namespace {

PodSyncerOptions syncerOptions(const KubeletOptions& o) {
  PodSyncerOptions s;
  s.nodeName = o.nodeName;
  s.hostIP = o.hostIP;
  s.podLogRoot = o.dataDir + "/logs/pods";
  s.seccompProfileRoot = o.dataDir + "/seccomp";
  s.allowedUnsafeSysctls = o.allowedUnsafeSysctls;
  s.cgroupRoot = o.cgroupRoot.empty() ? "/minik8s/" + o.nodeName + "/kubepods" : o.cgroupRoot;
  s.clusterDNS = o.clusterDNS;
  s.clusterDomain = o.clusterDomain;
  s.memoryCapacityBytes = collectMachineInfo().memoryBytes;
  return s;
}

client::ApiEventRecorderOptions eventOptions(const KubeletOptions& o) {
  client::ApiEventRecorderOptions e;
  e.component = "kubelet";
  e.host = o.nodeName;
  return e;
}

}  // namespace

Kubelet::Kubelet(client::RestClient& client, cri::RuntimeService& runtime,
                 cri::ImageService& images, KubeletOptions options)
    : client_(client),
      runtime_(runtime),
      images_(images),
      options_(std::move(options)),
      objects_(client),
      events_(client, eventOptions(options_)),
      queue_(client::RealClock::instance(), std::chrono::milliseconds(200),
             std::chrono::seconds(10)),
      tokenRequester_(client),
      tokens_(tokenRequester_, client::RealClock::instance()),
      volumes_(options_.dataDir, objects_, client::RealClock::instance(), std::chrono::seconds(60),
               &tokens_, options_.csiDrivers),
      probes_(runtime, client::RealClock::instance()),
      syncer_(runtime, images, volumes_, objects_, probes_, client::RealClock::instance(),
              syncerOptions(options_), &events_),
      statusManager_(client) {
  queue_.enableMetrics("kubelet_pod_workers");
  metrics::Registry& registry = metrics::defaultRegistry();
  runtimeMetrics_.push_back(registry.gaugeCallback(
      "kubelet_running_pods", "Number of pods that have a running pod sandbox", [this] {
        auto sandboxes = runtime_.listPodSandbox();
        double n = 0;
        if (sandboxes.ok()) {
          for (const auto& s : *sandboxes) n += s.state() == v1::SANDBOX_READY ? 1 : 0;
        }
        return n;
      }));
  runtimeMetrics_.push_back(registry.callback(
      "kubelet_running_containers", "Number of containers currently running", metrics::Type::kGauge,
      {"container_state"}, [this] {
        std::vector<metrics::Sample> samples = {
            {{"created"}, 0}, {{"exited"}, 0}, {{"running"}, 0}, {{"unknown"}, 0}};
        auto containers = runtime_.listContainers();
        if (!containers.ok()) return std::vector<metrics::Sample>{};
        for (const auto& c : *containers) {
          switch (c.state()) {
            case v1::CONTAINER_CREATED:
              ++samples[0].value;
              break;
            case v1::CONTAINER_EXITED:
              ++samples[1].value;
              break;
            case v1::CONTAINER_RUNNING:
              ++samples[2].value;
              break;
            default:
              ++samples[3].value;
          }
        }
        return samples;
      }));
}

void Kubelet::recordPodStart(const std::string& uid, const json& status) {
  static metrics::Histogram& startDuration = metrics::defaultRegistry().histogram(
      "kubelet_pod_start_duration_seconds",
      "Duration in seconds from kubelet seeing a pod for the first time to the pod starting to "
      "run",
      {0.5, 1,   2,   3,   4,   5,   6,   8,   10,   20,   30,   45,  60,
       120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600});
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(startMu_);
  if (started_.count(uid)) return;
  auto [it, inserted] = firstSeen_.emplace(uid, now);
  if (status.value("phase", "") != "Running") return;
  startDuration.observe(std::chrono::duration<double>(now - it->second).count());
  firstSeen_.erase(it);
  started_.insert(uid);
}

void Kubelet::forgetPodStart(const std::string& uid) {
  std::lock_guard lock(startMu_);
  firstSeen_.erase(uid);
  started_.erase(uid);
}

Kubelet::~Kubelet() { stop(); }

Status Kubelet::start() {
  std::string runtimeVersion = "containerd://unknown";
  auto v = runtime_.version();
  if (!v.ok()) return Status::Unavailable("container runtime: " + v.status().message());
  runtimeVersion = v->runtime_name() + "://" + v->runtime_version();
  NodeStatusOptions nso;
  nso.nodeName = options_.nodeName;
  nso.hostIP = options_.hostIP;
  nso.labels = options_.nodeLabels;
  nso.registerTaints = options_.registerTaints;
  nso.podCIDR = options_.podCIDR;
  nso.maxPods = options_.maxPods;
  nso.kubeletPort = options_.kubeletPort;
  nso.capacityOverrides = options_.capacityOverrides;
  nso.containerRuntimeVersion = runtimeVersion;
  nso.events = &events_;
  nodeStatus_ = std::make_unique<NodeStatus>(client_, nso, collectMachineInfo());
  if (options_.registerNode) {
    nodeStatus_->recordNodeEvent("Starting", "Starting kubelet.");
    Status s = nodeStatus_->registerNode();
    if (!s.ok()) return s;
    nodeStatus_->renewLease();
    if (!options_.csiDrivers.empty()) {
      if (Status cs = registerCsiNode(client_, options_.nodeName, options_.csiDrivers); !cs.ok())
        LOG_WARN("CSINode {} not written: {}", options_.nodeName, cs.message());
    }
  }

  // Services before pods: a container's service variables are then read from the cache.
  if (!services_) {
    services_ = client::SharedInformers::informerOf(options_.informers, client_,
                                                    client::resources::kServices);
    services_->addIndex(client::kNamespaceIndex, client::namespaceIndex());
    services_->start();
    objects_.useServiceCache(services_.get());
  }

  client::ListParams params;
  params.fieldSelector = "spec.nodeName=" + options_.nodeName;
  informer_ = std::make_unique<client::Informer>(client_, client::resources::kPods, "", params);
  informer_->addHandlers({[this](const json& p) { queue_.add(podKey(p)); },
                          [this](const json&, const json& p) { queue_.add(podKey(p)); },
                          [this](const json& p) { queue_.add(podKey(p)); }});
  informer_->start();
  if (!informer_->waitForSync(std::chrono::seconds(30))) {
    informer_->stop();  // start() may be called again
    informer_.reset();
    return Status::Unavailable("pods of node " + options_.nodeName + " could not be listed");
  }
  // Pods deleted while the agent was down go before any new work starts.
  housekeeping();
  for (int i = 0; i < std::max(1, options_.workers); ++i)
    threads_.emplace_back([this] { workerLoop(); });
  threads_.emplace_back([this] { relistLoop(); });
  if (options_.registerNode) threads_.emplace_back([this] { nodeLoop(); });
  LOG_INFO("kubelet of node {} started ({})", options_.nodeName, runtimeVersion);
  return Status::Ok();
}

void Kubelet::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  queue_.shutDown();
  if (informer_) informer_->stop();
  objects_.useServiceCache(nullptr);
  if (services_) services_->stop();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void Kubelet::workerLoop() {
  while (auto key = queue_.get()) {
    syncPodKey(*key);
    queue_.done(*key);
  }
}

void Kubelet::syncPodKey(const std::string& key) {
  auto pod = informer_->get(key);
  if (!pod) return;  // gone from the API: housekeeping removes what is left in the runtime
  if (isTerminating(*pod)) {
    const std::string uid = podUid(*pod);
    Status s = syncer_.killPod(uid, terminationGracePeriod(*pod), &*pod);
    if (!s.ok()) {
      LOG_WARN("pod {}: termination: {}", key, s.message());
      queue_.addRateLimited(key);
      return;
    }
    // Everything is gone on the node: let the API server forget the pod.
    json opts = {{"apiVersion", "v1"},
                 {"kind", "DeleteOptions"},
                 {"gracePeriodSeconds", 0},
                 {"preconditions", {{"uid", uid}}}};
    auto r = client_.remove(client::resources::kPods, podNamespace(*pod), podName(*pod), opts);
    if (!r.ok() && r.status().code() != 404 && r.status().reason() != "Conflict")
      LOG_WARN("pod {}: final delete: {}", key, r.status().message());
    statusManager_.forgetPod(uid);
    forgetPodStart(uid);
    return;
  }
  auto status = syncer_.syncPod(*pod);
  if (!status.ok()) {
    LOG_WARN("pod {}: sync: {}", key, status.status().message());
    queue_.addRateLimited(key);
    return;
  }
  queue_.forget(key);
  recordPodStart(podUid(*pod), *status);
  Status s = statusManager_.setPodStatus(*pod, *status);
  if (!s.ok() && s.code() != 404) LOG_WARN("pod {}: status update: {}", key, s.message());
}

void Kubelet::housekeeping() {
  // The runtime first, the API pods after: a pod whose sandbox is being created is then always
  // in `known` (the informer had it before the sync started).
  auto uids = syncer_.runtimePodUids();
  auto cgroupUids = syncer_.cgroupPodUids();
  auto volumeUids = volumes_.podUidsOnDisk();
  std::set<std::string> known;
  for (const auto& p : informer_->list()) known.insert(podUid(p));
  if (uids.ok()) {
    for (const auto& uid : *uids) {
      if (known.count(uid)) continue;
      LOG_INFO("pod {} is no longer in the API: removing its containers", uid);
      syncer_.killPod(uid, 2);
      statusManager_.forgetPod(uid);
      forgetPodStart(uid);
    }
  }
  for (const auto& uid : volumeUids)
    if (!known.count(uid) && (!uids.ok() || !uids->count(uid))) volumes_.tearDownPod(uid);
  if (uids.ok())
    for (const auto& uid : cgroupUids)
      if (!known.count(uid) && !uids->count(uid)) syncer_.removeCgroups(uid);
}

void Kubelet::relistLoop() {
  auto nextHousekeeping = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    for (const auto& p : informer_->list()) queue_.add(podKey(p));
    if (std::chrono::steady_clock::now() >= nextHousekeeping) {
      housekeeping();
      nextHousekeeping = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    }
    lock.lock();
    cv_.wait_for(lock, options_.relistPeriod, [this] { return stopping_; });
  }
}

void Kubelet::nodeLoop() {
  auto nextStatus = std::chrono::steady_clock::now() + options_.nodeStatusPeriod;
  bool lastReady = true;
  RuntimeReadiness runtimeReadiness(options_.runtimeDownGrace);
  runtimeReadiness.observe(true, std::chrono::steady_clock::now());  // start() saw it answer
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, options_.leaseRenewPeriod, [this] { return stopping_; })) {
    lock.unlock();
    Status s = nodeStatus_->renewLease();
    if (!s.ok()) LOG_WARN("node lease: {}", s.message());
    auto rs = runtime_.status();
    bool ready = runtimeReadiness.observe(rs.ok(), std::chrono::steady_clock::now());
    // The node lifecycle controller marks a silent node Unknown: say how we are at once instead
    // of at the next periodic status (which could be a minute away).
    bool apiDiffers = false;
    if (auto node = client_.get(client::resources::kNodes, "", options_.nodeName); node.ok()) {
      std::string shown;
      for (const auto& c : node->value("status", json::object()).value("conditions", json::array()))
        if (c.value("type", "") == "Ready") shown = c.value("status", "");
      apiDiffers = shown != (ready ? "True" : "False");
    }
    if (apiDiffers || ready != lastReady || std::chrono::steady_clock::now() >= nextStatus) {
      s = nodeStatus_->updateStatus(ready, ready ? "" : "container runtime is down");
      if (!s.ok()) LOG_WARN("node status: {}", s.message());
      nextStatus = std::chrono::steady_clock::now() + options_.nodeStatusPeriod;
      lastReady = ready;
    }
    lock.lock();
  }
}

Result<server::ContainerLocation> Kubelet::findContainer(const std::string& ns,
                                                         const std::string& pod,
                                                         const std::string& container,
                                                         bool previous) {
  ::runtime::v1::ContainerFilter filter;
  auto& sel = *filter.mutable_label_selector();
  sel[kPodNamespaceLabel] = ns;
  sel[kPodNameLabel] = pod;
  sel[kContainerNameLabel] = container;
  if (informer_) {
    if (auto p = informer_->get(ns + "/" + pod)) sel[kPodUidLabel] = podUid(*p);
  }
  auto list = runtime_.listContainers(filter);
  if (!list.ok()) return list.status();
  std::vector<::runtime::v1::ContainerStatus> instances;
  for (const auto& c : *list) {
    auto st = runtime_.containerStatus(c.id());
    if (st.ok()) instances.push_back(*st);
  }
  std::sort(instances.begin(), instances.end(), [](const auto& a, const auto& b) {
    int ra = restartCountOf(a), rb = restartCountOf(b);
    return ra != rb ? ra > rb : a.created_at() > b.created_at();
  });
  size_t index = previous ? 1 : 0;
  if (instances.size() <= index) {
    if (previous)
      return Status::NotFoundMessage("previous terminated container \"" + container +
                                     "\" in pod \"" + pod + "\" not found");
    return Status::NotFoundMessage("container \"" + container + "\" in pod \"" + pod +
                                   "\" is waiting to start: ContainerCreating");
  }
  const auto& st = instances[index];
  return server::ContainerLocation{st.id(), st.log_path(),
                                   st.state() == ::runtime::v1::CONTAINER_RUNNING};
}

Result<std::string> Kubelet::attachUrl(const server::AttachSpec& spec) {
  ::runtime::v1::AttachRequest request;
  request.set_container_id(spec.containerId);
  request.set_stdin(spec.stdin);
  request.set_stdout(spec.stdout);
  request.set_stderr(spec.stderr);
  request.set_tty(spec.tty);
  return runtime_.attach(request);
}

Result<std::string> Kubelet::portForwardUrl(const std::string& ns, const std::string& pod) {
  ::runtime::v1::PodSandboxFilter filter;
  auto& sel = *filter.mutable_label_selector();
  sel[kPodNamespaceLabel] = ns;
  sel[kPodNameLabel] = pod;
  if (informer_) {
    if (auto p = informer_->get(ns + "/" + pod)) sel[kPodUidLabel] = podUid(*p);
  }
  filter.mutable_state()->set_state(::runtime::v1::SANDBOX_READY);
  auto sandboxes = runtime_.listPodSandbox(filter);
  if (!sandboxes.ok()) return sandboxes.status();
  const ::runtime::v1::PodSandbox* newest = nullptr;
  for (const auto& s : *sandboxes) {
    if (!newest || s.created_at() > newest->created_at()) newest = &s;
  }
  if (!newest) {
    return Status::NotFoundMessage("pod \"" + pod + "\" has no running sandbox on this node");
  }
  ::runtime::v1::PortForwardRequest request;
  request.set_pod_sandbox_id(newest->id());
  return runtime_.portForward(request);
}

}  // namespace minik8s::kubelet
