// Where the HPA reads its metrics, behind an interface so tests can feed exact samples: pod
// resource usage from the resource metrics API (metrics.k8s.io/v1beta1 PodMetrics), and Pods and
// Object metrics from the custom metrics API (custom.metrics.k8s.io/v1beta2 MetricValueList),
// which minik8s serves from Prometheus (monitoring/custom_metrics_api.h).
//
// A pod whose metrics lack the resource in any container is left out (it is then "missing" for
// the replica formula), as Kubernetes' metrics client does. RestMetricsSource is thread-safe (the
// RestClient is).
#pragma once

#include <string>

#include "client/rest_client.h"
#include "controllers/hpa/replica_calculator.h"

namespace minik8s::controllers::hpa {

class MetricsSource {
 public:
  virtual ~MetricsSource() = default;
  // Usage of `resource` ("cpu", "memory") of the pods of `ns` that `labelSelector` matches.
  virtual Result<PodMetrics> podMetrics(const std::string& ns, const std::string& resource,
                                        const std::string& labelSelector) = 0;
  // A custom metric of the pods of `ns` that `labelSelector` matches (milli units).
  virtual Result<PodMetrics> podCustomMetrics(const std::string& ns, const std::string& metric,
                                              const std::string& labelSelector) = 0;
  // A custom metric of one object (`describedObject`: the HPA's {kind, name, apiVersion}).
  virtual Result<PodMetric> objectCustomMetric(const std::string& ns, const json& describedObject,
                                               const std::string& metric) = 0;
};

// A MetricValueList (custom.metrics.k8s.io) -> samples by pod name.
PodMetrics parseMetricValueList(const json& list);

// PodMetrics as the metrics API returns them (a PodMetricsList) -> samples for `resource`.
PodMetrics parsePodMetricsList(const json& list, const std::string& resource);

class RestMetricsSource : public MetricsSource {
 public:
  explicit RestMetricsSource(client::RestClient& rest) : rest_(rest) {}
  Result<PodMetrics> podMetrics(const std::string& ns, const std::string& resource,
                                const std::string& labelSelector) override;
  Result<PodMetrics> podCustomMetrics(const std::string& ns, const std::string& metric,
                                      const std::string& labelSelector) override;
  Result<PodMetric> objectCustomMetric(const std::string& ns, const json& describedObject,
                                       const std::string& metric) override;

 private:
  client::RestClient& rest_;
};

}  // namespace minik8s::controllers::hpa
