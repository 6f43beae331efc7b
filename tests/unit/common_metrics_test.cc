#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "common/http_client.h"
#include "common/metrics.h"

namespace minik8s::metrics {
namespace {

TEST(MetricsFormat, NumbersAsPrometheusReadsThem) {
  EXPECT_EQ(formatValue(0), "0");
  EXPECT_EQ(formatValue(42), "42");
  EXPECT_EQ(formatValue(-3), "-3");
  EXPECT_EQ(formatValue(1e6), "1000000");
  EXPECT_EQ(formatValue(123456789012), "123456789012");
  EXPECT_EQ(formatValue(0.005), "0.005");
  EXPECT_EQ(formatValue(2.5), "2.5");
  EXPECT_EQ(formatValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(formatValue(1e-8), "1e-08");
  EXPECT_EQ(formatValue(1.5e300), "1.5e+300");
  EXPECT_EQ(formatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(formatValue(std::nan("")), "NaN");
}

TEST(MetricsFormat, LabelValuesAreEscaped) {
  std::string out;
  appendEscapedLabelValue(out, "a\\b\"c\nd");
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
}

TEST(MetricsRegistry, ExpositionTextIsExact) {
  Registry r;
  auto& requests =
      r.counterVec("http_requests_total", "Requests served.\nBy code.", {"method", "code"});
  requests.with({"GET", "200"}).inc();
  requests.with({"GET", "200"}).inc(2);
  requests.with({"POST", "500"}).inc();
  r.counter("errors_total", "Errors, with a \\ in the help.");
  auto& depth = r.gaugeVec("queue_depth", "Depth.", {"name"});
  depth.with({"a\"b\\c\nd"}).set(-1.5);
  auto& latency = r.histogram("latency_seconds", "Latency.", {0.1, 1, 2.5});
  latency.observe(0.05);
  latency.observe(0.1);  // upper bounds are inclusive
  latency.observe(2);
  latency.observe(100);
  auto handle = r.gaugeCallback("watchers", "Open watches.", [] { return 7.0; });

  EXPECT_EQ(r.exposition(),
            "# HELP errors_total Errors, with a \\\\ in the help.\n"
            "# TYPE errors_total counter\n"
            "errors_total 0\n"
            "# HELP http_requests_total Requests served.\\nBy code.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{method=\"GET\",code=\"200\"} 3\n"
            "http_requests_total{method=\"POST\",code=\"500\"} 1\n"
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.1\"} 2\n"
            "latency_seconds_bucket{le=\"1\"} 2\n"
            "latency_seconds_bucket{le=\"2.5\"} 3\n"
            "latency_seconds_bucket{le=\"+Inf\"} 4\n"
            "latency_seconds_sum 102.15\n"
            "latency_seconds_count 4\n"
            "# HELP queue_depth Depth.\n"
            "# TYPE queue_depth gauge\n"
            "queue_depth{name=\"a\\\"b\\\\c\\nd\"} -1.5\n"
            "# HELP watchers Open watches.\n"
            "# TYPE watchers gauge\n"
            "watchers 7\n");
}

TEST(MetricsRegistry, HistogramWithLabelsPutsLeLast) {
  Registry r;
  auto& h = r.histogramVec("d_seconds", "D.", {"verb"}, {1});
  h.with({"GET"}).observe(0.5);
  EXPECT_EQ(r.exposition(),
            "# HELP d_seconds D.\n"
            "# TYPE d_seconds histogram\n"
            "d_seconds_bucket{verb=\"GET\",le=\"1\"} 1\n"
            "d_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 1\n"
            "d_seconds_sum{verb=\"GET\"} 0.5\n"
            "d_seconds_count{verb=\"GET\"} 1\n");
}

TEST(MetricsRegistry, RegisteringAgainReturnsTheSameFamily) {
  Registry r;
  auto& a = r.counterVec("x_total", "X.", {"k"});
  auto& b = r.counterVec("x_total", "X.", {"k"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.with({"v"}), &b.with(std::vector<std::string>{"v"}));
  EXPECT_THROW(r.gaugeVec("x_total", "X.", {"k"}), std::logic_error);
  EXPECT_THROW(r.counterVec("x_total", "X.", {"other"}), std::logic_error);
  EXPECT_THROW(a.with({"v", "w"}), std::logic_error);
}

TEST(MetricsRegistry, CallbacksStopWithTheirHandle) {
  Registry r;
  {
    auto h = r.callback("pods", "Pods.", Type::kGauge, {"phase"}, [] {
      return std::vector<Sample>{{{"Running"}, 2}, {{"Pending"}, 1}};
    });
    EXPECT_EQ(r.exposition(),
              "# HELP pods Pods.\n# TYPE pods gauge\npods{phase=\"Running\"} 2\n"
              "pods{phase=\"Pending\"} 1\n");
  }
  EXPECT_EQ(r.exposition(), "# HELP pods Pods.\n# TYPE pods gauge\n");
}

TEST(MetricsRegistry, ConcurrentIncrementsAreAllCounted) {
  Registry r;
  auto& family = r.counterVec("c_total", "C.", {"worker"});
  auto& hist = r.histogram("h", "H.", {0.5});
  auto& gauge = r.gauge("g", "G.");
  constexpr int kThreads = 8, kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string label = t % 2 == 0 ? "even" : "odd";
      for (int i = 0; i < kPerThread; ++i) {
        family.with({label}).inc();
        hist.observe(i % 2 == 0 ? 0.25 : 1);
        gauge.inc();
        gauge.dec();
        gauge.inc();
        if (i % 1000 == 0) (void)r.exposition();  // scrapes while recording
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(family.with({"even"}).value(), kThreads / 2 * kPerThread);
  EXPECT_EQ(family.with({"odd"}).value(), kThreads / 2 * kPerThread);
  EXPECT_EQ(gauge.value(), kThreads * kPerThread);
  auto counts = hist.bucketCounts();
  EXPECT_EQ(counts[0], uint64_t{kThreads * kPerThread / 2});
  EXPECT_EQ(counts[1], uint64_t{kThreads * kPerThread / 2});
  EXPECT_EQ(hist.sum(), kThreads * kPerThread / 2 * 1.25);
}

TEST(MetricsRegistry, ProcessMetricsReadProcSelf) {
  Registry r;
  registerProcessMetrics(r);
  registerProcessMetrics(r);  // idempotent
  std::string text = r.exposition();
  for (const char* name : {"process_resident_memory_bytes ", "process_cpu_seconds_total ",
                           "process_start_time_seconds ", "process_open_fds ", "process_max_fds ",
                           "process_threads "}) {
    EXPECT_NE(text.find(std::string("\n") + name), std::string::npos) << name;
  }
  EXPECT_EQ(text.find("process_resident_memory_bytes 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_threads 0\n"), std::string::npos);
}

TEST(MetricsHttp, ComponentEndpoints) {
  Registry r;
  r.counter("a_total", "A.").inc();
  http::Server server([&r](const http::Request& req, http::ResponseWriter& w) {
    serveComponentEndpoints(r, req, w);
  });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  http::Client client("http://127.0.0.1:" + std::to_string(server.port()));
  auto metrics = client.get("/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status().toString();
  EXPECT_EQ(metrics->status, 200);
  std::string contentType;
  for (const auto& [k, v] : metrics->headers) {
    if (k == "Content-Type") contentType = v;
  }
  EXPECT_EQ(contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics->body, "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n");
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto health = client.get(path);
    ASSERT_TRUE(health.ok());
    EXPECT_EQ(health->status, 200);
    EXPECT_EQ(health->body, "ok");
  }
  auto missing = client.get("/nothing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  server.stop();
}

}  // namespace
}  // namespace minik8s::metrics
