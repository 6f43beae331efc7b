#include "controllers/hpa/replica_calculator.h"

#include <cmath>
#include <cstdlib>
#include <optional>

#include "api/quantity.h"
#include "common/json_pointer.h"
#include "common/time_util.h"

namespace minik8s::controllers::hpa {

namespace {

std::optional<json> podCondition(const json& pod, const std::string& type) {
  const json conds = valueAt(pod, "/status/conditions", json::array());
  if (!conds.is_array()) return std::nullopt;
  for (const auto& c : conds) {
    if (c.is_object() && c.value("type", "") == type) return c;
  }
  return std::nullopt;
}

std::optional<WallClock::time_point> timeField(const json& obj, const json::json_pointer& ptr) {
  const json v = obj.value(ptr, json());
  if (!v.is_string()) return std::nullopt;
  return parseRfc3339(v.get<std::string>());
}

std::string podName(const json& pod) { return valueAt(pod, "/metadata/name", std::string()); }

bool withinTolerance(double ratio, double tolerance) { return std::abs(1.0 - ratio) <= tolerance; }

// Kubernetes' GetResourceUtilizationRatio: only pods with a request count.
struct UtilizationRatio {
  double ratio = 0;
  int64_t utilization = 0;
  int64_t averageMilli = 0;
};
Result<UtilizationRatio> utilizationRatio(const PodMetrics& metrics,
                                          const std::map<std::string, int64_t>& requests,
                                          int64_t targetUtilization) {
  int64_t metricsTotal = 0, requestsTotal = 0, entities = 0;
  for (const auto& [name, metric] : metrics) {
    auto r = requests.find(name);
    if (r == requests.end()) continue;
    metricsTotal += metric.milliValue;
    requestsTotal += r->second;
    ++entities;
  }
  if (requestsTotal == 0) return Status::BadRequest("no metrics returned matched known pods");
  UtilizationRatio out;
  out.utilization = metricsTotal * 100 / requestsTotal;
  out.ratio = static_cast<double>(out.utilization) / static_cast<double>(targetUtilization);
  out.averageMilli = metricsTotal / entities;
  return out;
}

// Kubernetes' GetMetricUsageRatio: the average over the samples against the target.
std::pair<double, int64_t> usageRatio(const PodMetrics& metrics, int64_t targetMilli) {
  int64_t total = 0;
  for (const auto& [name, metric] : metrics) total += metric.milliValue;
  int64_t average = metrics.empty() ? 0 : total / static_cast<int64_t>(metrics.size());
  return {static_cast<double>(average) / static_cast<double>(targetMilli), average};
}

void removeMetrics(PodMetrics& metrics, const std::set<std::string>& pods) {
  for (const auto& p : pods) metrics.erase(p);
}

int32_t ceilReplicas(double ratio, int64_t pods) {
  return static_cast<int32_t>(std::ceil(ratio * static_cast<double>(pods)));
}

// The second pass shared by both target types: `ratio` came from ready pods only; `fill` gives
// the sample assumed for a missing pod; returns the proposal or `current` when the recomputed
// ratio is within tolerance or flips direction.
template <typename RatioFn, typename FillFn>
int32_t replicasWithAssumptions(int32_t current, double ratio, const PodGroups& groups,
                                PodMetrics& metrics, double tolerance, RatioFn recompute,
                                FillFn missingFill) {
  bool scaleUpWithUnready = !groups.unready.empty() && ratio > 1.0;
  if (!scaleUpWithUnready && groups.missing.empty()) {
    if (withinTolerance(ratio, tolerance)) return current;
    return ceilReplicas(ratio, groups.readyCount);
  }
  for (const auto& p : groups.missing) {
    // Missing pods count as using 100% on a scale-down and 0% on a scale-up, to dampen both.
    metrics[p].milliValue = ratio < 1.0 ? missingFill(p) : 0;
  }
  if (scaleUpWithUnready) {
    for (const auto& p : groups.unready) metrics[p].milliValue = 0;
  }
  double newRatio = recompute(metrics);
  if (withinTolerance(newRatio, tolerance) || (ratio < 1.0 && newRatio > 1.0) ||
      (ratio > 1.0 && newRatio < 1.0)) {
    return current;
  }
  int32_t proposal = ceilReplicas(newRatio, static_cast<int64_t>(metrics.size()));
  if ((newRatio < 1.0 && proposal > current) || (newRatio > 1.0 && proposal < current)) {
    return current;
  }
  return proposal;
}

}  // namespace

PodGroups groupPods(const std::vector<json>& pods, const PodMetrics& metrics,
                    const std::string& resource, const ReplicaCalculatorConfig& config,
                    WallClock::time_point now) {
  PodGroups groups;
  for (const auto& pod : pods) {
    const std::string name = podName(pod);
    const std::string phase = valueAt(pod, "/status/phase", std::string());
    if (isTerminating(pod) || phase == "Failed" || phase == "Pending") {
      groups.ignored.insert(name);
      continue;
    }
    auto metric = metrics.find(name);
    if (metric == metrics.end()) {
      groups.missing.insert(name);
      continue;
    }
    if (resource == "cpu") {
      // A pod's cpu is noisy while it starts: ignore samples until it is ready and a full
      // metric window has passed since it became so (within the initialization period).
      auto ready = podCondition(pod, "Ready");
      auto started = timeField(pod, "/status/startTime"_json_pointer);
      bool unready = false;
      if (!ready || !started) {
        unready = true;
      } else {
        auto transition =
            timeField(*ready, "/lastTransitionTime"_json_pointer).value_or(WallClock::time_point{});
        bool readyFalse = ready->value("status", "") == "False";
        if (*started + config.cpuInitializationPeriod > now) {
          unready = readyFalse || metric->second.timestamp < transition + metric->second.window;
        } else {
          unready = readyFalse && *started + config.initialReadinessDelay > transition;
        }
      }
      if (unready) {
        groups.unready.insert(name);
        continue;
      }
    }
    ++groups.readyCount;
  }
  return groups;
}

Result<std::map<std::string, int64_t>> podRequests(const std::vector<json>& pods,
                                                   const std::string& resource) {
  std::map<std::string, int64_t> out;
  for (const auto& pod : pods) {
    int64_t sum = 0;
    const json containers = valueAt(pod, "/spec/containers", json::array());
    for (const auto& c : containers) {
      const json request =
          valueAt(c, "/resources/requests", json::object()).value(resource, json());
      auto q = api::Quantity::fromJson(request);
      if (request.is_null() || !q.ok()) {
        return Status::BadRequest("missing request for " + resource + " in container " +
                                  c.value("name", std::string()) + " of Pod " + podName(pod));
      }
      sum += q->milliValue();
    }
    out[podName(pod)] = sum;
  }
  return out;
}

Result<ReplicaProposal> replicasForUtilization(int32_t currentReplicas, int64_t targetUtilization,
                                               const std::string& resource,
                                               const std::vector<json>& pods, PodMetrics metrics,
                                               const ReplicaCalculatorConfig& config,
                                               WallClock::time_point now) {
  if (pods.empty()) {
    return Status::BadRequest("no pods returned by selector while calculating replica count");
  }
  if (targetUtilization <= 0) return Status::BadRequest("the target utilization must be positive");
  PodGroups groups = groupPods(pods, metrics, resource, config, now);
  removeMetrics(metrics, groups.ignored);
  removeMetrics(metrics, groups.unready);
  if (metrics.empty()) {
    return Status::BadRequest("did not receive metrics for targeted pods (pods might be unready)");
  }
  auto requests = podRequests(pods, resource);
  if (!requests.ok()) return requests.status();
  auto first = utilizationRatio(metrics, *requests, targetUtilization);
  if (!first.ok()) return first.status();
  ReplicaProposal out;
  out.utilization = first->utilization;
  out.averageMilli = first->averageMilli;
  auto recompute = [&](const PodMetrics& m) {
    auto r = utilizationRatio(m, *requests, targetUtilization);
    return r.ok() ? r->ratio : 1.0;
  };
  auto fill = [&](const std::string& pod) { return requests->at(pod); };
  out.replicas = replicasWithAssumptions(currentReplicas, first->ratio, groups, metrics,
                                         config.tolerance, recompute, fill);
  return out;
}

Result<ReplicaProposal> replicasForAverageValue(int32_t currentReplicas, int64_t targetMilli,
                                                const std::string& resource,
                                                const std::vector<json>& pods, PodMetrics metrics,
                                                const ReplicaCalculatorConfig& config,
                                                WallClock::time_point now) {
  if (pods.empty()) {
    return Status::BadRequest("no pods returned by selector while calculating replica count");
  }
  if (targetMilli <= 0) return Status::BadRequest("the target average value must be positive");
  PodGroups groups = groupPods(pods, metrics, resource, config, now);
  removeMetrics(metrics, groups.ignored);
  removeMetrics(metrics, groups.unready);
  if (metrics.empty()) {
    return Status::BadRequest("did not receive metrics for targeted pods (pods might be unready)");
  }
  auto [ratio, average] = usageRatio(metrics, targetMilli);
  ReplicaProposal out;
  out.averageMilli = average;
  auto recompute = [&](const PodMetrics& m) { return usageRatio(m, targetMilli).first; };
  auto fill = [&](const std::string&) { return targetMilli; };
  out.replicas = replicasWithAssumptions(currentReplicas, ratio, groups, metrics, config.tolerance,
                                         recompute, fill);
  return out;
}

}  // namespace minik8s::controllers::hpa
