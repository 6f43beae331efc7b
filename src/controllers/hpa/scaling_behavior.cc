#include "controllers/hpa/scaling_behavior.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace minik8s::controllers::hpa {

namespace {

ScalingRules defaultScaleUp() {
  return {0,
          SelectPolicy::kMax,
          {{ScalingPolicy::Type::kPods, 4, 15}, {ScalingPolicy::Type::kPercent, 100, 15}}};
}

ScalingRules defaultScaleDown(std::chrono::seconds window) {
  return {static_cast<int32_t>(window.count()),
          SelectPolicy::kMax,
          {{ScalingPolicy::Type::kPercent, 100, 15}}};
}

// Unset members of `rules` keep the defaults, as Kubernetes' copyHPAScalingRules.
ScalingRules rulesFrom(const json& rules, ScalingRules out) {
  if (!rules.is_object()) return out;
  if (rules.contains("selectPolicy") && rules["selectPolicy"].is_string()) {
    const std::string p = rules["selectPolicy"];
    out.selectPolicy = p == "Min"        ? SelectPolicy::kMin
                       : p == "Disabled" ? SelectPolicy::kDisabled
                                         : SelectPolicy::kMax;
  }
  if (rules.contains("stabilizationWindowSeconds") &&
      rules["stabilizationWindowSeconds"].is_number_integer()) {
    out.stabilizationWindowSeconds = rules["stabilizationWindowSeconds"].get<int32_t>();
  }
  if (rules.contains("policies") && rules["policies"].is_array()) {
    out.policies.clear();
    for (const auto& p : rules["policies"]) {
      if (!p.is_object()) continue;
      ScalingPolicy policy;
      policy.type = p.value("type", "") == "Percent" ? ScalingPolicy::Type::kPercent
                                                     : ScalingPolicy::Type::kPods;
      policy.value = p.value("value", 0);
      policy.periodSeconds = p.value("periodSeconds", 15);
      out.policies.push_back(policy);
    }
  }
  return out;
}

int32_t changeWithinPeriod(int32_t periodSeconds, const std::vector<ScaleEvent>& events,
                           WallClock::time_point now) {
  auto cutoff = now - std::chrono::seconds(periodSeconds);
  int32_t sum = 0;
  for (const auto& e : events) {
    if (e.at > cutoff) sum += e.change;
  }
  return sum;
}

int32_t longestPeriod(const ScalingRules& rules) {
  int32_t longest = 0;
  for (const auto& p : rules.policies) longest = std::max(longest, p.periodSeconds);
  return longest;
}

void addEvent(std::vector<ScaleEvent>& events, int32_t change, int32_t periodSeconds,
              WallClock::time_point now) {
  auto cutoff = now - std::chrono::seconds(periodSeconds);
  for (auto& e : events) {
    if (e.at < cutoff) e.outdated = true;
  }
  for (auto& e : events) {
    if (e.outdated) {
      e = {change, now, false};
      return;
    }
  }
  events.push_back({change, now, false});
}

}  // namespace

std::optional<Behavior> behaviorFromSpec(const json& spec,
                                         std::chrono::seconds downscaleStabilizationWindow) {
  if (!spec.is_object() || !spec.contains("behavior") || !spec["behavior"].is_object()) {
    return std::nullopt;
  }
  const json& b = spec["behavior"];
  Behavior out;
  out.scaleUp = rulesFrom(b.value("scaleUp", json()), defaultScaleUp());
  out.scaleDown =
      rulesFrom(b.value("scaleDown", json()), defaultScaleDown(downscaleStabilizationWindow));
  return out;
}

int32_t scaleUpLimit(int32_t current, const std::vector<ScaleEvent>& ups,
                     const std::vector<ScaleEvent>& downs, const ScalingRules& rules,
                     WallClock::time_point now) {
  if (rules.selectPolicy == SelectPolicy::kDisabled) return current;
  bool pickMin = rules.selectPolicy == SelectPolicy::kMin;
  int32_t result = pickMin ? INT32_MAX : INT32_MIN;
  for (const auto& p : rules.policies) {
    int32_t periodStart = current - changeWithinPeriod(p.periodSeconds, ups, now) +
                          changeWithinPeriod(p.periodSeconds, downs, now);
    int32_t proposed =
        p.type == ScalingPolicy::Type::kPods
            ? periodStart + p.value
            // Rounded up so that a small percentage still lets the target grow.
            : static_cast<int32_t>(std::ceil(static_cast<double>(periodStart) *
                                             (1.0 + static_cast<double>(p.value) / 100.0)));
    result = pickMin ? std::min(result, proposed) : std::max(result, proposed);
  }
  return result;
}

