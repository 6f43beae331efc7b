#include "controllers/hpa/metrics_source.h"

#include "api/quantity.h"
#include "api/scheme.h"
#include "common/http.h"
#include "common/json_pointer.h"
#include "common/time_util.h"

namespace minik8s::controllers::hpa {

PodMetrics parsePodMetricsList(const json& list, const std::string& resource) {
  PodMetrics out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& item : list["items"]) {
    if (!item.is_object()) continue;
    const std::string name = valueAt(item, "/metadata/name", std::string());
    const json containers = item.value("containers", json::array());
    if (name.empty() || !containers.is_array() || containers.empty()) continue;
    int64_t sum = 0;
    bool complete = true;
    for (const auto& c : containers) {
      const json usage = c.value("usage", json::object());
      auto q = api::Quantity::fromJson(usage.is_object() ? usage.value(resource, json()) : json());
      if (!q.ok() || !usage.contains(resource)) {
        complete = false;
        break;
      }
      sum += q->milliValue();
    }
    if (!complete) continue;
    PodMetric m;
    m.milliValue = sum;
    if (auto t = parseRfc3339(item.value("timestamp", std::string()))) m.timestamp = *t;
    if (auto w = parseGoDuration(item.value("window", std::string()))) {
      m.window = std::chrono::duration_cast<std::chrono::seconds>(*w);
    }
    out[name] = m;
  }
  return out;
}

Result<PodMetrics> RestMetricsSource::podMetrics(const std::string& ns, const std::string& resource,
                                                 const std::string& labelSelector) {
  std::string path = "/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods";
  if (!labelSelector.empty()) path += "?labelSelector=" + http::percentEncode(labelSelector);
  auto list = rest_.request("GET", path);
  if (!list.ok()) {
    return Status(
        list.status().code(), list.status().reason(),
        "unable to get metrics for resource " + resource +
            ": unable to fetch metrics from resource metrics API: " + list.status().message());
  }
  return parsePodMetricsList(*list, resource);
}

namespace {

PodMetric metricOf(const json& item) {
  PodMetric m;
  auto q = api::Quantity::fromJson(item.value("value", json()));
  m.milliValue = q.ok() ? q->milliValue() : 0;
  if (auto t = parseRfc3339(item.value("timestamp", std::string()))) m.timestamp = *t;
  if (item.contains("windowSeconds") && item["windowSeconds"].is_number_integer()) {
    m.window = std::chrono::seconds(item["windowSeconds"].get<int64_t>());
  }
  return m;
}

constexpr const char* kCustomMetrics = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/";

Status customMetricsError(const Status& s, const std::string& metric) {
  return Status(s.code(), s.reason(),
                "unable to get custom metric " + metric +
                    ": unable to fetch metrics from custom metrics API: " + s.message());
}

}  // namespace

PodMetrics parseMetricValueList(const json& list) {
  PodMetrics out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& item : list["items"]) {
    if (!item.is_object() || !item.contains("value")) continue;
    const std::string name = valueAt(item, "/describedObject/name", std::string());
    if (!name.empty()) out[name] = metricOf(item);
  }
  return out;
}

Result<PodMetrics> RestMetricsSource::podCustomMetrics(const std::string& ns,
                                                       const std::string& metric,
                                                       const std::string& labelSelector) {
  std::string path = kCustomMetrics + ns + "/pods/*/" + http::percentEncode(metric);
  if (!labelSelector.empty()) path += "?labelSelector=" + http::percentEncode(labelSelector);
  auto list = rest_.request("GET", path);
  if (!list.ok()) return customMetricsError(list.status(), metric);
  return parseMetricValueList(*list);
}

Result<PodMetric> RestMetricsSource::objectCustomMetric(const std::string& ns,
                                                        const json& describedObject,
                                                        const std::string& metric) {
  const std::string kind = describedObject.value("kind", "");
  const std::string apiVersion = describedObject.value("apiVersion", "");
  const auto [group, version] = api::splitApiVersion(apiVersion);
  const api::ResourceInfo* info = api::Scheme::builtin().byKind(group, version, kind);
  if (!info) {
    return Status::BadRequest("unable to get custom metric " + metric + " of " + kind +
                              ": no such kind in " + apiVersion);
  }
  auto value = rest_.request("GET", kCustomMetrics + ns + "/" + info->plural + "/" +
                                        describedObject.value("name", "") + "/" +
                                        http::percentEncode(metric));
  if (!value.ok()) return customMetricsError(value.status(), metric);
  return metricOf(*value);
}

}  // namespace minik8s::controllers::hpa
