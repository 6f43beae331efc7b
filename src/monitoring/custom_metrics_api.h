// CustomMetricsApi: the custom metrics API (custom.metrics.k8s.io v1beta2 and v1beta1) served from
// Prometheus, as prometheus-adapter does, so an HPA can scale on an application's own metric.
//
//   GET /apis/custom.metrics.k8s.io                                     APIGroup
//   GET /apis/custom.metrics.k8s.io/v1beta2                             APIResourceList (pods/<m>)
//   GET .../v1beta2/namespaces/NS/pods/NAME|*/METRIC[?labelSelector=]   MetricValueList per pod
//   GET .../v1beta2/namespaces/NS/RESOURCE/NAME/METRIC                  one MetricValue (Object)
//
// The naming rule is prometheus-adapter's default: a counter `<m>_total` is served as `<m>`, its
// per-second rate over the last minute; any other series `<m>` as its current value. A pod's
// value sums its series (label `pod`, `namespace`). An Object value sums the series of the pods
// the object selects (Deployment, ReplicaSet, StatefulSet, DaemonSet: spec.selector) or, for
// other kinds, the series whose label named after the kind's singular (`service`) equals the
// name. Metric names must be Prometheus names; nothing else reaches PromQL.
// serve() is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/http.h"
#include "monitoring/cluster_cache.h"
#include "monitoring/prometheus_client.h"

namespace minik8s::monitoring {

class CustomMetricsApi {
 public:
  static constexpr const char* kPrefix = "/apis/custom.metrics.k8s.io";

  CustomMetricsApi(std::shared_ptr<const ObjectSource> cluster,
                   std::shared_ptr<PrometheusClient> prometheus)
      : cluster_(std::move(cluster)), prometheus_(std::move(prometheus)) {}

  void serve(const http::Request& req, http::ResponseWriter& w) const;

  // The metric values (plain numbers) of the pods of `ns` named in `pods`, by pod name.
  Result<std::map<std::string, double>> podValues(const std::string& ns,
                                                  const std::vector<std::string>& pods,
                                                  const std::string& metric) const;

 private:
  Result<json> podMetrics(const std::string& version, const std::string& ns,
                          const std::string& name, const std::string& metric,
                          const std::string& labelSelector) const;
  Result<json> objectMetric(const std::string& version, const std::string& ns,
                            const std::string& resource, const std::string& name,
                            const std::string& metric) const;
  Result<json> resourceList(const std::string& version) const;

  std::shared_ptr<const ObjectSource> cluster_;
  std::shared_ptr<PrometheusClient> prometheus_;
};

// Where the monitoring addon's Prometheus answers: the NodePort of Service monitoring/prometheus
// on the first Ready node's InternalIP; Unavailable when there is none.
Result<std::string> prometheusUrlFromCluster(const ClusterCache& cache);

}  // namespace minik8s::monitoring