int32_t scaleDownLimit(int32_t current, const std::vector<ScaleEvent>& ups,
                       const std::vector<ScaleEvent>& downs, const ScalingRules& rules,
                       WallClock::time_point now) {
  if (rules.selectPolicy == SelectPolicy::kDisabled) return current;
  bool pickMin = rules.selectPolicy == SelectPolicy::kMin;  // the smallest change: the max count
  int32_t result = pickMin ? INT32_MIN : INT32_MAX;
  for (const auto& p : rules.policies) {
    int32_t periodStart = current - changeWithinPeriod(p.periodSeconds, ups, now) +
                          changeWithinPeriod(p.periodSeconds, downs, now);
    int32_t proposed = p.type == ScalingPolicy::Type::kPods
                           ? periodStart - p.value
                           : static_cast<int32_t>(static_cast<double>(periodStart) *
                                                  (1.0 - static_cast<double>(p.value) / 100.0));
    result = pickMin ? std::max(result, proposed) : std::min(result, proposed);
  }
  return result;
}

LimitedReplicas limitWithoutBehavior(int32_t current, int32_t desired, int32_t minReplicas,
                                     int32_t maxReplicas) {
  int32_t upLimit = std::max(2 * current, 4);
  int32_t maximum = maxReplicas;
  std::string reason = "TooManyReplicas";
  std::string message = "the desired replica count is more than the maximum replica count";
  if (maxReplicas > upLimit) {
    maximum = upLimit;
    reason = "ScaleUpLimit";
    message = "the desired replica count is increasing faster than the maximum scale rate";
  }
  if (desired < minReplicas) {
    return {minReplicas, "TooFewReplicas",
            "the desired replica count is less than the minimum replica count"};
  }
  if (desired > maximum) return {maximum, reason, message};
  return {desired, "DesiredWithinRange", "the desired count is within the acceptable range"};
}

void ScalingHistory::recordInitial(int32_t current, WallClock::time_point now) {
  if (recommendations_.empty()) recommendations_.push_back({current, now});
}

void ScalingHistory::remember(int32_t desired, bool reuse, size_t index,
                              WallClock::time_point now) {
  if (reuse) {
    recommendations_[index] = {desired, now};
  } else {
    recommendations_.push_back({desired, now});
  }
}

int32_t ScalingHistory::stabilizeDownscale(int32_t desired, std::chrono::seconds window,
                                           WallClock::time_point now) {
  int32_t highest = desired;
  auto cutoff = now - window;
  bool foundOld = false;
  size_t oldIndex = 0;
  for (size_t i = 0; i < recommendations_.size(); ++i) {
    const auto& r = recommendations_[i];
    if (r.at < cutoff) {
      foundOld = true;
      oldIndex = i;
    } else {
      highest = std::max(highest, r.replicas);
    }
  }
  remember(desired, foundOld, oldIndex, now);
  return highest;
}

int32_t ScalingHistory::stabilizeWithBehavior(int32_t current, int32_t desired,
                                              const Behavior& behavior, WallClock::time_point now) {
  auto upCutoff = now - std::chrono::seconds(behavior.scaleUp.stabilizationWindowSeconds);
  auto downCutoff = now - std::chrono::seconds(behavior.scaleDown.stabilizationWindowSeconds);
  int32_t upRecommendation = desired, downRecommendation = desired;
  bool foundOld = false;
  size_t oldIndex = 0;
  for (size_t i = 0; i < recommendations_.size(); ++i) {
    const auto& r = recommendations_[i];
    if (r.at > upCutoff) upRecommendation = std::min(upRecommendation, r.replicas);
    if (r.at > downCutoff) downRecommendation = std::max(downRecommendation, r.replicas);
    if (r.at < upCutoff && r.at < downCutoff) {
      foundOld = true;
      oldIndex = i;
    }
  }
  int32_t recommendation = std::max(current, upRecommendation);
  recommendation = std::min(recommendation, downRecommendation);
  remember(desired, foundOld, oldIndex, now);
  return recommendation;
}

