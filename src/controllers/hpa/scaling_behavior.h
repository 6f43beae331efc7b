// How an HPA turns a metric proposal into the replica count it sets, as Kubernetes' horizontal
// controller does: stabilization windows over recent recommendations, then rate limits.
//
// Without spec.behavior: scale-down is stabilized over the downscale window (the maximum
// recommendation of the last 300 s by default), scale-up is limited to max(2 * current, 4), and
// the result is clamped to [minReplicas, maxReplicas].
// With spec.behavior (unset fields take Kubernetes' defaults: scaleUp window 0 s, policies 4 Pods
// and 100 Percent per 15 s, selectPolicy Max; scaleDown window = the downscale window, 100 Percent
// per 15 s, Max): the recommendation is kept between the lowest recommendation of the scaleUp
// window and the highest of the scaleDown window, then limited by the policies against the
// replicas changed within each policy's period (Max = the biggest change, Min = the smallest,
// Disabled = none).
//
// ScalingHistory is the per-HPA memory (recommendations, scale events); not thread-safe: the
// controller serializes access per HPA. Time is a parameter everywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controllers/common/controller_utils.h"

namespace minik8s::controllers::hpa {

enum class SelectPolicy { kMax, kMin, kDisabled };

struct ScalingPolicy {
  enum class Type { kPods, kPercent };
  Type type = Type::kPods;
  int32_t value = 0;
  int32_t periodSeconds = 15;
};

struct ScalingRules {
  int32_t stabilizationWindowSeconds = 0;
  SelectPolicy selectPolicy = SelectPolicy::kMax;
  std::vector<ScalingPolicy> policies;
};

struct Behavior {
  ScalingRules scaleUp, scaleDown;
};

// spec.behavior of an autoscaling/v2 HPA with the defaults filled in; nullopt when absent.
std::optional<Behavior> behaviorFromSpec(const json& spec,
                                         std::chrono::seconds downscaleStabilizationWindow);

struct TimedRecommendation {
  int32_t replicas = 0;
  WallClock::time_point at{};
};

struct ScaleEvent {
  int32_t change = 0;  // replicas added (scale-up list) or removed (scale-down list), positive
  WallClock::time_point at{};
  bool outdated = false;
};

// A decision with the condition that explains it.
struct LimitedReplicas {
  int32_t replicas = 0;
  std::string reason;   // DesiredWithinRange, ScaleUpLimit, TooManyReplicas, ...
  std::string message;  // "the desired count is within the acceptable range"
};

// What normalizeDesiredReplicas decided and the AbleToScale / ScalingLimited conditions.
struct Normalized {
  int32_t replicas = 0;
  std::string ableToScaleReason, ableToScaleMessage;  // status True
  bool scalingLimited = false;
  std::string scalingLimitedReason, scalingLimitedMessage;
};

// Most replicas the policies allow now, from `current` and the events within each period.
int32_t scaleUpLimit(int32_t current, const std::vector<ScaleEvent>& ups,
                     const std::vector<ScaleEvent>& downs, const ScalingRules& rules,
                     WallClock::time_point now);
// Fewest replicas the policies allow now.
int32_t scaleDownLimit(int32_t current, const std::vector<ScaleEvent>& ups,
                       const std::vector<ScaleEvent>& downs, const ScalingRules& rules,
                       WallClock::time_point now);

// Kubernetes' convertDesiredReplicasWithRules (no behavior).
LimitedReplicas limitWithoutBehavior(int32_t current, int32_t desired, int32_t minReplicas,
                                     int32_t maxReplicas);

class ScalingHistory {
 public:
  // The first time an HPA is seen its current size counts as a recommendation.
  void recordInitial(int32_t current, WallClock::time_point now);

  // The full normalization of a metric proposal `desired` (see the file comment).
  Normalized normalize(const std::optional<Behavior>& behavior, int32_t current, int32_t desired,
                       int32_t minReplicas, int32_t maxReplicas,
                       std::chrono::seconds downscaleStabilizationWindow,
                       WallClock::time_point now);

  // Remembers a rescale for the policies' periods (only with a behavior, as Kubernetes).
  void recordScale(const std::optional<Behavior>& behavior, int32_t from, int32_t to,
                   WallClock::time_point now);

  const std::vector<TimedRecommendation>& recommendations() const { return recommendations_; }
  const std::vector<ScaleEvent>& scaleUps() const { return scaleUps_; }
  const std::vector<ScaleEvent>& scaleDowns() const { return scaleDowns_; }

 private:
  int32_t stabilizeDownscale(int32_t desired, std::chrono::seconds window,
                             WallClock::time_point now);
  int32_t stabilizeWithBehavior(int32_t current, int32_t desired, const Behavior& behavior,
                                WallClock::time_point now);
  LimitedReplicas limitWithBehavior(int32_t current, int32_t desired, int32_t minReplicas,
                                    int32_t maxReplicas, const Behavior& behavior,
                                    WallClock::time_point now) const;
  // Overwrites an old sample (before `cutoff`) if there is one, else appends.
  void remember(int32_t desired, bool reuse, size_t index, WallClock::time_point now);

  std::vector<TimedRecommendation> recommendations_;
  std::vector<ScaleEvent> scaleUps_, scaleDowns_;
};

}  // namespace minik8s::controllers::hpa
