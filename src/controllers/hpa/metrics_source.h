// Where the HPA reads pod resource usage: the resource metrics API (metrics.k8s.io/v1beta1
// PodMetrics), behind an interface so tests can feed exact samples.
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
};

// PodMetrics as the metrics API returns them (a PodMetricsList) -> samples for `resource`.
PodMetrics parsePodMetricsList(const json& list, const std::string& resource);

class RestMetricsSource : public MetricsSource {
 public:
  explicit RestMetricsSource(client::RestClient& rest) : rest_(rest) {}
  Result<PodMetrics> podMetrics(const std::string& ns, const std::string& resource,
                                const std::string& labelSelector) override;

 private:
  client::RestClient& rest_;
};

}  // namespace minik8s::controllers::hpa
