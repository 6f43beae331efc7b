// HorizontalPodAutoscalerController: sets the replicas of a Deployment or ReplicaSet (through its
// scale subresource) from the cpu and memory usage of its pods, as Kubernetes' horizontal
// controller does.
//
// Every sync period (15 s by default), and at once when an HPA is created or its spec changes,
// sync(key) reads the target's Scale, the pods its selector matches (pod informer) and their
// usage (MetricsSource), computes a proposal per metric (replica_calculator.h) and takes the
// largest, normalizes it (scaling_behavior.h: stabilization windows, behavior policies,
// min/maxReplicas), updates the Scale when it changed with a SuccessfulRescale Event ("New size:
// 4; reason: cpu resource utilization (percentage of request) above target"), and writes status
// (currentReplicas, desiredReplicas, currentMetrics, lastScaleTime, conditions AbleToScale,
// ScalingActive, ScalingLimited). Metric and scale failures are reported in conditions and Warning
// Events and retried at the next period. Thread-safe: one sync per HPA at a time.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"
#include "controllers/hpa/metrics_source.h"
#include "controllers/hpa/replica_calculator.h"
#include "controllers/hpa/scaling_behavior.h"

namespace minik8s::controllers::hpa {

struct HpaControllerOptions {
  std::chrono::milliseconds syncPeriod{15000};
  // Kubernetes' --horizontal-pod-autoscaler-downscale-stabilization (also the default scaleDown
  // window of a spec.behavior).
  std::chrono::seconds downscaleStabilization{300};
  ReplicaCalculatorConfig calculator;
  int workers = 1;
  NowFn now = [] { return WallClock::now(); };
  // Where Events go; nullptr: an ApiEventRecorder of the controller's own.
  client::EventRecorder* events = nullptr;
};

class HorizontalPodAutoscalerController {
 public:
  // Registers handlers on the informers: construct before they start. `hpas` lists
  // autoscaling/v2 objects; the pod informer must carry the "namespace" index.
  HorizontalPodAutoscalerController(client::RestClient& rest, client::Informer& hpas,
                                    client::Informer& pods, MetricsSource& metrics,
                                    HpaControllerOptions options = {});
  ~HorizontalPodAutoscalerController();

  void start();  // workers and the periodic resync
  void stop();

  // Reconciles one HPA ("namespace/name"). Returns an error only when writing to the API
  // failed in a way worth retrying soon.
  Status sync(const std::string& key);

 private:
  struct MetricsResult;
  MetricsResult computeReplicasForMetrics(const json& hpa, const json& scale,
                                          int32_t currentReplicas, json& conditions,
                                          WallClock::time_point now);
  void recordEvent(const json& hpa, const std::string& type, const std::string& reason,
                   const std::string& message);
  Status writeStatus(const json& hpa, const json& status);
  std::shared_ptr<ScalingHistory> historyOf(const std::string& key);
  void resyncLoop();

  client::RestClient& rest_;
  client::Informer& hpas_;
  client::Informer& pods_;
  MetricsSource& metrics_;
  HpaControllerOptions options_;
  std::unique_ptr<client::ApiEventRecorder> ownEvents_;
  client::EventRecorder* events_ = nullptr;
  client::WorkQueue queue_;
  WorkerPool workers_;

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<ScalingHistory>> histories_;
  std::condition_variable stopCv_;
  bool stopping_ = false;
  std::thread resync_;
};

}  // namespace minik8s::controllers::hpa
