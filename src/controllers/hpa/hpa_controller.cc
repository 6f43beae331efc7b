#include "controllers/hpa/hpa_controller.h"

#include <algorithm>
#include <cmath>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::controllers::hpa {

using api::nameOf;
using api::namespaceOf;

namespace {

using client::resources::kHpas;

// The resource behind a scaleTargetRef: the built-in workloads by kind, any other kind (a
// custom resource with a scale subresource) by the discovery document of its apiVersion.
std::optional<client::Resource> targetResource(client::RestClient& rest, const json& ref) {
  const std::string kind = ref.value("kind", "");
  if (kind == "Deployment") return client::resources::kDeployments;
  if (kind == "ReplicaSet") return client::resources::kReplicaSets;
  if (kind == "StatefulSet") return client::Resource{"apps", "v1", "statefulsets", true};
  if (kind == "ReplicationController") {
    return client::Resource{"", "v1", "replicationcontrollers", true};
  }
  const std::string apiVersion = ref.value("apiVersion", "");
  const size_t slash = apiVersion.find('/');
  if (kind.empty() || slash == std::string::npos) return std::nullopt;
  auto doc = rest.request("GET", "/apis/" + apiVersion);
  if (!doc.ok() || !doc->contains("resources")) return std::nullopt;
  for (const auto& r : (*doc)["resources"]) {
    const std::string name = r.value("name", "");
    if (r.value("kind", "") != kind || name.find('/') != std::string::npos) continue;
    return client::Resource{apiVersion.substr(0, slash), apiVersion.substr(slash + 1), name,
                            r.value("namespaced", true)};
  }
  return std::nullopt;
}

// Kubernetes' setConditionInList: keeps the order, moves lastTransitionTime only on a change.
void setCondition(json& conditions, const std::string& type, const std::string& status,
                  const std::string& reason, const std::string& message, const std::string& now) {
  if (!conditions.is_array()) conditions = json::array();
  json* existing = nullptr;
  for (auto& c : conditions) {
    if (c.value("type", "") == type) existing = &c;
  }
  if (!existing) {
    conditions.push_back({{"type", type}});
    existing = &conditions.back();
  }
  if (existing->value("status", "") != status) (*existing)["lastTransitionTime"] = now;
  (*existing)["status"] = status;
  (*existing)["reason"] = reason;
  (*existing)["message"] = message;
}

std::string milliQuantity(int64_t milli) { return api::Quantity::fromMilli(milli).toString(); }

}  // namespace

struct HorizontalPodAutoscalerController::MetricsResult {
  int32_t replicas = -1;  // -1: no usable proposal
  std::string metricName;
  json statuses = json::array();
  std::string error;
};

HorizontalPodAutoscalerController::HorizontalPodAutoscalerController(client::RestClient& rest,
                                                                     client::Informer& hpas,
                                                                     client::Informer& pods,
                                                                     MetricsSource& metrics,
                                                                     HpaControllerOptions options)
    : rest_(rest),
      hpas_(hpas),
      pods_(pods),
      metrics_(metrics),
      options_(std::move(options)),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "horizontal-pod-autoscaler") {
  events_ = options_.events;
  if (!events_) {
    ownEvents_ = std::make_unique<client::ApiEventRecorder>(
        rest_, client::ApiEventRecorderOptions{.component = "horizontal-pod-autoscaler",
                                               .now = options_.now});
    events_ = ownEvents_.get();
  }
  hpas_.addHandlers({[this](const json& h) { queue_.add(client::objectKey(h)); },
                     [this](const json& oldHpa, const json& h) {
                       // Our own status writes come back as updates: only a spec change is news.
                       if (api::member(oldHpa, "spec") != api::member(h, "spec")) {
                         queue_.add(client::objectKey(h));
                       }
                     },
                     [this](const json& h) {
                       std::lock_guard lock(mu_);
                       histories_.erase(client::objectKey(h));
                     }});
}

HorizontalPodAutoscalerController::~HorizontalPodAutoscalerController() { stop(); }

void HorizontalPodAutoscalerController::start() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  workers_.start(options_.workers);
  resync_ = std::thread([this] { resyncLoop(); });
}

