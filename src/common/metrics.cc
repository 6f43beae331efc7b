#include "common/metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace minik8s::metrics {

const char* const kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// ---- formatting ----

std::string formatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    return std::string(buf, r.ptr);
  }
  // The shortest digits that read back as v; positional unless the exponent is very small or
  // very large (as JavaScript prints numbers), which Prometheus' parser (Go's ParseFloat) reads.
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, sci.ptr - buf);
  int exponent = std::atoi(std::string(s.substr(s.find('e') + 1)).c_str());
  if (exponent < -4 || exponent >= 21) return std::string(s);
  auto fixed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

void appendEscapedLabelValue(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
}

namespace {

void appendEscapedHelp(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
}

const char* typeName(Type t) {
  switch (t) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

// ---- histogram ----

Histogram::Histogram(const std::vector<double>& upperBounds)
    : upperBounds_(upperBounds),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(upperBounds.size() + 1)) {
  // A +Inf given by the caller is the implicit last bucket.
  while (!upperBounds_.empty() && std::isinf(upperBounds_.back())) upperBounds_.pop_back();
}

void Histogram::observe(double v) {
  size_t i = std::lower_bound(upperBounds_.begin(), upperBounds_.end(), v) - upperBounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::bucketCounts() const {
  std::vector<uint64_t> out(upperBounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::vector<double> defaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> exponentialBuckets(double start, double factor, int count) {
  std::vector<double> b;
  for (int i = 0; i < count; ++i, start *= factor) b.push_back(start);
  return b;
}

std::vector<double> linearBuckets(double start, double width, int count) {
  std::vector<double> b;
  for (int i = 0; i < count; ++i, start += width) b.push_back(start);
  return b;
}

// ---- families ----

Collector::Collector(std::string name, std::string help, Type type,
                     std::vector<std::string> labelNames)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      labelNames_(std::move(labelNames)) {}

void Collector::render(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out.push_back(' ');
  appendEscapedHelp(out, help_);
  out += "\n# TYPE ";
  out += name_;
  out.push_back(' ');
  out += typeName(type_);
  out.push_back('\n');
  renderSamples(out);
}

void Collector::renderSample(std::string& out, std::string_view suffix,
                             std::span<const std::string> labelValues, std::string_view extraLabel,
                             double value) const {
  out += name_;
  out += suffix;
  size_t n = std::min(labelNames_.size(), labelValues.size());
  if (n > 0 || !extraLabel.empty()) {
    out.push_back('{');
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out.push_back(',');
      out += labelNames_[i];
      out += "=\"";
      appendEscapedLabelValue(out, labelValues[i]);
      out.push_back('"');
    }
    if (!extraLabel.empty()) {
      if (n > 0) out.push_back(',');
      out += extraLabel;
    }
    out.push_back('}');
  }
  out.push_back(' ');
  out += formatValue(value);
  out.push_back('\n');
}

namespace {

template <class A, class B>
bool lexicographicLess(std::span<const A> a, std::span<const B> b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(),
      [](const auto& x, const auto& y) { return std::string_view(x) < std::string_view(y); });
}

}  // namespace

bool LabelValuesLess::operator()(std::span<const std::string> a,
                                 std::span<const std::string> b) const {
  return lexicographicLess(a, b);
}
bool LabelValuesLess::operator()(std::span<const std::string> a,
                                 std::span<const std::string_view> b) const {
  return lexicographicLess(a, b);
}
bool LabelValuesLess::operator()(std::span<const std::string_view> a,
                                 std::span<const std::string> b) const {
  return lexicographicLess(a, b);
}

namespace {

template <class M>
std::unique_ptr<M> makeChild(const std::vector<double>& buckets) {
  if constexpr (std::is_same_v<M, Histogram>) {
    return std::make_unique<Histogram>(buckets);
  } else {
    return std::make_unique<M>();
  }
}

void checkArity(const Collector& c, size_t n) {
  if (n != c.labelNames().size()) {
    throw std::logic_error("metric " + c.name() + " has " + std::to_string(c.labelNames().size()) +
                           " labels, given " + std::to_string(n) + " values");
  }
}

}  // namespace

template <class M>
M& Family<M>::with(std::span<const std::string_view> values) {
  checkArity(*this, values.size());
  std::lock_guard lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  return insertLocked(std::vector<std::string>(values.begin(), values.end()));
}

template <class M>
M& Family<M>::with(const std::vector<std::string>& values) {
  checkArity(*this, values.size());
  std::lock_guard lock(mu_);
  auto it = children_.find(std::span<const std::string>(values));
  if (it != children_.end()) return *it->second;
  return insertLocked(values);
}

template <class M>
M& Family<M>::insertLocked(std::vector<std::string> values) {
  auto [it, inserted] = children_.emplace(std::move(values), makeChild<M>(buckets_));
  return *it->second;
}

template <class M>
void Family<M>::renderSamples(std::string& out) const {
  std::lock_guard lock(mu_);
  for (const auto& [values, child] : children_) {
    if constexpr (std::is_same_v<M, Histogram>) {
      std::vector<uint64_t> counts = child->bucketCounts();
      uint64_t cumulative = 0;
      for (size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        std::string le = "le=\"";
        le += i < child->upperBounds().size() ? formatValue(child->upperBounds()[i]) : "+Inf";
        le.push_back('"');
        renderSample(out, "_bucket", values, le, static_cast<double>(cumulative));
      }
      renderSample(out, "_sum", values, {}, child->sum());
      renderSample(out, "_count", values, {}, static_cast<double>(cumulative));
    } else {
      renderSample(out, "", values, {}, child->value());
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

uint64_t CallbackFamily::add(Fn fn) {
  std::lock_guard lock(mu_);
  uint64_t id = nextId_++;
  fns_.emplace(id, std::move(fn));
  return id;
}

void CallbackFamily::remove(uint64_t id) {
  std::lock_guard lock(mu_);
  fns_.erase(id);
}

void CallbackFamily::renderSamples(std::string& out) const {
  // Under the lock so that a callback's owner, whose handle's destructor waits here, outlives it.
  std::lock_guard lock(mu_);
  for (const auto& [id, fn] : fns_) {
    for (const Sample& s : fn()) renderSample(out, "", s.labelValues, {}, s.value);
  }
}

CallbackHandle& CallbackHandle::operator=(CallbackHandle&& other) noexcept {
  if (this != &other) {
    reset();
    family_ = std::exchange(other.family_, nullptr);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void CallbackHandle::reset() {
  if (family_) family_->remove(id_);
  family_ = nullptr;
}

// ---- registry ----

CounterVec& Registry::counterVec(const std::string& name, const std::string& help,
                                 std::vector<std::string> labelNames) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    auto* f = dynamic_cast<CounterVec*>(it->second.get());
    if (!f || f->labelNames() != labelNames) {
      throw std::logic_error("metric " + name + " registered twice with different shapes");
    }
    return *f;
  }
  auto f = std::make_unique<CounterVec>(name, help, Type::kCounter, std::move(labelNames));
  return static_cast<CounterVec&>(*families_.emplace(name, std::move(f)).first->second);
}

GaugeVec& Registry::gaugeVec(const std::string& name, const std::string& help,
                             std::vector<std::string> labelNames) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    auto* f = dynamic_cast<GaugeVec*>(it->second.get());
    if (!f || f->labelNames() != labelNames) {
      throw std::logic_error("metric " + name + " registered twice with different shapes");
    }
    return *f;
  }
  auto f = std::make_unique<GaugeVec>(name, help, Type::kGauge, std::move(labelNames));
  return static_cast<GaugeVec&>(*families_.emplace(name, std::move(f)).first->second);
}

HistogramVec& Registry::histogramVec(const std::string& name, const std::string& help,
                                     std::vector<std::string> labelNames,
                                     std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    auto* f = dynamic_cast<HistogramVec*>(it->second.get());
    if (!f || f->labelNames() != labelNames) {
      throw std::logic_error("metric " + name + " registered twice with different shapes");
    }
    return *f;
  }
  auto f = std::make_unique<HistogramVec>(name, help, Type::kHistogram, std::move(labelNames),
                                          std::move(buckets));
  return static_cast<HistogramVec&>(*families_.emplace(name, std::move(f)).first->second);
}

Counter& Registry::counter(const std::string& name, const std::string& help) {
  return counterVec(name, help, {}).with(std::span<const std::string_view>());
}

Gauge& Registry::gauge(const std::string& name, const std::string& help) {
  return gaugeVec(name, help, {}).with(std::span<const std::string_view>());
}

Histogram& Registry::histogram(const std::string& name, const std::string& help,
                               std::vector<double> buckets) {
  return histogramVec(name, help, {}, std::move(buckets)).with(std::span<const std::string_view>());
}

CallbackHandle Registry::callback(const std::string& name, const std::string& help, Type type,
                                  std::vector<std::string> labelNames, CallbackFamily::Fn fn) {
  CallbackFamily* family = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = families_.find(name);
    if (it == families_.end()) {
      it = families_.emplace(name, std::make_unique<CallbackFamily>(name, help, type, labelNames))
               .first;
    }
    family = dynamic_cast<CallbackFamily*>(it->second.get());
    if (!family || family->type() != type || family->labelNames() != labelNames) {
      throw std::logic_error("metric " + name + " registered twice with different shapes");
    }
  }
  return CallbackHandle(family, family->add(std::move(fn)));
}

CallbackHandle Registry::gaugeCallback(const std::string& name, const std::string& help,
                                       std::function<double()> fn) {
  return callback(name, help, Type::kGauge, {}, [fn = std::move(fn)] {
    return std::vector<Sample>{{{}, fn()}};
  });
}

std::string Registry::exposition() const {
  // Families are never removed: render outside the registry's lock, so a callback may register
  // metrics (or a component start) while a scrape runs.
  std::vector<const Collector*> families;
  {
    std::lock_guard lock(mu_);
    families.reserve(families_.size());
    for (const auto& [name, family] : families_) families.push_back(family.get());
  }
  std::string out;
  for (const Collector* family : families) family->render(out);
  return out;
}

// ---- process metrics ----

namespace {

// Fields of /proc/self/stat after the command (which may hold spaces and parentheses).
std::vector<std::string> procSelfStat() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> fields;
  size_t close = line.rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 2));
  std::string f;
  while (rest >> f) fields.push_back(f);
  return fields;  // fields[0] is the state (field 3 of proc(5))
}