LimitedReplicas ScalingHistory::limitWithBehavior(int32_t current, int32_t desired,
                                                  int32_t minReplicas, int32_t maxReplicas,
                                                  const Behavior& behavior,
                                                  WallClock::time_point now) const {
  if (desired > current) {
    int32_t limit =
        std::max(current, scaleUpLimit(current, scaleUps_, scaleDowns_, behavior.scaleUp, now));
    int32_t maximum = maxReplicas;
    std::string reason = "TooManyReplicas";
    std::string message = "the desired replica count is more than the maximum replica count";
    if (maximum > limit) {
      maximum = limit;
      reason = "ScaleUpLimit";
      message = "the desired replica count is increasing faster than the maximum scale rate";
    }
    if (desired > maximum) return {maximum, reason, message};
  } else if (desired < current) {
    int32_t limit =
        std::min(current, scaleDownLimit(current, scaleUps_, scaleDowns_, behavior.scaleDown, now));
    int32_t minimum = minReplicas;
    std::string reason = "TooFewReplicas";
    std::string message = "the desired replica count is less than the minimum replica count";
    if (minimum < limit) {
      minimum = limit;
      reason = "ScaleDownLimit";
      message = "the desired replica count is decreasing faster than the maximum scale rate";
    }
    if (desired < minimum) return {minimum, reason, message};
  }
  return {desired, "DesiredWithinRange", "the desired count is within the acceptable range"};
}

Normalized ScalingHistory::normalize(const std::optional<Behavior>& behavior, int32_t current,
                                     int32_t desired, int32_t minReplicas, int32_t maxReplicas,
                                     std::chrono::seconds downscaleStabilizationWindow,
                                     WallClock::time_point now) {
  Normalized out;
  int32_t stabilized = 0;
  std::string stabilizedReason, stabilizedMessage;
  if (behavior) {
    stabilized = stabilizeWithBehavior(current, desired, *behavior, now);
    if (desired >= current) {
      stabilizedReason = "ScaleUpStabilized";
      stabilizedMessage =
          "recent recommendations were lower than current one, applying the lowest recent "
          "recommendation";
    } else {
      stabilizedReason = "ScaleDownStabilized";
      stabilizedMessage =
          "recent recommendations were higher than current one, applying the highest recent "
          "recommendation";
    }
  } else {
    stabilized = stabilizeDownscale(desired, downscaleStabilizationWindow, now);
    stabilizedReason = "ScaleDownStabilized";
    stabilizedMessage =
        "recent recommendations were higher than current one, applying the highest recent "
        "recommendation";
  }
  if (stabilized != desired) {
    out.ableToScaleReason = stabilizedReason;
    out.ableToScaleMessage = stabilizedMessage;
  } else {
    out.ableToScaleReason = "ReadyForNewScale";
    out.ableToScaleMessage = "recommended size matches current size";
  }
  LimitedReplicas limited =
      behavior ? limitWithBehavior(current, stabilized, minReplicas, maxReplicas, *behavior, now)
               : limitWithoutBehavior(current, stabilized, minReplicas, maxReplicas);
  out.replicas = limited.replicas;
  out.scalingLimited = limited.replicas != stabilized;
  out.scalingLimitedReason = limited.reason;
  out.scalingLimitedMessage = limited.message;
  return out;
}

void ScalingHistory::recordScale(const std::optional<Behavior>& behavior, int32_t from, int32_t to,
                                 WallClock::time_point now) {
  if (!behavior || from == to) return;
  if (to > from) {
    addEvent(scaleUps_, to - from, longestPeriod(behavior->scaleUp), now);
  } else {
    addEvent(scaleDowns_, from - to, longestPeriod(behavior->scaleDown), now);
  }
}

}  // namespace minik8s::controllers::hpa