void HorizontalPodAutoscalerController::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !resync_.joinable()) return;
    stopping_ = true;
  }
  stopCv_.notify_all();
  if (resync_.joinable()) resync_.join();
  workers_.stop();
}

void HorizontalPodAutoscalerController::resyncLoop() {
  std::unique_lock lock(mu_);
  while (!stopCv_.wait_for(lock, options_.syncPeriod, [this] { return stopping_; })) {
    lock.unlock();
    for (const auto& h : hpas_.list()) queue_.add(client::objectKey(h));
    lock.lock();
  }
}

std::shared_ptr<ScalingHistory> HorizontalPodAutoscalerController::historyOf(
    const std::string& key) {
  std::lock_guard lock(mu_);
  auto& h = histories_[key];
  if (!h) h = std::make_shared<ScalingHistory>();
  return h;
}

void HorizontalPodAutoscalerController::recordEvent(const json& hpa, const std::string& type,
                                                    const std::string& reason,
                                                    const std::string& message) {
  json involved = hpa;  // informer items carry no kind
  involved["kind"] = "HorizontalPodAutoscaler";
  involved["apiVersion"] = "autoscaling/v2";
  events_->record(involved, type, reason, message);
}

Status HorizontalPodAutoscalerController::writeStatus(const json& hpa, const json& status) {
  const json old = hpa.value("status", json::object());
  if (old == status) return Status::Ok();
  json patch = status;
  // A merge patch keeps members it does not name: clear the ones the new status dropped.
  if (old.is_object()) {
    for (const auto& [k, v] : old.items()) {
      if (!patch.contains(k)) patch[k] = nullptr;
    }
  }
  auto r =
      rest_.patch(kHpas, namespaceOf(hpa), nameOf(hpa), {{"status", patch}}, "merge", "status");
  if (!r.ok() && r.status().code() != 404) return r.status();
  return Status::Ok();
}

