#include "controllers/hpa/metrics_source.h"

#include "api/quantity.h"
#include "common/http.h"
#include "common/time_util.h"

namespace minik8s::controllers::hpa {

PodMetrics parsePodMetricsList(const json& list, const std::string& resource) {
  PodMetrics out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& item : list["items"]) {
    if (!item.is_object()) continue;
    const std::string name = item.value("/metadata/name"_json_pointer, std::string());
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

}  // namespace minik8s::controllers::hpa
