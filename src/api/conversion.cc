#include "api/conversion.h"

#include <optional>
#include <utility>

namespace minik8s::api {
namespace {

constexpr const char* kHpaV1 = "autoscaling/v1";
constexpr const char* kHpaV2 = "autoscaling/v2";
constexpr const char* kMetricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics";
constexpr const char* kBehaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior";
constexpr const char* kCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics";
constexpr const char* kConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions";

bool isCpuUtilization(const json& metric, const char* valueKey) {
  if (metric.value("type", "") != "Resource") return false;
  const json& res = metric.contains("resource") ? metric["resource"] : json::object();
  if (!res.is_object() || res.value("name", "") != "cpu") return false;
  auto value = res.find(valueKey);
  return value != res.end() && value->is_object() && value->contains("averageUtilization") &&
         (*value)["averageUtilization"].is_number_integer();
}

void setAnnotation(json& obj, const char* key, const json& value) {
  obj["metadata"]["annotations"][key] = value.dump();
}

// Removes and parses an annotation written by v2ToV1; a value that is not JSON is left alone.
std::optional<json> takeAnnotation(json& obj, const char* key) {
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) return std::nullopt;
  json& meta = obj["metadata"];
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return std::nullopt;
  json& annotations = meta["annotations"];
  auto it = annotations.find(key);
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  json parsed = json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  annotations.erase(it);
  if (annotations.empty()) meta.erase("annotations");
  return parsed;
}

// The section is taken out of obj while it is edited: setAnnotation inserts into obj, which would
// move a member still referenced (common/flat_object.h).
json v2ToV1(json obj) {
  obj["apiVersion"] = kHpaV1;
  if (obj.contains("spec") && obj["spec"].is_object()) {
    json spec = std::move(obj["spec"]);
    json metrics = spec.contains("metrics") ? std::move(spec["metrics"]) : json();
    spec.erase("metrics");
    if (metrics.is_array()) {
      json rest = json::array();
      bool haveCpu = false;
      for (const auto& m : metrics) {
        if (!haveCpu && isCpuUtilization(m, "target")) {
          haveCpu = true;
          spec["targetCPUUtilizationPercentage"] = m["resource"]["target"]["averageUtilization"];
        } else {
          rest.push_back(m);
        }
      }
      if (!rest.empty()) setAnnotation(obj, kMetricsAnnotation, rest);
    }
    if (spec.contains("behavior") && !spec["behavior"].is_null()) {
      setAnnotation(obj, kBehaviorAnnotation, spec["behavior"]);
    }
    spec.erase("behavior");
    obj["spec"] = std::move(spec);
  }
  if (obj.contains("status") && obj["status"].is_object()) {
    json status = std::move(obj["status"]);
    json current = status.contains("currentMetrics") ? std::move(status["currentMetrics"]) : json();
    status.erase("currentMetrics");
    if (current.is_array()) {
      json rest = json::array();
      bool haveCpu = false;
      for (const auto& m : current) {
        if (!haveCpu && isCpuUtilization(m, "current")) {
          haveCpu = true;
          status["currentCPUUtilizationPercentage"] =
              m["resource"]["current"]["averageUtilization"];
        } else {
          rest.push_back(m);
        }
      }
      if (!rest.empty()) setAnnotation(obj, kCurrentMetricsAnnotation, rest);
    }
    if (status.contains("conditions") && status["conditions"].is_array() &&
        !status["conditions"].empty()) {
      setAnnotation(obj, kConditionsAnnotation, status["conditions"]);
    }
    status.erase("conditions");
    obj["status"] = std::move(status);
  }
  return obj;
}

json cpuMetric(const char* valueKey, const json& utilization) {
  json value = {{"averageUtilization", utilization}};
  if (std::string(valueKey) == "target") value["type"] = "Utilization";
  return {{"type", "Resource"}, {"resource", {{"name", "cpu"}, {valueKey, value}}}};
}

json v1ToV2(json obj) {
  obj["apiVersion"] = kHpaV2;
  auto metrics = takeAnnotation(obj, kMetricsAnnotation);
  auto behavior = takeAnnotation(obj, kBehaviorAnnotation);
  auto currentMetrics = takeAnnotation(obj, kCurrentMetricsAnnotation);
  auto conditions = takeAnnotation(obj, kConditionsAnnotation);
  if (obj.contains("spec") && obj["spec"].is_object()) {
    json& spec = obj["spec"];
    json all = json::array();
    if (spec.contains("targetCPUUtilizationPercentage") &&
        !spec["targetCPUUtilizationPercentage"].is_null()) {
      all.push_back(cpuMetric("target", spec["targetCPUUtilizationPercentage"]));
    }
    spec.erase("targetCPUUtilizationPercentage");
    if (metrics && metrics->is_array()) {
      for (const auto& m : *metrics) all.push_back(m);
    }
    if (!all.empty()) spec["metrics"] = all;
    if (behavior && behavior->is_object()) spec["behavior"] = *behavior;
  }
  if (obj.contains("status") && obj["status"].is_object()) {
    json& status = obj["status"];
    json all = json::array();
    if (status.contains("currentCPUUtilizationPercentage") &&
        !status["currentCPUUtilizationPercentage"].is_null()) {
      all.push_back(cpuMetric("current", status["currentCPUUtilizationPercentage"]));
    }
    status.erase("currentCPUUtilizationPercentage");
    if (currentMetrics && currentMetrics->is_array()) {
      for (const auto& m : *currentMetrics) all.push_back(m);
    }
    if (!all.empty()) status["currentMetrics"] = all;
    if (conditions && conditions->is_array()) status["conditions"] = *conditions;
  }
  return obj;
}

bool has(const json& obj, const char* section, const char* field) {
  return obj.contains(section) && obj[section].is_object() && obj[section].contains(field);
}

// The version an HPA without apiVersion is written in, from fields only one version has.
std::string guessHpaVersion(const json& obj) {
  if (has(obj, "spec", "targetCPUUtilizationPercentage") ||
      has(obj, "status", "currentCPUUtilizationPercentage")) {
    return kHpaV1;
  }
  return kHpaV2;  // v2-only fields, or none: both versions read the same
}

Result<json> convertOneHpa(const json& obj, const std::string& to) {
  if (!obj.is_object()) return Status::BadRequest("HorizontalPodAutoscaler must be an object");
  std::string from = obj.value("apiVersion", "");
  if (from.empty()) from = guessHpaVersion(obj);
  if (from != kHpaV1 && from != kHpaV2) {
    return Status::BadRequest("cannot convert HorizontalPodAutoscaler from \"" + from + "\"");
  }
  json out;
  if (from == to) {
    out = obj;
  } else if (to == kHpaV1) {
    out = v2ToV1(obj);
  } else {
    out = v1ToV2(obj);
  }
  out["apiVersion"] = to;
  out["kind"] = "HorizontalPodAutoscaler";
  return out;
}

}  // namespace

