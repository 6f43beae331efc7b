#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include "api/object_meta.h"
#include "api/persistent_volumes.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::scheduler {

using api::nodeNameOf;

using namespace std::chrono_literals;

namespace {

bool terminated(const json& pod) {
  const std::string phase = valueAt(pod, "/status/phase", std::string());
  return phase == "Succeeded" || phase == "Failed";
}

std::string readyStatus(const json& node) {
  for (const auto& c : valueAt(node, "/status/conditions", json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "");
  }
  return "";
}

// Whether a node change can let a pod fit where it did not (heartbeats alone cannot).
// Compared in place: a copy of each side per event cost more than the comparison.
bool nodeChangeMatters(const json& oldNode, const json& newNode) {
  using api::member;
  return member(oldNode, "spec") != member(newNode, "spec") ||
         api::labelsOf(oldNode) != api::labelsOf(newNode) ||
         member(member(oldNode, "status"), "allocatable") !=
             member(member(newNode, "status"), "allocatable") ||
         readyStatus(oldNode) != readyStatus(newNode);
}

struct SchedulerMetrics {
  metrics::CounterVec& attempts;
  metrics::HistogramVec& attemptDuration;
};

SchedulerMetrics& schedulerMetrics() {
  static SchedulerMetrics m{
      metrics::defaultRegistry().counterVec(
          "scheduler_schedule_attempts_total",
          "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
          "not be scheduled, while 'error' means an internal scheduler problem.",
          {"result", "profile"}),
      metrics::defaultRegistry().histogramVec(
          "scheduler_scheduling_attempt_duration_seconds",
          "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
          {"result", "profile"}, metrics::exponentialBuckets(0.001, 2, 15)),
  };
  return m;
}

}  // namespace

Scheduler::Scheduler(client::RestClient& client, SchedulerOptions options,
                     client::SharedInformers* informers)
    : client_(client),
      options_(std::move(options)),
      framework_(Framework::withDefaultPlugins(options_.policy, options_.seed)),
      queue_(client::RealClock::instance(), options_.queue),
      events_(client, client::ApiEventRecorderOptions{.component = options_.schedulerName}) {
  if (!informers) {
    ownInformers_ = std::make_unique<client::SharedInformers>(client);
    informers = ownInformers_.get();
  }
  pods_ = informers->informer(client::resources::kPods);
  nodes_ = informers->informer(client::resources::kNodes);
  claims_ = informers->informer(client::Resource{"", "v1", "persistentvolumeclaims", true});
  volumes_ = informers->informer(client::Resource{"", "v1", "persistentvolumes", false});
  classes_ = informers->informer(client::Resource{"storage.k8s.io", "v1", "storageclasses", false});
  csiNodes_ = informers->informer(client::Resource{"storage.k8s.io", "v1", "csinodes", false});
  // A claim that binds or a volume that appears may make a waiting pod schedulable.
  auto storageChanged = [this](const json&) { queue_.moveAllToActiveOrBackoff(); };
  claims_->addHandlers({storageChanged,
                        [storageChanged](const json&, const json& c) { storageChanged(c); },
                        nullptr});
  volumes_->addHandlers({storageChanged,
                         [storageChanged](const json&, const json& v) { storageChanged(v); },
                         nullptr});
  csiNodes_->addHandlers({storageChanged,
                          [storageChanged](const json&, const json& n) { storageChanged(n); },
                          nullptr});
  pods_->addHandlers({[this](const json& p) { onPodAdd(p); },
                      [this](const json& o, const json& n) { onPodUpdate(o, n); },
                      [this](const json& p) { onPodDelete(p); }});
  nodes_->addHandlers(
      {[this](const json& n) {
         cache_.addOrUpdateNode(n);
         queue_.moveAllToActiveOrBackoff();
       },
       [this](const json& o, const json& n) {
         cache_.addOrUpdateNode(n);
         if (nodeChangeMatters(o, n)) queue_.moveAllToActiveOrBackoff();
       },
       [this](const json& n) { cache_.removeNode(valueAt(n, "/metadata/name", std::string())); }});
  schedulerMetrics();
  pendingPodsMetric_ = metrics::defaultRegistry().callback(
      "scheduler_pending_pods",
      "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
      "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
      "unschedulablePods.",
      metrics::Type::kGauge, {"queue"}, [this] {
        return std::vector<metrics::Sample>{
            {{"active"}, static_cast<double>(queue_.activeLength())},
            {{"backoff"}, static_cast<double>(queue_.backoffLength())},
            {{"unschedulable"}, static_cast<double>(queue_.unschedulableLength())},
        };
      });
}

