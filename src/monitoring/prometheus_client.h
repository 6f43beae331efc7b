// PrometheusClient: instant queries against Prometheus' HTTP API, behind an interface so the
// custom metrics API is tested with exact answers. HttpPrometheusClient finds Prometheus with a
// locator called per query (the address may change: a NodePort on whichever node is there).
// Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"

namespace minik8s::monitoring {

class PrometheusClient {
 public:
  virtual ~PrometheusClient() = default;
  // The instant vector of `promql` now: [{"metric": {...}, "value": [time, "1.5"]}, ...]; a
  // Prometheus error (bad query) is BadRequest with its message, no Prometheus Unavailable.
  virtual Result<json> query(const std::string& promql) = 0;
};

class HttpPrometheusClient : public PrometheusClient {
 public:
  // `locate` returns Prometheus' base URL ("http://172.29.0.2:30090").
  explicit HttpPrometheusClient(std::function<Result<std::string>()> locate)
      : locate_(std::move(locate)) {}
  Result<json> query(const std::string& promql) override;

 private:
  std::function<Result<std::string>()> locate_;
};

}  // namespace minik8s::monitoring