Result<json> convertHpa(const json& obj, const std::string& toApiVersion) {
  if (toApiVersion != kHpaV1 && toApiVersion != kHpaV2) {
    return Status::BadRequest("HorizontalPodAutoscaler is not served in version \"" + toApiVersion +
                              "\"");
  }
  if (obj.is_object() && obj.value("kind", "") == "HorizontalPodAutoscalerList") {
    json out = obj;
    out["apiVersion"] = toApiVersion;
    out["items"] = json::array();
    if (obj.contains("items") && obj["items"].is_array()) {
      for (const auto& item : obj["items"]) {
        json tagged = item;
        if (!tagged.contains("apiVersion") && obj.contains("apiVersion")) {
          tagged["apiVersion"] = obj["apiVersion"];
        }
        auto converted = convertOneHpa(tagged, toApiVersion);
        if (!converted.ok()) return converted.status();
        out["items"].push_back(std::move(converted.value()));
      }
    }
    return out;
  }
  return convertOneHpa(obj, toApiVersion);
}

Result<json> convertToVersion(const Scheme& scheme, const json& obj,
                              const std::string& apiVersion) {
  if (!obj.is_object()) return Status::BadRequest("object to convert must be a JSON object");
  std::string kind = obj.value("kind", "");
  auto [group, version] = splitApiVersion(apiVersion);
  if (kind.empty()) {
    // Clients may omit kind; a group/version serving one kind leaves no doubt.
    auto kinds = scheme.groupVersion(group, version);
    if (kinds.size() == 1) kind = kinds[0]->kind;
  }
  std::string itemKind = kind;
  const std::string listSuffix = "List";
  bool isList = kind.size() > listSuffix.size() &&
                kind.compare(kind.size() - listSuffix.size(), listSuffix.size(), listSuffix) == 0;
  if (isList) itemKind = kind.substr(0, kind.size() - listSuffix.size());
  const ResourceInfo* target = scheme.byKind(group, version, itemKind);
  if (target == nullptr) target = scheme.byKind(group, version, kind);
  if (target == nullptr) {
    return Status::BadRequest("no kind \"" + kind + "\" is registered for version \"" + apiVersion +
                              "\"");
  }
  if (group == "autoscaling" && target->kind == "HorizontalPodAutoscaler") {
    return convertHpa(obj, apiVersion);
  }
  json out = obj;
  out["apiVersion"] = apiVersion;
  out["kind"] = kind;
  return out;
}

}  // namespace minik8s::api