double statField(int procField) {
  auto f = procSelfStat();
  size_t i = static_cast<size_t>(procField - 3);
  return i < f.size() ? std::strtod(f[i].c_str(), nullptr) : 0;
}

double bootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> value;
      return value;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

double openFds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return 0;
  double n = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n - 1;  // the directory stream's own descriptor
}

}  // namespace

void registerProcessMetrics(Registry& registry) {
  // The callbacks read only /proc: their handles are never destroyed (not even at exit, when a
  // test's registry is gone), so they stay registered as long as the registry.
  static std::mutex mu;
  static auto* handles = new std::map<Registry*, std::vector<CallbackHandle>>();
  std::lock_guard lock(mu);
  auto& h = (*handles)[&registry];
  if (!h.empty()) return;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double pageSize = static_cast<double>(::sysconf(_SC_PAGESIZE));
  auto gauge = [&](const char* name, const char* help, std::function<double()> fn) {
    h.push_back(registry.gaugeCallback(name, help, std::move(fn)));
  };
  h.push_back(registry.callback(
      "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
      Type::kCounter, {}, [ticks] {
        auto f = procSelfStat();
        double t = f.size() > 12
                       ? std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)
                       : 0;
        return std::vector<Sample>{{{}, t / ticks}};
      }));
  gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
        [pageSize] { return statField(24) * pageSize; });
  gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.",
        [] { return statField(23); });
  const double start = bootTimeSeconds() + statField(22) / ticks;
  gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
        [start] { return start; });
  gauge("process_open_fds", "Number of open file descriptors.", openFds);
  gauge("process_max_fds", "Maximum number of open file descriptors.", [] {
    rlimit r{};
    return ::getrlimit(RLIMIT_NOFILE, &r) == 0 ? static_cast<double>(r.rlim_cur) : 0.0;
  });
  gauge("process_threads", "Number of OS threads in the process.", [] { return statField(20); });
}

Registry& defaultRegistry() {
  static Registry* registry = [] {
    auto* r = new Registry();  // never destroyed: threads may record until exit
    registerProcessMetrics(*r);
    return r;
  }();
  return *registry;
}

// ---- HTTP ----

http::Response metricsResponse(const Registry& registry) {
  http::Response r;
  r.status = 200;
  r.headers = {{"Content-Type", kExpositionContentType}};
  r.body = registry.exposition();
  return r;
}

void serveComponentEndpoints(const Registry& registry, const http::Request& req,
                             http::ResponseWriter& w) {
  const std::string& p = req.path;
  if (p != "/metrics" && p != "/healthz" && p != "/livez" && p != "/readyz") {
    return w.send(
        http::Response::error(Status::NotFoundMessage("404 page not found: " + req.path)));
  }
  if (req.method != "GET" && req.method != "HEAD") {
    return w.send(http::Response::error(Status::MethodNotAllowed("use GET")));
  }
  if (p == "/metrics") return w.send(metricsResponse(registry));
  w.send(http::Response::text(200, "ok"));
}

}  // namespace minik8s::metrics
