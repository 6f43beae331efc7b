#include "monitoring/prometheus_client.h"

#include "common/http.h"
#include "common/http_client.h"

namespace minik8s::monitoring {

Result<json> HttpPrometheusClient::query(const std::string& promql) {
  auto base = locate_();
  if (!base.ok()) return base.status();
  http::ClientTimeouts timeouts;
  timeouts.connect = std::chrono::seconds(3);
  timeouts.request = std::chrono::seconds(5);
  http::Client client(*base, {}, timeouts);
  auto r = client.get("/api/v1/query?query=" + http::percentEncode(promql));
  if (!r.ok()) {
    return Status::Unavailable("Prometheus at " + *base + ": " + r.status().message());
  }
  json body = json::parse(r->body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return Status::Unavailable("Prometheus at " + *base + " answered " + std::to_string(r->status) +
                               " without JSON");
  }
  if (body.value("status", "") != "success") {
    const std::string msg = body.value("error", std::string("status ") + std::to_string(r->status));
    if (r->status == 400 || r->status == 422) return Status::BadRequest("Prometheus: " + msg);
    return Status::Unavailable("Prometheus: " + msg);
  }
  const json* result = body.contains("data") && body["data"].is_object() &&
                               body["data"].contains("result") && body["data"]["result"].is_array()
                           ? &body["data"]["result"]
                           : nullptr;
  if (!result) return Status::Unavailable("Prometheus: an answer without data.result");
  return *result;
}

}  // namespace minik8s::monitoring
