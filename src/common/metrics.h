// metrics: a small Prometheus client (counters, gauges, histograms with labels, and callbacks
// evaluated at scrape time) rendered in the text exposition format 0.0.4.
//
//   auto& requests = registry.counterVec("apiserver_request_total", "Requests served.",
//                                        {"verb", "resource", "code"});
//   requests.with({"GET", "pods", "200"}).inc();
//   std::string text = registry.exposition();   // what GET /metrics answers
//
// Counter, Gauge and Histogram are lock-free (atomics); `with()` finds a family's child under the
// family's mutex without allocating when the child exists. Hot paths should resolve a child once
// and keep the reference: children live as long as their registry. Everything here is
// thread-safe.
//
// defaultRegistry() is the one process-wide registry the components register into. It is a
// function-local static rather than a registry threaded through every constructor because a
// metric is an observation, not a dependency: the work queue of each controller, the scheduler
// and the API server record into it without knowing who serves /metrics, and when they run as
// threads of `minik8s server` their metrics appear on the API server's /metrics. Tests use a
// Registry of their own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/http.h"

namespace minik8s::metrics {

class Counter {
 public:
  void inc(double v = 1) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double v = 1) { value_.fetch_add(v, std::memory_order_relaxed); }
  void dec(double v = 1) { value_.fetch_sub(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // `upperBounds`: increasing, without +Inf (always added).
  explicit Histogram(const std::vector<double>& upperBounds);
  void observe(double v);

  // Per-bucket (not cumulative) counts, the last one for +Inf, and the sum.
  std::vector<uint64_t> bucketCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  const std::vector<double>& upperBounds() const { return upperBounds_; }

 private:
  std::vector<double> upperBounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // upperBounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Prometheus' DefBuckets, and the helpers of client_golang.
std::vector<double> defaultBuckets();
std::vector<double> exponentialBuckets(double start, double factor, int count);
std::vector<double> linearBuckets(double start, double width, int count);

// One rendered sample of a callback family.
struct Sample {
  std::vector<std::string> labelValues;
  double value = 0;
};

enum class Type { kCounter, kGauge, kHistogram };

// A metric family: a name, its help, its type and label names, and one child per label values.
class Collector {
 public:
  Collector(std::string name, std::string help, Type type, std::vector<std::string> labelNames);
  virtual ~Collector() = default;
  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  const std::vector<std::string>& labelNames() const { return labelNames_; }
  // Appends the HELP and TYPE lines and the samples.
  void render(std::string& out) const;

 protected:
  virtual void renderSamples(std::string& out) const = 0;
  // `name{a="x",b="y"<extra>} value\n`
  void renderSample(std::string& out, std::string_view suffix,
                    std::span<const std::string> labelValues, std::string_view extraLabel,
                    double value) const;

 private:
  std::string name_, help_;
  Type type_;
  std::vector<std::string> labelNames_;
};

// Orders label-value tuples so that a lookup by string_views needs no allocation.
struct LabelValuesLess {
  using is_transparent = void;
  bool operator()(std::span<const std::string> a, std::span<const std::string> b) const;
  bool operator()(std::span<const std::string> a, std::span<const std::string_view> b) const;
  bool operator()(std::span<const std::string_view> a, std::span<const std::string> b) const;
};

template <class M>
class Family : public Collector {
 public:
  Family(std::string name, std::string help, Type type, std::vector<std::string> labelNames,
         std::vector<double> buckets = {})
      : Collector(std::move(name), std::move(help), type, std::move(labelNames)),
        buckets_(std::move(buckets)) {}

  // The child for these label values (as many as label names), created on first use.
  M& with(std::initializer_list<std::string_view> values) {
    return with(std::span<const std::string_view>(values.begin(), values.size()));
  }
  M& with(std::span<const std::string_view> values);
  M& with(const std::vector<std::string>& values);

 protected:
  void renderSamples(std::string& out) const override;

 private:
  M& insertLocked(std::vector<std::string> values);

  std::vector<double> buckets_;  // histograms only
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>, LabelValuesLess> children_;
};

using CounterVec = Family<Counter>;
using GaugeVec = Family<Gauge>;
using HistogramVec = Family<Histogram>;

// A family whose samples come from functions called at scrape time.
class CallbackFamily : public Collector {
 public:
  using Fn = std::function<std::vector<Sample>()>;
  using Collector::Collector;
  uint64_t add(Fn fn);
  void remove(uint64_t id);

 protected:
  void renderSamples(std::string& out) const override;

 private:
  mutable std::mutex mu_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Fn> fns_;
};

class Registry;

// Unregisters a callback when destroyed: objects whose state a callback reads own one, so a
// scrape never calls into a destroyed object.
class CallbackHandle {
 public:
  CallbackHandle() = default;
  CallbackHandle(CallbackFamily* family, uint64_t id) : family_(family), id_(id) {}
  CallbackHandle(CallbackHandle&& other) noexcept { *this = std::move(other); }
  CallbackHandle& operator=(CallbackHandle&& other) noexcept;
  ~CallbackHandle() { reset(); }
  void reset();

 private:
  CallbackFamily* family_ = nullptr;
  uint64_t id_ = 0;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registering a name again returns the family already there (components created twice, such
  // as a controller restarted by leader election, share it); a different type or label names
  // for the same name is a programming error (std::logic_error).
  CounterVec& counterVec(const std::string& name, const std::string& help,
                         std::vector<std::string> labelNames);
  GaugeVec& gaugeVec(const std::string& name, const std::string& help,
                     std::vector<std::string> labelNames);
  HistogramVec& histogramVec(const std::string& name, const std::string& help,
                             std::vector<std::string> labelNames,
                             std::vector<double> buckets = defaultBuckets());
  // Families without labels.
  Counter& counter(const std::string& name, const std::string& help);
  Gauge& gauge(const std::string& name, const std::string& help);
  Histogram& histogram(const std::string& name, const std::string& help,
                       std::vector<double> buckets = defaultBuckets());

  // Samples computed at scrape time (type kCounter or kGauge). Several callbacks may share a
  // name (their samples are concatenated); each lives until its handle is destroyed.
  [[nodiscard]] CallbackHandle callback(const std::string& name, const std::string& help, Type type,
                                        std::vector<std::string> labelNames, CallbackFamily::Fn fn);
  [[nodiscard]] CallbackHandle gaugeCallback(const std::string& name, const std::string& help,
                                             std::function<double()> fn);

  // The text exposition format 0.0.4, families sorted by name.
  std::string exposition() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Collector>> families_;
};

// The registry of this process (see the top of this file for why there is one).
Registry& defaultRegistry();

// process_resident_memory_bytes, process_virtual_memory_bytes, process_cpu_seconds_total,
// process_start_time_seconds, process_open_fds, process_max_fds and process_threads, read from
// /proc/self at scrape time. Idempotent; defaultRegistry() has them from its creation.
void registerProcessMetrics(Registry& registry);

// "text/plain; version=0.0.4; charset=utf-8"
extern const char* const kExpositionContentType;

// GET /metrics: 200 with the exposition and its content type.
http::Response metricsResponse(const Registry& registry);

// Serves /metrics, /healthz, /livez and /readyz (the latter three "ok"): what the scheduler and
// the controller manager answer on their --metrics-bind-address. Other paths 404, other methods
// than GET and HEAD 405.
void serveComponentEndpoints(const Registry& registry, const http::Request& req,
                             http::ResponseWriter& w);

// Prometheus number formatting: integers without exponent, +Inf, -Inf, NaN, otherwise the
// shortest decimal that reads back as the same double.
std::string formatValue(double v);
// Label value escaping of the text format (\\, \", \n).
void appendEscapedLabelValue(std::string& out, std::string_view v);

}  // namespace minik8s::metrics