Scheduler::~Scheduler() { stop(); }

bool Scheduler::isPending(const json& pod, const std::string& schedulerName) {
  std::string name = valueAt(pod, "/spec/schedulerName", std::string());
  if (!name.empty() && name != schedulerName) return false;
  if (!nodeNameOf(pod).empty() || terminated(pod)) return false;
  return !valueAt(pod, "/metadata/deletionTimestamp", json()).is_string();
}

void Scheduler::start() {
  if (started_) return;
  started_ = true;
  nodes_->start();
  pods_->start();
  claims_->start();
  volumes_->start();
  classes_->start();
  csiNodes_->start();
  for (int i = 0; i < std::max(1, options_.bindWorkers); ++i) {
    workers_.emplace_back([this] { workerLoop(); });
  }
  loop_ = std::thread([this] { scheduleLoop(); });
  LOG_INFO("scheduler {} started (policy {})", options_.schedulerName,
           static_cast<int>(options_.policy));
}

void Scheduler::stop() {
  if (!started_ || stopping_.exchange(true)) return;
  queue_.close();
  if (loop_.joinable()) loop_.join();
  {
    std::lock_guard l(tasksMu_);
    tasksClosed_ = true;
    tasks_.clear();  // pending writes are redone by whoever schedules next
  }
  tasksCv_.notify_all();
  for (auto& w : workers_) w.join();
  pods_->stop();
  nodes_->stop();
  claims_->stop();
  volumes_->stop();
  classes_->stop();
  csiNodes_->stop();
  if (ownInformers_) ownInformers_->stop();  // shared ones watch on for their other readers
}

bool Scheduler::waitForSync(std::chrono::milliseconds timeout) {
  return nodes_->waitForSync(timeout) && pods_->waitForSync(timeout);
}

SchedulerStats Scheduler::stats() const {
  return {attempts_.load(), bound_.load(), unschedulable_.load(), bindErrors_.load()};
}

client::SharedObject Scheduler::sharedPod(const std::string& key, const json& pod) const {
  // During a handler the informer holds exactly the object it hands out (it dispatches under the
  // lock its next change waits for); anything else gets a copy.
  client::SharedObject shared = pods_->getShared(key);
  if (shared.get() == &pod) return shared;
  return std::make_shared<const json>(pod);
}

void Scheduler::onPodAdd(const json& pod) {
  const std::string key = client::objectKey(pod);
  if (!nodeNameOf(pod).empty()) {
    cache_.addOrUpdatePod(sharedPod(key, pod));
    queue_.remove(key);
    queue_.moveAllToActiveOrBackoff();  // its labels may satisfy a pending pod's affinity
    return;
  }
  if (isPending(pod, options_.schedulerName)) queue_.add(key);
}

void Scheduler::onPodUpdate(const json& oldPod, const json& newPod) {
  const std::string key = client::objectKey(newPod);
  if (!nodeNameOf(newPod).empty()) {
    bool wasPlaced = !nodeNameOf(oldPod).empty() && !terminated(oldPod);
    cache_.addOrUpdatePod(sharedPod(key, newPod));
    queue_.remove(key);
    // Bound (affinity may now hold) or finished (its resources are free).
    if (!wasPlaced || terminated(newPod)) queue_.moveAllToActiveOrBackoff();
    return;
  }
  if (!isPending(newPod, options_.schedulerName)) {
    queue_.remove(key);
    return;
  }
  // Status writes (our own Unschedulable condition) do not make a pod fit anywhere new. Compared
  // in place: copying both specs was 1.2% of the server's CPU under apiserver_api_bench.
  if (api::member(oldPod, "spec") != api::member(newPod, "spec") ||
      api::labelsOf(oldPod) != api::labelsOf(newPod)) {
    queue_.add(key);
  }
}

