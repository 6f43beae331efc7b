// autoscaling: HorizontalPodAutoscalers, v2 preferred and stored, v1 served by conversion.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

std::string hpaTargets(const json& spec, const json& status) {
  // autoscaling/v1 objects: one CPU utilization target.
  if (!spec.contains("metrics") && spec.contains("targetCPUUtilizationPercentage")) {
    std::string current = "<unknown>";
    if (status.contains("currentCPUUtilizationPercentage")) {
      current = std::to_string(integer(status, "currentCPUUtilizationPercentage")) + "%";
    }
    return "cpu: " + current + "/" +
           std::to_string(integer(spec, "targetCPUUtilizationPercentage")) + "%";
  }
  const json& metrics = array(spec, "metrics");
  if (metrics.empty()) return "<none>";
  const json& statuses = array(status, "currentMetrics");
  std::vector<std::string> list;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const json& m = metrics[i];
    std::string type = str(m, "type");
    const json* current = i < statuses.size() ? &statuses[i] : nullptr;
    auto currentOf = [&](std::string_view source, std::string_view field) {
      if (current == nullptr) return std::string("<unknown>");
      const json& c = object(object(*current, source), "current");
      if (!c.contains(field)) return std::string("<unknown>");
      if (c[field].is_number_integer()) return std::to_string(c[field].get<int64_t>()) + "%";
      return str(c, field, "<unknown>");
    };
    if (type == "Resource" || type == "ContainerResource") {
      std::string source = type == "Resource" ? "resource" : "containerResource";
      const json& src = object(m, source);
      const json& target = object(src, "target");
      if (target.contains("averageValue")) {
        list.push_back(str(src, "name") + ": " + currentOf(source, "averageValue") + "/" +
                       str(target, "averageValue"));
      } else {
        std::string goal = target.contains("averageUtilization")
                               ? std::to_string(integer(target, "averageUtilization")) + "%"
                               : "<auto>";
        list.push_back(str(src, "name") + ": " + currentOf(source, "averageUtilization") + "/" +
                       goal);
      }
    } else if (type == "Pods") {
      list.push_back(currentOf("pods", "averageValue") + "/" +
                     str(object(object(m, "pods"), "target"), "averageValue"));
    } else if (type == "Object" || type == "External") {
      std::string source = type == "Object" ? "object" : "external";
      const json& target = object(object(m, source), "target");
      if (target.contains("averageValue")) {
        list.push_back(currentOf(source, "averageValue") + "/" + str(target, "averageValue") +
                       " (avg)");
      } else {
        list.push_back(currentOf(source, "value") + "/" + str(target, "value"));
      }
    } else {
      list.push_back("<unknown type>");
    }
  }
  std::string out;
  for (size_t i = 0; i < list.size() && i < 2; ++i) out += (i ? ", " : "") + list[i];
  if (list.size() > 2) out += " + " + std::to_string(list.size() - 2) + " more...";
  return out;
}

json hpaCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& ref = object(spec, "scaleTargetRef");
  std::string minPods = spec.contains("minReplicas") && spec["minReplicas"].is_number_integer()
                            ? std::to_string(integer(spec, "minReplicas"))
                            : "<unset>";
  return json::array({str(meta, "name"), str(ref, "kind") + "/" + str(ref, "name"),
                      hpaTargets(spec, status), minPods, integer(spec, "maxReplicas"),
                      integer(status, "currentReplicas"), age(meta, now)});
}

// autoscaling/v2 (preferred, stored) and v1 (served by conversion) share names, validation and
// printer; their defaults differ (v2 adds the 80 % CPU metric).
ResourceType horizontalPodAutoscaler(const char* version, void (*defaults)(json&)) {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("autoscaling", version, "HorizontalPodAutoscaler", "horizontalpodautoscalers",
               "horizontalpodautoscaler");
  r.shortNames = {"hpa"};
  r.categories = {"all"};
  r.subresources = {statusOf(r)};
  r.storageVersion = "v2";
  t.defaults = defaults;
  t.validate = validation::validateHorizontalPodAutoscaler;
  t.columns = {nameColumn(),
               col("Reference", "The scale target of the autoscaler."),
               col("Targets", "The metrics and their current/target values."),
               col("MinPods", "Lower limit for the number of pods."),
               col("MaxPods", "Upper limit for the number of pods."),
               col("Replicas", "Current number of replicas."),
               ageColumn()};
  t.cells = hpaCells;
  return t;
}

}  // namespace

void addAutoscalingResources(std::vector<ResourceType>& out) {
  out.push_back(horizontalPodAutoscaler("v2", defaulting::horizontalPodAutoscalerV2));
  out.push_back(horizontalPodAutoscaler("v1", defaulting::horizontalPodAutoscalerV1));
}

}  // namespace minik8s::api::resources
