// JobController: runs batch/v1 Jobs to completion, as kube-controller-manager's job controller.
//
// sync(key) is level-triggered and idempotent. Every pod it creates carries the job-tracking
// finalizer; a finished pod is first recorded in status.uncountedTerminatedPods (and, for
// Indexed Jobs, status.completedIndexes), then its finalizer is removed, then it moves into
// status.succeeded / status.failed. Each step is a write the next sync can resume from, so a
// controller restart between any two never counts a pod twice nor misses one.
//
// Covered: completions and parallelism, NonIndexed and Indexed (JOB_COMPLETION_INDEX env,
// annotation and label, hostname NAME-INDEX), backoffLimit with exponential back-off of new pods
// after failures (restarts count too under restartPolicy OnFailure), activeDeadlineSeconds,
// podFailurePolicy (FailJob / Ignore / Count), suspend and resume, podReplacementPolicy, the
// conditions SuccessCriteriaMet / FailureTarget first and Complete / Failed once no pod runs,
// Events (SuccessfulCreate, SuccessfulDelete, Completed, BackoffLimitExceeded, DeadlineExceeded,
// PodFailurePolicy, Suspended, Resumed). Pods are owned by controllerRef; orphans matching the
// selector are not adopted (the generated selector only matches the Job's own pods).
// Thread-safe: sync runs on several workers, one key at a time.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "controllers/replicaset/expectations.h"

namespace minik8s::controllers {

struct JobControllerOptions {
  int workers = 2;
  int burst = 500;  // most pod creates or deletes in one sync
  // The back-off of new pods after failures: base doubling up to max (Kubernetes: 10 s, 6 min).
  std::chrono::milliseconds backoffBase = std::chrono::seconds(10);
  std::chrono::milliseconds backoffMax = std::chrono::minutes(6);
  const client::Clock* clock = &client::RealClock::instance();  // expectations, queue delays
  NowFn now = [] { return WallClock::now(); };                  // startTime, deadlines
  client::EventRecorder* events = nullptr;                      // source job-controller
};

class JobController {
 public:
  // Registers handlers on the informers: construct before they start. The pod informer must
  // carry the "namespace" index (addNamespaceIndex).
  JobController(client::RestClient& rest, client::Informer& jobs, client::Informer& pods,
                JobControllerOptions options = {});
  ~JobController();

  void start();
  void stop();

  // Converges one Job ("namespace/name").
  Status sync(const std::string& key);

 private:
  // uids whose tracking finalizer was removed while the cache may still show it.
  struct RemovedFinalizers;
  // Remembers the resourceVersion of this controller's last status write per Job; a cached Job
  // older than that is stale (its counts miss pods whose finalizers are gone) and is not acted on.
  struct WrittenVersions;
  void noteWritten(const std::string& key, const json& job);

  void enqueuePodOwner(const json& pod);
  Status syncJob(json job, const std::string& key);
  Status releaseOrphans(const std::string& ns, const std::string& name);
  Status removeTrackingFinalizer(const json& pod);
  Status createPods(const json& job, const std::string& key, const std::vector<int64_t>& indexes,
                    int64_t count);
  Status deletePods(const json& job, const std::string& key, std::vector<json> pods, size_t n);
  void recordEvent(const json& job, const std::string& type, const std::string& reason,
                   const std::string& message);

  client::RestClient& rest_;
  client::Informer& jobs_;
  client::Informer& pods_;
  JobControllerOptions options_;
  client::WorkQueue queue_;
  ControllerExpectations expectations_;
  std::unique_ptr<RemovedFinalizers> removed_;
  std::unique_ptr<WrittenVersions> written_;
  WorkerPool workers_;
};

// TtlAfterFinishedController: deletes a finished Job (with its pods, foreground) once
// spec.ttlSecondsAfterFinished have passed since it finished, checking the live object first
// so a TTL changed meanwhile is honoured. Thread-safe.
struct TtlAfterFinishedOptions {
  int workers = 1;
  const client::Clock* clock = &client::RealClock::instance();
  NowFn now = [] { return WallClock::now(); };
};

class TtlAfterFinishedController {
 public:
  TtlAfterFinishedController(client::RestClient& rest, client::Informer& jobs,
                             TtlAfterFinishedOptions options = {});
  ~TtlAfterFinishedController();
  void start();
  void stop();
  Status sync(const std::string& key);

 private:
  // How long until `job` expires (<= 0: now), or nullopt when it never does.
  std::optional<std::chrono::milliseconds> timeLeft(const json& job) const;

  client::RestClient& rest_;
  client::Informer& jobs_;
  TtlAfterFinishedOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