void Scheduler::onPodDelete(const json& pod) {
  const std::string key = client::objectKey(pod);
  queue_.remove(key);
  cache_.removePod(key);
  if (!nodeNameOf(pod).empty()) queue_.moveAllToActiveOrBackoff();
}

void Scheduler::scheduleLoop() {
  while (!stopping_ && !waitForSync(200ms)) {
  }
  while (!stopping_) {
    auto key = queue_.pop(200ms);
    if (!key) continue;
    scheduleOne(*key, queue_.schedulingCycle());
  }
}

void Scheduler::scheduleOne(const std::string& key, int64_t cycle) {
  // The informer's object: the writes queued below hold it, not a copy of their own (a backlog of
  // unschedulable pods' status writes held one copy of each).
  client::SharedObject podObject = pods_->getShared(key);
  if (!podObject || !isPending(*podObject, options_.schedulerName) || cache_.isAssumed(key)) return;
  ++attempts_;
  const auto attemptStart = std::chrono::steady_clock::now();
  PodInfo info = makePodInfo(podObject);  // shares the informer's object: nobody changes it
  ScheduleResult result = cache_.withView([&](const ClusterView& nodes) {
    ClusterView view = nodes;
    view.claim = [this](const std::string& k) { return claims_->get(k); };
    view.volume = [this](const std::string& name) { return volumes_->get(name); };
    view.volumes = [this] { return volumes_->list(); };
    view.storageClass = [this](const std::string& name) { return classes_->get(name); };
    view.csiNode = [this](const std::string& name) { return csiNodes_->get(name); };
    view.csiNodes = [this] { return csiNodes_->list(); };
    return framework_->schedule(info, view);
  });
  if (result.nodeName.empty()) {
    ++unschedulable_;
    recordAttempt("unschedulable", attemptStart);
    LOG_DEBUG("pod {} is unschedulable: {}", key, result.message);
    queue_.addUnschedulable(key, cycle);
    runAsync([this, p = std::move(podObject), message = result.message] {
      markUnschedulable(*p, message);
    });
    return;
  }
  cache_.assumePod(std::move(info), result.nodeName);
  runAsync([this, p = std::move(podObject), node = result.nodeName, attemptStart] {
    bind(*p, node, attemptStart);
  });
}

void Scheduler::recordAttempt(std::string_view result,
                              std::chrono::steady_clock::time_point start) {
  SchedulerMetrics& m = schedulerMetrics();
  const std::string& profile = options_.schedulerName;
  m.attempts.with({result, profile}).inc();
  m.attemptDuration.with({result, profile})
      .observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void Scheduler::bind(const json& pod, const std::string& nodeName,
                     std::chrono::steady_clock::time_point attemptStart) {
  const std::string ns = valueAt(pod, "/metadata/namespace", std::string());
  const std::string name = valueAt(pod, "/metadata/name", std::string());
  const std::string key = client::objectKey(pod);
  if (Status v = bindPodVolumes(pod, nodeName); !v.ok()) {
    ++bindErrors_;
    recordAttempt("error", attemptStart);
    cache_.forgetPod(key);
    LOG_WARN("binding the volumes of pod {} on {} failed: {}", key, nodeName, v.toString());
    queue_.addBackoff(key);
    return;
  }
  json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"uid", valueAt(pod, "/metadata/uid", std::string())}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", nodeName}}}};
  auto res = client_.createSubresource(client::resources::kPods, ns, name, "binding", binding);
  if (res.ok()) {
    ++bound_;
    recordAttempt("scheduled", attemptStart);
    events_.record(pod, "Normal", "Scheduled",
                   fmt::format("Successfully assigned {}/{} to {}", ns, name, nodeName));
    return;
  }
  ++bindErrors_;
  recordAttempt("error", attemptStart);
  cache_.forgetPod(key);
  const Status& s = res.status();
  LOG_WARN("binding pod {} to {} failed: {}", key, nodeName, s.toString());
  if (s.code() == 404 || s.code() == 409) {
    queue_.remove(key);  // gone, already bound or being deleted: the informer tells the rest
  } else {
    queue_.addBackoff(key);
  }
}

