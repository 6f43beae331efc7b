#include "apiserver/request_metrics.h"

#include <charconv>

#include "common/stream.h"

namespace minik8s::apiserver {

namespace {

const std::vector<std::string> kLabels = {"verb",        "group", "version",  "resource",
                                          "subresource", "scope", "component"};

// The families, resolved once.
struct ApiServerMetrics {
  metrics::CounterVec& total;
  metrics::HistogramVec& duration;
  metrics::Gauge& inflightReadOnly;
  metrics::Gauge& inflightMutating;
  metrics::GaugeVec& longRunning;
};

ApiServerMetrics& apiServerMetrics() {
  static ApiServerMetrics m = [] {
    metrics::Registry& r = metrics::defaultRegistry();
    std::vector<std::string> withCode = kLabels;
    withCode.push_back("code");
    auto& inflight = r.gaugeVec("apiserver_current_inflight_requests",
                                "Maximal number of currently used inflight request limit of this "
                                "apiserver per request kind in last second.",
                                {"request_kind"});
    return ApiServerMetrics{
        r.counterVec("apiserver_request_total",
                     "Counter of apiserver requests broken out for each verb, dry run value, "
                     "group, version, resource, scope, component, and HTTP response code.",
                     withCode),
        r.histogramVec("apiserver_request_duration_seconds",
                       "Response latency distribution in seconds for each verb, dry run value, "
                       "group, version, resource, subresource, scope and component.",
                       kLabels, {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2,
                                 3,     4,     5,    6,   8,   10,  15,  20,  30,  45,   60}),
        inflight.with({"readOnly"}),
        inflight.with({"mutating"}),
        r.gaugeVec("apiserver_longrunning_requests",
                   "Gauge of all active long-running apiserver requests broken out by verb, "
                   "group, version, resource, scope and component. Not all requests are tracked "
                   "this way.",
                   kLabels),
    };
  }();
  return m;
}

}  // namespace

RequestMetricsWriter::RequestMetricsWriter(const http::Request& req, http::ResponseWriter& inner)
    : req_(req), inner_(inner), start_(std::chrono::steady_clock::now()) {}

const RequestInfo& RequestMetricsWriter::setRequestInfo(RequestInfo ri) {
  ri_ = std::move(ri);
  trackInflight(+1);
  return ri_;
}

void RequestMetricsWriter::trackInflight(int delta) {
  ApiServerMetrics& m = apiServerMetrics();
  if (delta > 0) inflightCounted_ = true;
  if (isLongRunning(ri_)) {
    m.longRunning
        .with({reportedVerb(), ri_.group, ri_.version, ri_.resource, ri_.subresource, scope(),
               "apiserver"})
        .inc(delta);
    return;
  }
  bool readOnly = req_.method == "GET" || req_.method == "HEAD";
  (readOnly ? m.inflightReadOnly : m.inflightMutating).inc(delta);
}

RequestMetricsWriter::~RequestMetricsWriter() { record(); }

void RequestMetricsWriter::record() {
  if (recorded_) return;
  recorded_ = true;
  ApiServerMetrics& m = apiServerMetrics();
  if (inflightCounted_) trackInflight(-1);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string_view verb = reportedVerb();
  std::string_view sc = scope();
  char code[8];
  auto end = std::to_chars(code, code + sizeof code, code_ == 0 ? 200 : code_).ptr;
  m.total
      .with({verb, ri_.group, ri_.version, ri_.resource, ri_.subresource, sc, "apiserver",
             std::string_view(code, end - code)})
      .inc();
  m.duration.with({verb, ri_.group, ri_.version, ri_.resource, ri_.subresource, sc, "apiserver"})
      .observe(seconds);
}

std::string_view RequestMetricsWriter::reportedVerb() const {
  if (!ri_.isResourceRequest) return req_.method;
  if (ri_.verb == "watch") return "WATCH";
  if (ri_.verb == "list") return "LIST";
  if (ri_.verb == "get") return "GET";
  if (ri_.verb == "create") return "POST";
  if (ri_.verb == "update") return "PUT";
  if (ri_.verb == "patch") {
    return req_.header("Content-Type").rfind("application/apply-patch", 0) == 0 ? "APPLY" : "PATCH";
  }
  if (ri_.verb == "delete" || ri_.verb == "deletecollection") return "DELETE";
  return req_.method;
}

std::string_view RequestMetricsWriter::scope() const {
  if (!ri_.isResourceRequest) return "";
  if (!ri_.name.empty()) return "resource";
  if (!ri_.namespaceName.empty()) return "namespace";
  return "cluster";
}

void RequestMetricsWriter::send(http::Response response) {
  code_ = response.status;
  record();
  inner_.send(std::move(response));
}

bool RequestMetricsWriter::beginStream(int status,
                                       std::vector<std::pair<std::string, std::string>> headers) {
  code_ = status;
  return inner_.beginStream(status, std::move(headers));
}

std::unique_ptr<http::Stream> RequestMetricsWriter::takeStream() {
  // A relay (logs, exec) answers with the agent's bytes: 101 for an upgrade, otherwise assume
  // the agent's 200.
  code_ = req_.header("Upgrade").empty() ? 200 : 101;
  return inner_.takeStream();
}

}  // namespace minik8s::apiserver