HorizontalPodAutoscalerController::MetricsResult
HorizontalPodAutoscalerController::computeReplicasForMetrics(const json& hpa, const json& scale,
                                                             int32_t currentReplicas,
                                                             json& conditions,
                                                             WallClock::time_point now) {
  MetricsResult out;
  const std::string nowText = formatRfc3339(now);
  const std::string selectorText = valueAt(scale, "/status/selector", std::string());
  auto selector = api::LabelSelector::parse(selectorText);
  if (selectorText.empty() || !selector.ok()) {
    const bool missing = selectorText.empty();
    recordEvent(hpa, "Warning", missing ? "SelectorRequired" : "InvalidSelector",
                missing ? "selector is required" : selector.status().message());
    setCondition(conditions, "ScalingActive", "False", "InvalidSelector",
                 missing ? "the HPA target's scale is missing a selector"
                         : "the HPA target's scale has an invalid selector",
                 nowText);
    out.error = missing ? "selector is required" : selector.status().message();
    return out;
  }
  std::vector<json> pods;
  for (const auto& p : pods_.byIndexShared("namespace", namespaceOf(hpa))) {
    if (selector->matches(api::labelsOf(*p))) pods.push_back(*p);
  }
  const json specs = valueAt(hpa, "/spec/metrics", json::array());
  int invalid = 0;
  std::string firstError, firstReason, firstMessage;
  for (const auto& spec : specs) {
    json status = {{"type", ""}};
    std::string error, reason = "FailedGetResourceMetric";
    const std::string type = spec.value("type", "");
    if (type == "Resource") {
      const json source = spec.value("resource", json::object());
      const std::string resource = source.value("name", "");
      const json target = source.value("target", json::object());
      auto samples = metrics_.podMetrics(namespaceOf(hpa), resource, selectorText);
      if (!samples.ok()) {
        error = samples.status().message();
      } else if (target.contains("averageValue")) {
        auto goal = api::Quantity::fromJson(target["averageValue"]);
        auto proposal = goal.ok()
                            ? replicasForAverageValue(currentReplicas, goal->milliValue(), resource,
                                                      pods, *samples, options_.calculator, now)
                            : Result<ReplicaProposal>(goal.status());
        if (!proposal.ok()) {
          error = "failed to get " + resource + " usage: " + proposal.status().message();
        } else {
          status = {{"type", "Resource"},
                    {"resource",
                     {{"name", resource},
                      {"current", {{"averageValue", milliQuantity(proposal->averageMilli)}}}}}};
          if (out.replicas < 0 || proposal->replicas > out.replicas) {
            out.replicas = proposal->replicas;
            out.metricName = resource + " resource";
          }
        }
      } else if (target.contains("averageUtilization")) {
        auto proposal =
            replicasForUtilization(currentReplicas, target.value("averageUtilization", int64_t{0}),
                                   resource, pods, *samples, options_.calculator, now);
        if (!proposal.ok()) {
          error = "failed to get " + resource + " utilization: " + proposal.status().message();
        } else {
          status = {{"type", "Resource"},
                    {"resource",
                     {{"name", resource},
                      {"current",
                       {{"averageUtilization", proposal->utilization},
                        {"averageValue", milliQuantity(proposal->averageMilli)}}}}}};
          if (out.replicas < 0 || proposal->replicas > out.replicas) {
            out.replicas = proposal->replicas;
            out.metricName = resource + " resource utilization (percentage of request)";
          }
        }
      } else {
        error =
            "invalid resource metric source: neither an average utilization target nor an "
            "average value (usage) target was set";
      }
    } else if (type == "Pods") {
      // A custom metric averaged over the pods (custom.metrics.k8s.io), target AverageValue.
      reason = "FailedGetPodsMetric";
      const json source = spec.value("pods", json::object());
      const std::string metric = valueAt(source, "/metric/name", std::string());
      auto goal = api::Quantity::fromJson(valueAt(source, "/target/averageValue", json()));
      auto samples = metrics_.podCustomMetrics(namespaceOf(hpa), metric, selectorText);
      auto proposal = !goal.ok() ? Result<ReplicaProposal>(goal.status())
                      : !samples.ok()
                          ? Result<ReplicaProposal>(samples.status())
                          : replicasForAverageValue(currentReplicas, goal->milliValue(), metric,
                                                    pods, *samples, options_.calculator, now);
      if (!proposal.ok()) {
        error = proposal.status().message();
      } else {
        status = {{"type", "Pods"},
                  {"pods",
                   {{"metric", {{"name", metric}}},
                    {"current", {{"averageValue", milliQuantity(proposal->averageMilli)}}}}}};
        if (out.replicas < 0 || proposal->replicas > out.replicas) {
          out.replicas = proposal->replicas;
          out.metricName = "pods metric " + metric;
        }
      }
    } else if (type == "Object") {
      // One object's custom metric: target Value (scale with the ratio) or AverageValue (per pod).
      reason = "FailedGetObjectMetric";
      const json source = spec.value("object", json::object());
      const std::string metric = valueAt(source, "/metric/name", std::string());
      const json described = source.value("describedObject", json::object());
      const json target = source.value("target", json::object());
      const bool perPod = target.contains("averageValue");
      auto goal =
          api::Quantity::fromJson(perPod ? target["averageValue"] : target.value("value", json()));
      auto sample = metrics_.objectCustomMetric(namespaceOf(hpa), described, metric);
      if (!goal.ok() || goal->milliValue() <= 0) {
        error = "invalid object metric source: the target needs a positive value or averageValue";
      } else if (!sample.ok()) {
        error = sample.status().message();
      } else {
        const double usage = static_cast<double>(sample->milliValue);
        const double targetMilli = static_cast<double>(goal->milliValue());
        const double tolerance = options_.calculator.tolerance;
        int32_t replicas = currentReplicas;
        json current;
        if (perPod) {
          const double ratio = usage / (targetMilli * std::max(currentReplicas, 1));
          if (std::abs(1.0 - ratio) > tolerance)
            replicas = static_cast<int32_t>(std::ceil(usage / targetMilli));
          current = {{"averageValue",
                      milliQuantity(static_cast<int64_t>(usage / std::max(currentReplicas, 1)))}};
        } else {
          const double ratio = usage / targetMilli;
          int64_t ready = 0;
          for (const auto& p : pods)
            if (isPodReady(p)) ++ready;
          if (currentReplicas == 0) {
            replicas = static_cast<int32_t>(std::ceil(ratio));
          } else if (std::abs(1.0 - ratio) > tolerance) {
            replicas = static_cast<int32_t>(std::ceil(ratio * static_cast<double>(ready)));
          }
          current = {{"value", milliQuantity(sample->milliValue)}};
        }
        status = {{"type", "Object"},
                  {"object",
                   {{"metric", {{"name", metric}}},
                    {"describedObject", described},
                    {"current", current}}}};
        if (out.replicas < 0 || replicas > out.replicas) {
          out.replicas = replicas;
          out.metricName = "object metric " + metric;
        }
      }
    } else if (type == "External" || type == "ContainerResource") {
      reason = "FailedGet" + type + "Metric";
      error = "unable to get " + type +
              " metrics: minik8s serves the resource metrics API (metrics.k8s.io) and the custom "
              "metrics API (custom.metrics.k8s.io) only";
    } else {
      reason = "InvalidMetricSourceType";
      error = "unknown metric source type \"" + type + "\"";
    }
    out.statuses.push_back(status);
    if (!error.empty()) {
      recordEvent(hpa, "Warning", reason, error);
      if (invalid++ == 0) {
        firstError = error;
        firstReason = reason;
        firstMessage = "the HPA was unable to compute the replica count: " + error;
      }
    }
  }
  // All metrics failing, or some failing on a scale-down: do not act on partial knowledge.
  if (invalid > 0 &&
      (invalid >= static_cast<int>(specs.size()) || out.replicas < currentReplicas)) {
    setCondition(conditions, "ScalingActive", "False", firstReason, firstMessage, nowText);
    out.replicas = -1;
    out.error = "invalid metrics (" + std::to_string(invalid) + " invalid out of " +
                std::to_string(specs.size()) + "), first error is: " + firstError;
    return out;
  }
  if (specs.empty()) {
    setCondition(conditions, "ScalingActive", "False", "InvalidMetricSourceType",
                 "the HPA was unable to compute the replica count: no metrics", nowText);
    out.error = "no metrics";
    return out;
  }
  setCondition(conditions, "ScalingActive", "True", "ValidMetricFound",
               "the HPA was able to successfully calculate a replica count from " + out.metricName,
               nowText);
  return out;
}

