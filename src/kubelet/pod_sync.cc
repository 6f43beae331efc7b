#include "kubelet/pod_sync.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include "api/quantity.h"
#include "common/logging.h"
#include "kubelet/pod_util.h"
#include "kubelet/security_context.h"

namespace minik8s::kubelet {

namespace v1 = ::runtime::v1;

namespace {

std::map<std::string, std::string> podLabels(const json& pod) {
  std::map<std::string, std::string> out;
  if (pod.contains("/metadata/labels"_json_pointer))
    for (const auto& [k, v] : pod.at("/metadata/labels"_json_pointer).items())
      if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

std::vector<std::string> stringList(const json& container, const char* field) {
  std::vector<std::string> out;
  if (container.contains(field) && container[field].is_array())
    for (const auto& s : container[field])
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

v1::Protocol protocolOf(const std::string& p) {
  if (p == "UDP") return v1::UDP;
  if (p == "SCTP") return v1::SCTP;
  return v1::TCP;
}

// Newest instance first: by restart count, then creation time.
void sortNewestFirst(std::vector<v1::ContainerStatus>& instances) {
  std::sort(instances.begin(), instances.end(), [](const auto& a, const auto& b) {
    int ra = restartCountOf(a), rb = restartCountOf(b);
    if (ra != rb) return ra > rb;
    return a.created_at() > b.created_at();
  });
}

}  // namespace

PodSyncer::PodSyncer(cri::RuntimeService& runtime, cri::ImageService& images,
                     VolumeManager& volumes, ObjectSource& objects, ProbeManager& probes,
                     const client::Clock& clock, PodSyncerOptions options,
                     client::EventRecorder* events)
    : runtime_(runtime),
      images_(images),
      volumes_(volumes),
      objects_(objects),
      probes_(probes),
      clock_(clock),
      options_(std::move(options)),
      events_(events),
      restartBackoff_(clock),
      imageBackoff_(clock) {}

v1::PodSandboxConfig PodSyncer::sandboxConfig(const json& pod, uint32_t attempt) const {
  v1::PodSandboxConfig c;
  const std::string uid = podUid(pod), name = podName(pod), ns = podNamespace(pod);
  auto* md = c.mutable_metadata();
  md->set_name(name);
  md->set_namespace_(ns);
  md->set_uid(uid);
  md->set_attempt(attempt);
  const json spec = pod.value("spec", json::object());
  const bool hostNet = hostNetwork(pod);
  if (!hostNet) {
    std::string hostname = spec.value("hostname", name);
    c.set_hostname(hostname.substr(0, 63));
  }
  c.set_log_directory(options_.podLogRoot + "/" + ns + "_" + name + "_" + uid);
  const std::string dnsPolicy = spec.value("dnsPolicy", "ClusterFirst");
  auto* dns = c.mutable_dns_config();
  if (dnsPolicy == "ClusterFirst" && !hostNet && !options_.clusterDNS.empty()) {
    for (const auto& s : options_.clusterDNS) dns->add_servers(s);
    const std::string& d = options_.clusterDomain;
    for (const auto& s : {ns + ".svc." + d, "svc." + d, d}) dns->add_searches(s);
    dns->add_options("ndots:5");
  }
  if (spec.contains("dnsConfig")) {
    for (const auto& s : stringList(spec["dnsConfig"], "nameservers")) dns->add_servers(s);
    for (const auto& s : stringList(spec["dnsConfig"], "searches")) dns->add_searches(s);
    for (const auto& o : spec["dnsConfig"].value("options", json::array())) {
      std::string opt = o.value("name", "");
      if (o.contains("value") && o["value"].is_string()) opt += ":" + o["value"].get<std::string>();
      dns->add_options(opt);
    }
  }
  if (dns->servers_size() == 0 && dns->searches_size() == 0 && dns->options_size() == 0)
    c.clear_dns_config();
  for (const auto& ctr : containers(pod)) {
    for (const auto& p : ctr.value("ports", json::array())) {
      int hostPort = p.value("hostPort", 0);
      if (hostPort <= 0) continue;
      auto* pm = c.add_port_mappings();
      pm->set_protocol(protocolOf(p.value("protocol", "TCP")));
      pm->set_container_port(p.value("containerPort", 0));
      pm->set_host_port(hostPort);
      pm->set_host_ip(p.value("hostIP", ""));
    }
  }
  auto& labels = *c.mutable_labels();
  for (const auto& [k, v] : podLabels(pod)) labels[k] = v;
  labels[kPodNameLabel] = name;
  labels[kPodNamespaceLabel] = ns;
  labels[kPodUidLabel] = uid;
  if (pod.contains("/metadata/annotations"_json_pointer))
    for (const auto& [k, v] : pod.at("/metadata/annotations"_json_pointer).items())
      if (v.is_string()) (*c.mutable_annotations())[k] = v.get<std::string>();
  auto* lx = c.mutable_linux();
  lx->set_cgroup_parent(options_.cgroupRoot + "/pod" + uid);
  applySandboxSecurityContext(pod, *lx);
  return c;
}

Result<v1::ContainerConfig> PodSyncer::containerConfig(const json& pod, const json& container,
                                                       int restartCount, const EnvList& env,
                                                       const std::vector<v1::Mount>& mounts,
                                                       bool isInit,
                                                       const ImageUser& imageUser) const {
  v1::ContainerConfig c;
  const std::string name = container.value("name", "");
  c.mutable_metadata()->set_name(name);
  c.mutable_metadata()->set_attempt(static_cast<uint32_t>(restartCount));
  c.mutable_image()->set_image(container.value("image", ""));
  for (const auto& s : stringList(container, "command")) c.add_command(expandEnvRefs(s, env));
  for (const auto& s : stringList(container, "args")) c.add_args(expandEnvRefs(s, env));
  c.set_working_dir(container.value("workingDir", ""));
  for (const auto& [k, v] : env) {
    auto* kv = c.add_envs();
    kv->set_key(k);
    kv->set_value(v);
  }
  for (const auto& m : mounts) *c.add_mounts() = m;
  auto& labels = *c.mutable_labels();
  labels[kContainerNameLabel] = name;
  labels[kPodNameLabel] = podName(pod);
  labels[kPodNamespaceLabel] = podNamespace(pod);
  labels[kPodUidLabel] = podUid(pod);
  labels[kContainerTypeLabel] = isInit ? "init" : "regular";
  auto& annotations = *c.mutable_annotations();
  annotations[kRestartCountAnnotation] = std::to_string(restartCount);
  annotations["io.kubernetes.pod.terminationGracePeriod"] =
      std::to_string(terminationGracePeriod(pod));
  c.set_log_path(name + "/" + std::to_string(restartCount) + ".log");
  c.set_stdin(container.value("stdin", false));
  c.set_stdin_once(container.value("stdinOnce", false));
  c.set_tty(container.value("tty", false));
  auto* lx = c.mutable_linux();
  *lx->mutable_resources() = linuxResources(container);
  // oom_score_adj as Kubernetes' qos policy (negative values are clamped by the runtime).
  std::string qos = qosClass(pod);
  int64_t oom = 1000;
  if (qos == "Guaranteed") {
    oom = -997;
  } else if (qos == "Burstable") {
    int64_t memReq = 0;
    if (container.contains("/resources/requests/memory"_json_pointer)) {
      auto q = api::Quantity::fromJson(container.at("/resources/requests/memory"_json_pointer));
      if (q.ok()) memReq = q->value();
    }
    oom = options_.memoryCapacityBytes > 0 ? 1000 - (1000 * memReq) / options_.memoryCapacityBytes
                                           : 999;
    oom = std::clamp<int64_t>(oom, 2, 999);
  }
  lx->mutable_resources()->set_oom_score_adj(oom);
  auto sc = containerSecurityContext(pod, container, imageUser, options_.seccompProfileRoot);
  if (!sc.ok()) return sc.status();
  *lx->mutable_security_context() = std::move(*sc);
  return c;
}

Result<v1::ContainerStatus> PodSyncer::cachedContainerStatus(const v1::Container& c) {
  {
    std::lock_guard lock(mu_);
    auto it = statusCache_.find(c.id());
    if (it != statusCache_.end() && it->second.state() == c.state()) return it->second;
  }
  auto st = runtime_.containerStatus(c.id());
  if (!st.ok()) return st.status();
  std::lock_guard lock(mu_);
  statusCache_[c.id()] = *st;
  return *st;
}

std::chrono::steady_clock::time_point PodSyncer::exitSeenAt(const std::string& containerId) {
  std::lock_guard lock(mu_);
  return exitSeen_.try_emplace(containerId, clock_.now()).first->second;
}

void PodSyncer::event(const json& pod, const json* container, const std::string& type,
                      const std::string& reason, const std::string& message) {
  if (!events_) return;
  std::string fieldPath;
  if (container) {
    const std::string name = container->value("name", "");
    bool isInit = false;
    for (const auto& c : initContainers(pod)) isInit |= c.value("name", "") == name;
    fieldPath = client::containerFieldPath(name, isInit);
  }
  events_->record(pod, fieldPath, type, reason, message);
}

void PodSyncer::forgetContainer(const std::string& containerId) {
  probes_.forget(containerId);
  std::lock_guard lock(mu_);
  statusCache_.erase(containerId);
  exitSeen_.erase(containerId);
}

Result<PodRuntimeView> PodSyncer::observe(const json& pod) {
  PodRuntimeView view;
  const std::string uid = podUid(pod);
  v1::PodSandboxFilter sf;
  (*sf.mutable_label_selector())[kPodUidLabel] = uid;
  auto sandboxes = runtime_.listPodSandbox(sf);
  if (!sandboxes.ok()) return sandboxes.status();
  // The newest sandbox is the pod's; older ones are leftovers the sync removes.
  const v1::PodSandbox* newest = nullptr;
  for (const auto& s : *sandboxes)
    if (!newest || s.created_at() > newest->created_at()) newest = &s;
  if (newest) {
    view.sandboxId = newest->id();
    view.sandboxReady = newest->state() == v1::SANDBOX_READY;
    view.sandboxAttempt = newest->metadata().attempt();
    if (view.sandboxReady) view.podIPs = sandboxIPs(newest->id());
  }
  v1::ContainerFilter cf;
  (*cf.mutable_label_selector())[kPodUidLabel] = uid;
  auto ctrs = runtime_.listContainers(cf);
  if (!ctrs.ok()) return ctrs.status();
  for (const auto& c : *ctrs) {
    // Containers of an older sandbox belong to a previous incarnation of the pod.
    if (!view.sandboxId.empty() && c.pod_sandbox_id() != view.sandboxId) continue;
    auto st = cachedContainerStatus(c);
    if (!st.ok()) continue;  // removed meanwhile
    auto name = c.labels().find(kContainerNameLabel);
    std::string cname = name != c.labels().end() ? name->second : c.metadata().name();
    view.containers[cname].instances.push_back(*st);
  }
  for (auto& [name, cv] : view.containers) sortNewestFirst(cv.instances);
  applyProbeResults(pod, view);
  return view;
}

std::vector<std::string> PodSyncer::sandboxIPs(const std::string& sandboxId) {
  {
    std::lock_guard lock(mu_);
    auto it = sandboxIPs_.find(sandboxId);
    if (it != sandboxIPs_.end()) return it->second;
  }
  std::vector<std::string> ips;
  auto st = runtime_.podSandboxStatus(sandboxId);
  if (!st.ok()) return ips;  // asked again at the next sync
  if (!st->network().ip().empty()) ips.push_back(st->network().ip());
  for (const auto& extra : st->network().additional_ips()) ips.push_back(extra.ip());
  std::lock_guard lock(mu_);
  sandboxIPs_[sandboxId] = ips;
  return ips;
}

void PodSyncer::applyProbeResults(const json& pod, PodRuntimeView& view) {
  for (const auto& c : containers(pod)) {
    auto it = view.containers.find(c.value("name", ""));
    if (it == view.containers.end() || it->second.instances.empty()) continue;
    ContainerView& cv = it->second;
    const auto& latest = cv.instances[0];
    cv.started = cv.ready = false;
    if (latest.state() != v1::CONTAINER_RUNNING) continue;
    // Without a probe the answer is yes as soon as the container runs, as in Kubernetes.
    cv.started = !c.contains("startupProbe") || probes_.started(latest.id());
    cv.ready = cv.started && (!c.contains("readinessProbe") || probes_.ready(latest.id()));
  }
}

json PodSyncer::statusFor(const json& pod, const PodRuntimeView& view) {
  StatusContext ctx;
  ctx.hostIP = options_.hostIP;
  ctx.runtimeName = options_.runtimeName;
  return computePodStatus(pod, view, ctx);
}

std::optional<v1::ImageStatusResponse> PodSyncer::ensureImage(const json& pod,
                                                              const json& container,
                                                              ContainerView& view) {
  const std::string image = container.value("image", "");
  const std::string policy = imagePullPolicy(container);
  v1::ImageSpec spec;
  spec.set_image(image);
  auto st = images_.imageStatus(spec);
  bool present = st.ok() && st->has_image();
  if (policy == "Never" && !present) {
    view.waitingReason = "ErrImageNeverPull";
    view.waitingMessage =
        "Container image \"" + image + "\" is not present with pull policy of Never";
    event(pod, &container, "Warning", "ErrImageNeverPull", view.waitingMessage);
    return std::nullopt;
  }
  if (policy != "Always" && present) {
    event(pod, &container, "Normal", "Pulled",
          "Container image \"" + image + "\" already present on machine");
    return std::move(*st);
  }
  const std::string key = podUid(pod) + "/" + image;
  std::chrono::steady_clock::time_point failedAt{};
  bool failedBefore = false;
  {
    std::lock_guard lock(mu_);
    auto it = imagePullFailed_.find(key);
    if (it != imagePullFailed_.end()) {
      failedAt = it->second;
      failedBefore = true;
    }
  }
  if (failedBefore && imageBackoff_.inBackoffSince(key, failedAt)) {
    view.waitingReason = "ImagePullBackOff";
    view.waitingMessage = "Back-off pulling image \"" + image + "\"";
    event(pod, &container, "Normal", "BackOff", view.waitingMessage);
    event(pod, &container, "Warning", "Failed", "Error: ImagePullBackOff");
    return std::nullopt;
  }
  event(pod, &container, "Normal", "Pulling", "Pulling image \"" + image + "\"");
  const auto pullStart = std::chrono::steady_clock::now();
  v1::PodSandboxConfig sc = sandboxConfig(pod, 0);
  auto pulled = images_.pullImage(spec, &sc);
  if (!pulled.ok()) {
    imageBackoff_.next(key);
    {
      std::lock_guard lock(mu_);
      imagePullFailed_[key] = clock_.now();
    }
    // No external registry is reachable: say how an image gets into the cluster registry.
    std::string why = pulled.status().message();
    if (why.find("not found") != std::string::npos) {
      why +=
          " (no registry this node reaches has it: build it with `minik8s image build` or "
          "push an OCI archive with `minik8s image push` to the cluster registry)";
    }
    view.waitingReason = "ErrImagePull";
    view.waitingMessage = "failed to pull image \"" + image + "\": " + why;
    LOG_WARN("pod {}: {}", podKey(pod), view.waitingMessage);
    event(pod, &container, "Warning", "Failed", "Failed to pull image \"" + image + "\": " + why);
    event(pod, &container, "Warning", "Failed", "Error: ErrImagePull");
    return std::nullopt;
  }
  const double pullSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - pullStart).count();
  event(pod, &container, "Normal", "Pulled",
        fmt::format("Successfully pulled image \"{}\" in {:.3f}s", image, pullSeconds));
  imageBackoff_.reset(key);
  {
    std::lock_guard lock(mu_);
    imagePullFailed_.erase(key);
  }
  // The status of what was just pulled (the user it runs as comes from it).
  auto after = images_.imageStatus(spec);
  if (!after.ok()) {
    view.waitingReason = "CreateContainerConfigError";
    view.waitingMessage = after.status().message();
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return std::nullopt;
  }
  return std::move(*after);
}

bool PodSyncer::startContainer(const json& pod, const json& container, int restartCount,
                               bool isInit, const PodRuntimeView& podView, ContainerView& view,
                               const VolumeManager::VolumePaths& volumes) {
  const std::string name = container.value("name", "");
  auto imageStatus = ensureImage(pod, container, view);
  if (!imageStatus) return false;
  PodRuntimeFields fields;
  fields.podIPs = podView.podIPs;
  if (hostNetwork(pod)) fields.podIPs = {options_.hostIP};
  fields.podIP = fields.podIPs.empty() ? "" : fields.podIPs[0];
  fields.hostIP = options_.hostIP;
  auto env = resolveEnv(pod, container, fields, objects_);
  if (!env.ok()) {
    view.waitingReason = "CreateContainerConfigError";
    view.waitingMessage = env.status().message();
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return false;
  }
  auto mounts = volumes_.mountsFor(container, volumes);
  if (!mounts.ok()) {
    view.waitingReason = "CreateContainerConfigError";
    view.waitingMessage = mounts.status().message();
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return false;
  }
  // The user the image runs as: for runAsNonRoot and as the default runAsUser.
  const ImageUser imageUser = imageUserOf(*imageStatus);
  Status nonRoot = verifyRunAsNonRoot(pod, container, imageUser);
  auto cc = nonRoot.ok()
                ? containerConfig(pod, container, restartCount, *env, *mounts, isInit, imageUser)
                : Result<v1::ContainerConfig>(nonRoot);
  if (!cc.ok()) {
    view.waitingReason = "CreateContainerConfigError";
    view.waitingMessage = cc.status().message();
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return false;
  }
  // The container's log directory must exist before the runtime opens the log file.
  v1::PodSandboxConfig sc = sandboxConfig(pod, podView.sandboxAttempt);
  std::error_code ec;
  std::filesystem::create_directories(sc.log_directory() + "/" + name, ec);
  auto id = runtime_.createContainer(podView.sandboxId, *cc, sc);
  if (!id.ok()) {
    view.waitingReason = "CreateContainerError";
    view.waitingMessage = id.status().message();
    LOG_WARN("pod {}: create container {}: {}", podKey(pod), name, id.status().message());
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return false;
  }
  event(pod, &container, "Normal", "Created", "Created container " + name);
  Status s = runtime_.startContainer(*id);
  if (!s.ok()) {
    view.waitingReason = "RunContainerError";
    view.waitingMessage = s.message();
    LOG_WARN("pod {}: start container {}: {}", podKey(pod), name, s.message());
    event(pod, &container, "Warning", "Failed", "Error: " + view.waitingMessage);
    return false;
  }
  event(pod, &container, "Normal", "Started", "Started container " + name);
  LOG_INFO("pod {}: started container {} ({}, restart {})", podKey(pod), name, *id, restartCount);
  view.waitingReason.clear();
  return true;
}

bool PodSyncer::restartWithBackoff(const json& pod, const json& container, bool isInit,
                                   const PodRuntimeView& podView, ContainerView& view,
                                   const VolumeManager::VolumePaths& volumes) {
  const auto& latest = view.instances[0];
  const std::string name = container.value("name", "");
  const std::string key = podUid(pod) + "/" + name;
  if (restartBackoff_.inBackoffSince(key, exitSeenAt(latest.id()))) {
    auto delay = std::chrono::duration_cast<std::chrono::seconds>(restartBackoff_.get(key));
    view.waitingReason = "CrashLoopBackOff";
    view.waitingMessage = "back-off " + std::to_string(delay.count()) +
                          "s restarting failed container=" + name + " pod=" + podName(pod) + "_" +
                          podNamespace(pod) + "(" + podUid(pod) + ")";
    event(pod, &container, "Warning", "BackOff",
          "Back-off restarting failed container " + name + " in pod " + podName(pod) + "_" +
              podNamespace(pod) + "(" + podUid(pod) + ")");
    return false;
  }
  restartBackoff_.next(key);
  return startContainer(pod, container, restartCountOf(latest) + 1, isInit, podView, view, volumes);
}

Result<json> PodSyncer::syncPod(const json& pod) {
  const std::string uid = podUid(pod);
  auto observed = observe(pod);
  if (!observed.ok()) return observed.status();
  PodRuntimeView view = std::move(*observed);
  const std::string policy = restartPolicy(pod);

  // A finished pod keeps its containers for logs but gives up its sandbox (and IP).
  const std::string oldPhase = pod.contains("/status/phase"_json_pointer)
                                   ? pod.at("/status/phase"_json_pointer).get<std::string>()
                                   : "";
  if (oldPhase == "Succeeded" || oldPhase == "Failed") {
    // Nothing ran here (a rejected pod) or nothing is left: the reported status stands.
    if (view.sandboxId.empty() && view.containers.empty())
      return pod.value("status", json::object());
    if (view.sandboxReady) {
      runtime_.stopPodSandbox(view.sandboxId);
      view.sandboxReady = false;
    }
    // Its persistent volumes are let go, as the kubelet unmounts a finished pod's volumes.
    if (Status r = volumes_.releasePod(uid); !r.ok()) {
      LOG_WARN("pod {}: releasing volumes: {}", podKey(pod), r.message());
    }
    return statusFor(pod, view);
  }

  // Admission, as the kubelet's, for a pod that has not started here yet.
  if (view.sandboxId.empty() && view.containers.empty()) {
    if (Status admit = admitSysctls(pod, options_.allowedUnsafeSysctls); !admit.ok()) {
      LOG_WARN("pod {}: rejected: {}", podKey(pod), admit.message());
      event(pod, nullptr, "Warning", "SysctlForbidden", admit.message());
      return json{{"phase", "Failed"},
                  {"reason", "SysctlForbidden"},
                  {"message", "Pod was rejected: " + admit.message()},
                  {"qosClass", qosClass(pod)}};
    }
  }

  auto volumes = volumes_.setUpPod(pod);
  if (!volumes.ok()) {
    LOG_WARN("pod {}: volumes: {}", podKey(pod), volumes.status().message());
    event(pod, nullptr, "Warning", "FailedMount", volumes.status().message());
    return statusFor(pod, view);  // containers stay ContainerCreating until volumes work
  }

  if (!view.sandboxReady) {
    // Would the containers run again? A pod whose containers all finished for good keeps
    // its stopped sandbox.
    bool anyInstance = false;
    for (const auto& [n, cv] : view.containers) anyInstance |= !cv.instances.empty();
    if (!view.sandboxId.empty() && anyInstance && policy == "Never") return statusFor(pod, view);
    uint32_t attempt = view.sandboxId.empty() ? 0 : view.sandboxAttempt + 1;
    if (!view.sandboxId.empty()) {
      // The old sandbox died (node reboot, runtime crash): everything starts over.
      event(pod, nullptr, "Normal", "SandboxChanged",
            "Pod sandbox changed, it will be killed and re-created.");
      for (const auto& [n, cv] : view.containers)
        for (const auto& inst : cv.instances) {
          runtime_.stopContainer(inst.id(), 0);
          runtime_.removeContainer(inst.id());
          forgetContainer(inst.id());
        }
      runtime_.stopPodSandbox(view.sandboxId);
      runtime_.removePodSandbox(view.sandboxId);
    }
    auto id = runtime_.runPodSandbox(sandboxConfig(pod, attempt));
    if (!id.ok()) {
      LOG_WARN("pod {}: RunPodSandbox: {}", podKey(pod), id.status().message());
      event(pod, nullptr, "Warning", "FailedCreatePodSandBox",
            "Failed to create pod sandbox: " + id.status().message());
      view.containers.clear();
      return statusFor(pod, view);
    }
    LOG_INFO("pod {}: sandbox {} created", podKey(pod), *id);
    // RunPodSandbox returns once the sandbox is ready; it has no containers yet (those of the
    // old one were removed above), so the view needs only its IPs, not a new listing.
    view = PodRuntimeView{};
    view.sandboxId = *id;
    view.sandboxReady = true;
    view.sandboxAttempt = attempt;
    view.podIPs = sandboxIPs(*id);
  }

  bool changed = false;
  // Init containers, one at a time, in order.
  bool initDone = true;
  for (const auto& c : initContainers(pod)) {
    ContainerView& cv = view.containers[c.value("name", "")];
    if (cv.instances.empty()) {
      changed |= startContainer(pod, c, 0, true, view, cv, *volumes);
      initDone = false;
      break;
    }
    const auto& latest = cv.instances[0];
    if (latest.state() == v1::CONTAINER_EXITED && latest.exit_code() == 0) continue;
    initDone = false;
    if (latest.state() == v1::CONTAINER_CREATED) {
      changed |= runtime_.startContainer(latest.id()).ok();
    } else if (latest.state() == v1::CONTAINER_EXITED && policy != "Never") {
      changed |= restartWithBackoff(pod, c, true, view, cv, *volumes);
    }
    break;
  }

  if (initDone) {
    for (const auto& c : containers(pod)) {
      ContainerView& cv = view.containers[c.value("name", "")];
      if (cv.instances.empty()) {
        changed |= startContainer(pod, c, 0, false, view, cv, *volumes);
        continue;
      }
      auto& latest = cv.instances[0];
      if (latest.state() == v1::CONTAINER_RUNNING) {
        const std::string podIP = view.podIPs.empty() ? options_.hostIP : view.podIPs[0];
        for (const auto& f : probes_.probeContainer(c, latest.id(), podIP))
          event(pod, &c, "Warning", "Unhealthy",
                std::string(probeTypeName(f.type)) + " probe failed: " + f.message);
        if (!probes_.needsRestart(latest.id())) continue;
        const bool startupFailed = !probes_.started(latest.id());
        LOG_INFO("pod {}: container {} failed its {} probe, restarting", podKey(pod),
                 c.value("name", ""), startupFailed ? "startup" : "liveness");
        event(pod, &c, "Normal", "Killing",
              "Container " + c.value("name", "") + " failed " +
                  (startupFailed ? "startup" : "liveness") + " probe, will be restarted");
        runtime_.stopContainer(latest.id(), terminationGracePeriod(pod));
        auto st = runtime_.containerStatus(latest.id());
        if (!st.ok()) continue;
        latest = *st;
        changed = true;
      }
      if (latest.state() == v1::CONTAINER_CREATED) {
        changed |= runtime_.startContainer(latest.id()).ok();
        continue;
      }
      if (latest.state() != v1::CONTAINER_EXITED) continue;
      bool restart = policy == "Always" || (policy == "OnFailure" && latest.exit_code() != 0);
      if (restart) changed |= restartWithBackoff(pod, c, false, view, cv, *volumes);
    }
  }

  if (changed) {
    // Carry the waiting reasons over to the fresh view of the runtime.
    auto again = observe(pod);
    if (!again.ok()) return again.status();
    for (auto& [name, cv] : again->containers) {
      auto it = view.containers.find(name);
      if (it != view.containers.end()) {
        cv.waitingReason = it->second.waitingReason;
        cv.waitingMessage = it->second.waitingMessage;
      }
    }
    for (const auto& [name, cv] : view.containers)
      if (!again->containers.count(name)) again->containers[name] = cv;
    view = std::move(*again);
  }
  removeOldInstances(pod, view);
  applyProbeResults(pod, view);  // probes may have run during this sync
  return statusFor(pod, view);
}

void PodSyncer::removeOldInstances(const json& pod, const PodRuntimeView& view) {
  std::set<std::string> specNames;
  for (const auto& c : initContainers(pod)) specNames.insert(c.value("name", ""));
  for (const auto& c : containers(pod)) specNames.insert(c.value("name", ""));
  for (const auto& [name, cv] : view.containers) {
    // Keep the current instance and the previous one (lastState, logs --previous).
    size_t keep = specNames.count(name) ? 2 : 0;
    for (size_t i = keep; i < cv.instances.size(); ++i) {
      const auto& inst = cv.instances[i];
      if (inst.state() == v1::CONTAINER_RUNNING) runtime_.stopContainer(inst.id(), 0);
      runtime_.removeContainer(inst.id());
      forgetContainer(inst.id());
    }
  }
}

Status PodSyncer::killPod(const std::string& uid, int64_t gracePeriodSeconds, const json* pod) {
  v1::ContainerFilter cf;
  (*cf.mutable_label_selector())[kPodUidLabel] = uid;
  auto ctrs = runtime_.listContainers(cf);
  if (!ctrs.ok()) return ctrs.status();
  // All containers get SIGTERM at once and share the grace period, as in Kubernetes.
  std::vector<std::future<Status>> stops;
  for (const auto& c : *ctrs) {
    if (c.state() != v1::CONTAINER_RUNNING && c.state() != v1::CONTAINER_CREATED) continue;
    if (pod) {
      auto name = c.labels().find(kContainerNameLabel);
      if (name != c.labels().end()) {
        json ref = {{"name", name->second}};
        event(*pod, &ref, "Normal", "Killing", "Stopping container " + name->second);
      }
    }
    std::string id = c.id();
    stops.push_back(std::async(std::launch::async, [this, id, gracePeriodSeconds] {
      return runtime_.stopContainer(id, gracePeriodSeconds);
    }));
  }
  Status result;
  for (auto& f : stops) {
    Status s = f.get();
    if (!s.ok() && s.code() != 404) result = s;
  }
  for (const auto& c : *ctrs) {
    Status s = runtime_.removeContainer(c.id());
    if (!s.ok() && s.code() != 404) result = s;
    forgetContainer(c.id());
  }
  v1::PodSandboxFilter sf;
  (*sf.mutable_label_selector())[kPodUidLabel] = uid;
  auto sandboxes = runtime_.listPodSandbox(sf);
  if (!sandboxes.ok()) return sandboxes.status();
  for (const auto& s : *sandboxes) {
    Status st = runtime_.stopPodSandbox(s.id());
    if (st.ok() || st.code() == 404) st = runtime_.removePodSandbox(s.id());
    if (!st.ok() && st.code() != 404) result = st;
    std::lock_guard lock(mu_);
    sandboxIPs_.erase(s.id());
  }
  removeCgroups(uid);
  Status v = volumes_.tearDownPod(uid);
  if (!v.ok()) result = v;
  if (result.ok()) LOG_INFO("pod {}: killed and removed", uid);
  return result;
}

void PodSyncer::removeCgroups(const std::string& uid) {
  // containerd leaves the pod-level cgroup directories behind (cgroup v1: one per hierarchy),
  // and may still be removing the containers' ones. rmdir only: a cgroup with tasks stays.
  std::error_code ec;
  for (const auto& hierarchy : std::filesystem::directory_iterator("/sys/fs/cgroup", ec)) {
    std::string dir = hierarchy.path().string() + options_.cgroupRoot + "/pod" + uid;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    for (const auto& child : std::filesystem::directory_iterator(dir, ec))
      if (child.is_directory(ec)) ::rmdir(child.path().c_str());
    ::rmdir(dir.c_str());
  }
}

std::set<std::string> PodSyncer::cgroupPodUids() {
  std::set<std::string> uids;
  std::error_code ec;
  for (const auto& hierarchy : std::filesystem::directory_iterator("/sys/fs/cgroup", ec)) {
    std::string root = hierarchy.path().string() + options_.cgroupRoot;
    if (!std::filesystem::is_directory(root, ec)) continue;
    for (const auto& d : std::filesystem::directory_iterator(root, ec)) {
      std::string name = d.path().filename().string();
      if (d.is_directory(ec) && name.rfind("pod", 0) == 0) uids.insert(name.substr(3));
    }
  }
  return uids;
}

Result<std::set<std::string>> PodSyncer::runtimePodUids() {
  std::set<std::string> uids;
  auto sandboxes = runtime_.listPodSandbox();
  if (!sandboxes.ok()) return sandboxes.status();
  for (const auto& s : *sandboxes) {
    auto it = s.labels().find(kPodUidLabel);
    if (it != s.labels().end()) uids.insert(it->second);
  }
  auto ctrs = runtime_.listContainers();
  if (!ctrs.ok()) return ctrs.status();
  for (const auto& c : *ctrs) {
    auto it = c.labels().find(kPodUidLabel);
    if (it != c.labels().end()) uids.insert(it->second);
  }
  return uids;
}

}  // namespace minik8s::kubelet
