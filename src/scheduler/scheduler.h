// Scheduler: kube-scheduler for minik8s. Watches pods and nodes through the API (informers),
// queues pending pods that name this scheduler (spec.schedulerName "default-scheduler" or empty)
// and have no spec.nodeName, picks a node with the framework (filters, scores, policy) and binds
// through POST pods/{name}/binding.
//
// A pod that fits nowhere gets the condition PodScheduled=False, reason Unschedulable, with
// Kubernetes' message, and a Warning Event FailedScheduling; it is retried when nodes or pods
// change. A successful binding records a Normal Event Scheduled. Runs in-process (minik8s server,
// reading the server's SharedInformers) or alone (minik8s scheduler, with informers of its own).
// start()/stop() may be called from any thread, once each; after stop() none of its informer
// handlers runs again.
//
// Metrics (metrics::defaultRegistry(), kube-scheduler's names, profile = the scheduler's name):
// scheduler_schedule_attempts_total{result,profile} (scheduled, unschedulable, error),
// scheduler_scheduling_attempt_duration_seconds{result,profile} (from the attempt to the end of
// its binding), scheduler_pending_pods{queue} (active, backoff, unschedulable; read at scrape).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "common/metrics.h"
#include "scheduler/framework.h"
#include "scheduler/scheduler_cache.h"
#include "scheduler/scheduling_queue.h"

namespace minik8s::scheduler {

inline constexpr const char* kDefaultSchedulerName = "default-scheduler";

struct SchedulerOptions {
  Policy policy = Policy::kDefault;
  std::string schedulerName = kDefaultSchedulerName;
  int bindWorkers = 4;  // parallel bindings and status/event writes
  QueueOptions queue;
  uint64_t seed = std::random_device{}();
};

struct SchedulerStats {
  uint64_t attempts = 0;
  uint64_t bound = 0;
  uint64_t unschedulable = 0;
  uint64_t bindErrors = 0;
};

class Scheduler {
 public:
  // With `informers` (which must outlive it) it reads those shared caches; without, it lists and
  // watches through `client` itself. It writes (bindings, status, events) through `client`.
  Scheduler(client::RestClient& client, SchedulerOptions options = {},
            client::SharedInformers* informers = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  void start();
  void stop();
  // Whether the pod and node informers have listed once.
  bool waitForSync(std::chrono::milliseconds timeout);
  SchedulerStats stats() const;

  // Whether this scheduler should place `pod`: its scheduler, no node, not terminating or done.
  static bool isPending(const json& pod, const std::string& schedulerName);

 private:
  // The informer's shared object for `pod` as a handler sees it (a copy if it is not that).
  client::SharedObject sharedPod(const std::string& key, const json& pod) const;
  void onPodAdd(const json& pod);
  void onPodUpdate(const json& oldPod, const json& newPod);
  void onPodDelete(const json& pod);
  void scheduleLoop();
  void scheduleOne(const std::string& key, int64_t cycle);
  void bind(const json& pod, const std::string& nodeName,
            std::chrono::steady_clock::time_point attemptStart);
  // Before the pod is bound: its unbound WaitForFirstConsumer claims get a free volume that fits
  // on the node (the volume's claimRef, which the PV controller completes) or the node in
  // volume.kubernetes.io/selected-node (their provisioner creates a volume).
  Status bindPodVolumes(const json& pod, const std::string& nodeName);
  // Counts one attempt (result "scheduled", "unschedulable" or "error") and its duration.
  void recordAttempt(std::string_view result, std::chrono::steady_clock::time_point start);
  void markUnschedulable(const json& pod, const std::string& message);
  void runAsync(std::function<void()> task);
  void workerLoop();

  client::RestClient& client_;
  SchedulerOptions options_;
  std::unique_ptr<Framework> framework_;
  SchedulerCache cache_;
  SchedulingQueue queue_;
  client::ApiEventRecorder events_;
  std::unique_ptr<client::SharedInformers> ownInformers_;  // alone: informers of its own
  std::unique_ptr<client::Informer> pods_, nodes_;
  // VolumeBinding's view of storage.
  std::unique_ptr<client::Informer> claims_, volumes_, classes_, csiNodes_;

  std::mutex tasksMu_;
  std::condition_variable tasksCv_;
  std::deque<std::function<void()>> tasks_;
  bool tasksClosed_ = false;
  std::vector<std::thread> workers_;
  std::thread loop_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;

  std::atomic<uint64_t> attempts_{0}, bound_{0}, unschedulable_{0}, bindErrors_{0};
  // After queue_: unregistered before the queue it reads is destroyed.
  metrics::CallbackHandle pendingPodsMetric_;
};

}  // namespace minik8s::scheduler