Status HorizontalPodAutoscalerController::sync(const std::string& key) {
  auto cached = hpas_.get(key);
  if (!cached) {
    std::lock_guard lock(mu_);
    histories_.erase(key);
    return Status::Ok();
  }
  const json& hpa = *cached;
  const WallClock::time_point now = options_.now();
  const std::string nowText = formatRfc3339(now);
  const json spec = hpa.value("spec", json::object());
  const json ref = spec.value("scaleTargetRef", json::object());
  const std::string ns = namespaceOf(hpa);
  const std::string reference = ref.value("kind", "") + "/" + ref.value("name", "");
  json status = hpa.value("status", json::object());
  if (!status.is_object()) status = json::object();
  json conditions = status.value("conditions", json::array());

  auto target = targetResource(rest_, ref);
  Result<json> scale = target
                           ? rest_.request("GET", target->path(ns, ref.value("name", ""), "scale"))
                           : Result<json>(Status::BadRequest(
                                 "cannot scale a " + ref.value("kind", std::string("<none>"))));
  if (!scale.ok()) {
    recordEvent(hpa, "Warning", "FailedGetScale", scale.status().message());
    setCondition(conditions, "AbleToScale", "False", "FailedGetScale",
                 "the HPA controller was unable to get the target's current scale: " +
                     scale.status().message(),
                 nowText);
    status["conditions"] = conditions;
    LOG_DEBUG("hpa {}: cannot get the scale of {}: {}", key, reference, scale.status().message());
    return writeStatus(hpa, status);
  }
  setCondition(conditions, "AbleToScale", "True", "SucceededGetScale",
               "the HPA controller was able to get the target's current scale", nowText);

  auto history = historyOf(key);
  const int32_t currentReplicas = valueAt(*scale, "/spec/replicas", 0);
  history->recordInitial(currentReplicas, now);
  const int32_t minReplicas = spec.value("minReplicas", 1);
  const int32_t maxReplicas = spec.value("maxReplicas", 1);
  auto behavior = behaviorFromSpec(spec, options_.downscaleStabilization);

  int32_t desired = 0;
  std::string rescaleReason;
  json metricStatuses = json::array();
  bool rescale = true;
  if (currentReplicas == 0 && minReplicas != 0) {
    // Kubernetes treats a target scaled to zero by hand as "autoscaling off".
    rescale = false;
    setCondition(conditions, "ScalingActive", "False", "ScalingDisabled",
                 "scaling is disabled since the replica count of the target is zero", nowText);
  } else if (currentReplicas > maxReplicas) {
    rescaleReason = "Current number of replicas above Spec.MaxReplicas";
    desired = maxReplicas;
  } else if (currentReplicas < minReplicas) {
    rescaleReason = "Current number of replicas below Spec.MinReplicas";
    desired = minReplicas;
  } else {
    MetricsResult m = computeReplicasForMetrics(hpa, *scale, currentReplicas, conditions, now);
    metricStatuses = m.statuses;
    if (m.replicas < 0) {
      status["currentReplicas"] = currentReplicas;
      if (metricStatuses.empty()) {
        status.erase("currentMetrics");
      } else {
        status["currentMetrics"] = metricStatuses;
      }
      status["conditions"] = conditions;
      LOG_DEBUG(
          "hpa {}: failed to compute desired number of replicas based on listed metrics "
          "for {}: {}",
          key, reference, m.error);
      return writeStatus(hpa, status);
    }
    desired = m.replicas;
    if (desired > currentReplicas) rescaleReason = m.metricName + " above target";
    if (desired < currentReplicas) rescaleReason = "All metrics below target";
    Normalized n = history->normalize(behavior, currentReplicas, desired, minReplicas, maxReplicas,
                                      options_.downscaleStabilization, now);
    setCondition(conditions, "AbleToScale", "True", n.ableToScaleReason, n.ableToScaleMessage,
                 nowText);
    setCondition(conditions, "ScalingLimited", n.scalingLimited ? "True" : "False",
                 n.scalingLimitedReason, n.scalingLimitedMessage, nowText);
    desired = n.replicas;
    rescale = desired != currentReplicas;
  }

  if (rescale) {
    json update = *scale;
    update["spec"]["replicas"] = desired;
    auto updated =
        rest_.request("PUT", target->path(ns, ref.value("name", ""), "scale"), update.dump());
    if (!updated.ok()) {
      recordEvent(hpa, "Warning", "FailedRescale",
                  "New size: " + std::to_string(desired) + "; reason: " + rescaleReason +
                      "; error: " + updated.status().message());
      setCondition(
          conditions, "AbleToScale", "False", "FailedUpdateScale",
          "the HPA controller was unable to update the target scale: " + updated.status().message(),
          nowText);
      status["currentReplicas"] = currentReplicas;
      if (!metricStatuses.empty()) status["currentMetrics"] = metricStatuses;
      status["conditions"] = conditions;
      Status w = writeStatus(hpa, status);
      // A conflict means the target moved under us: look again soon.
      return updated.status().code() == 409 ? updated.status() : w;
    }
    setCondition(
        conditions, "AbleToScale", "True", "SucceededRescale",
        "the HPA controller was able to update the target scale to " + std::to_string(desired),
        nowText);
    recordEvent(hpa, "Normal", "SuccessfulRescale",
                "New size: " + std::to_string(desired) + "; reason: " + rescaleReason);
    history->recordScale(behavior, currentReplicas, desired, now);
    LOG_INFO("hpa {}: scaled {} from {} to {} ({})", key, reference, currentReplicas, desired,
             rescaleReason);
    status["lastScaleTime"] = nowText;
  } else {
    desired = currentReplicas;
  }
  status["currentReplicas"] = currentReplicas;
  status["desiredReplicas"] = desired;
  if (metricStatuses.empty()) {
    status.erase("currentMetrics");
  } else {
    status["currentMetrics"] = metricStatuses;
  }
  status["conditions"] = conditions;
  return writeStatus(hpa, status);
}

}  // namespace minik8s::controllers::hpa
