// Helpers every workload controller shares: owner references, pod readiness and availability,
// IntOrString percentages with Kubernetes' rounding, and the worker loop that drains a work
// queue into sync(key). Pure functions (except WorkerPool, which owns threads); thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/work_queue.h"
#include "common/status.h"

namespace minik8s::controllers {

using WallClock = std::chrono::system_clock;
// Where controllers read wall time (minReadySeconds, progress deadlines); tests pass a fake.
using NowFn = std::function<WallClock::time_point()>;

inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";
inline constexpr char kRevisionAnnotation[] = "deployment.kubernetes.io/revision";

// The ownerReference with controller=true, if any.
std::optional<json> controllerRef(const json& obj);
// {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true} for `owner`.
json makeControllerRef(const json& owner);
// ownerReferences of `obj` without those pointing at `uid`.
json ownerRefsWithout(const json& obj, const std::string& uid);

bool isTerminating(const json& obj);
// Whether metadata.finalizers holds `finalizer`.
bool hasFinalizer(const json& obj, const std::string& finalizer);
// Not terminal (Succeeded/Failed) and not being deleted: counts towards replicas.
bool isPodActive(const json& pod);
bool isPodReady(const json& pod);
// A Node whose Ready condition is True (same condition shape as a pod's).
bool isNodeReady(const json& node);
// Ready for at least minReadySeconds at `now`.
bool isPodAvailable(const json& pod, int64_t minReadySeconds, WallClock::time_point now);
// When a ready pod becomes available (Ready's lastTransitionTime + minReadySeconds).
std::optional<WallClock::time_point> podAvailableAt(const json& pod, int64_t minReadySeconds);

// Resolves an IntOrString such as 3 or "25%" against `total`; percentages round up or down as
// Kubernetes' GetScaledValueFromIntOrPercent does. A malformed value is BadRequest.
Result<int64_t> scaledValue(const json& intOrPercent, int64_t total, bool roundUp);

// Labels of `obj` (an object, never null).
json labelsOf(const json& obj);

// Runs `workers` threads taking keys from `queue` and calling `sync`; failures are retried with
// back-off, successes forget the key. stop() shuts the queue down and joins. The queue's
// workqueue_* metrics are recorded under `name` (the controller's name).
class WorkerPool {
 public:
  WorkerPool(client::WorkQueue& queue, std::function<Status(const std::string&)> sync,
             std::string name);
  ~WorkerPool();
  void start(int workers);
  void stop();

 private:
  client::WorkQueue& queue_;
  std::function<Status(const std::string&)> sync_;
  std::string name_;
  std::vector<std::thread> threads_;
};

}  // namespace minik8s::controllers