Status Scheduler::bindPodVolumes(const json& pod, const std::string& nodeName) {
  const client::Resource pvcs{"", "v1", "persistentvolumeclaims", true};
  const client::Resource pvs{"", "v1", "persistentvolumes", false};
  const std::string ns = valueAt(pod, "/metadata/namespace", std::string());
  for (const auto& claimName : api::podClaimNames(pod)) {
    auto claim = claims_->get(ns + "/" + claimName);
    if (!claim || !valueAt(*claim, "/spec/volumeName", std::string()).empty()) continue;
    auto cls = classes_->get(api::claimClassOf(*claim));
    if (!cls || cls->value("volumeBindingMode", std::string()) != "WaitForFirstConsumer") continue;
    auto node = nodes_->get(nodeName);
    if (!node) return Status::NotFoundMessage("node " + nodeName + " is gone");
    if (auto volume = api::findMatchingVolume(*claim, volumes_->list(), &*node)) {
      if (api::volumeBoundToClaim(*volume, *claim) &&
          !valueAt(*volume, "/spec/claimRef/uid", std::string()).empty()) {
        continue;  // pre-bound already
      }
      json updated = *volume;
      updated["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"},
                                     {"apiVersion", "v1"},
                                     {"namespace", ns},
                                     {"name", claimName},
                                     {"uid", valueAt(*claim, "/metadata/uid", std::string())}};
      updated["metadata"]["annotations"][api::kAnnBoundByController] = "yes";
      auto r = client_.update(pvs, updated);
      if (!r.ok()) return r.status();
      continue;
    }
    if (api::annotationValue(*claim, api::kAnnSelectedNode) == nodeName) continue;
    json patch = {{"metadata", {{"annotations", {{api::kAnnSelectedNode, nodeName}}}}}};
    auto r = client_.patch(pvcs, ns, claimName, patch, "merge");
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

void Scheduler::markUnschedulable(const json& pod, const std::string& message) {
  const std::string ns = valueAt(pod, "/metadata/namespace", std::string());
  const std::string name = valueAt(pod, "/metadata/name", std::string());
  std::string transition = formatRfc3339(minik8s::Clock::now());
  bool same = false;
  for (const auto& c : valueAt(pod, "/status/conditions", json::array())) {
    if (c.value("type", "") != "PodScheduled" || c.value("status", "") != "False") continue;
    transition = c.value("lastTransitionTime", transition);  // status unchanged: keep its time
    same = c.value("reason", "") == "Unschedulable" && c.value("message", "") == message;
  }
  if (!same) {
    json condition = {{"type", "PodScheduled"},    {"status", "False"},
                      {"reason", "Unschedulable"}, {"message", message},
                      {"lastProbeTime", nullptr},  {"lastTransitionTime", transition}};
    auto res = client_.patch(client::resources::kPods, ns, name,
                             {{"status", {{"conditions", json::array({condition})}}}}, "strategic",
                             "status");
    if (!res.ok() && res.status().code() != 404) {
      LOG_WARN("cannot set PodScheduled=False on {}/{}: {}", ns, name, res.status().message());
    }
  }
  events_.record(pod, "Warning", "FailedScheduling", message);
}

void Scheduler::runAsync(std::function<void()> task) {
  {
    std::lock_guard l(tasksMu_);
    if (tasksClosed_) return;
    tasks_.push_back(std::move(task));
  }
  tasksCv_.notify_one();
}

void Scheduler::workerLoop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock l(tasksMu_);
      tasksCv_.wait(l, [this] { return tasksClosed_ || !tasks_.empty(); });
      if (tasksClosed_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace minik8s::scheduler
