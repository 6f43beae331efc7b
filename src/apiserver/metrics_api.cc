#include "apiserver/metrics_api.h"

#include "api/selector.h"
#include "common/http_client.h"
#include "common/json_pointer.h"
#include "common/time_util.h"

namespace minik8s::apiserver {

namespace {

const char* kGroupVersion = "metrics.k8s.io/v1beta1";
constexpr auto kMinRateInterval = std::chrono::seconds(1);
// When no reading is kMinRateInterval old (two queries in a row), a shorter window still gives a
// real rate; /proc/stat ticks every 10 ms, so 200 ms keeps the error near 5%.
constexpr auto kShortRateInterval = std::chrono::milliseconds(200);
constexpr auto kHistory = std::chrono::seconds(90);

}  // namespace

Result<json> fetchSummary(const NodeEndpoint& ep, const NodeProxyOptions& options) {
  auto r = requestAgent(ep, "GET", "/stats/summary", options);
  if (!r.ok()) return r.status();
  if (r->status != 200) {
    return Status::Unavailable("the agent at " + ep.host + " answered /stats/summary with " +
                               std::to_string(r->status));
  }
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return Status::Unavailable("the agent at " + ep.host + " sent bad JSON");
  return j;
}

namespace {

Result<json> fetchOverHttp(const NodeEndpoint& ep) { return fetchSummary(ep, {}); }

std::optional<uint64_t> optU64(const json& j, const json::json_pointer& p) {
  if (!j.contains(p) || !j.at(p).is_number()) return std::nullopt;
  return j.at(p).get<uint64_t>();
}

json usageJson(std::optional<uint64_t> cpu, std::optional<uint64_t> mem) {
  return {{"cpu", formatNanoCores(cpu.value_or(0))}, {"memory", formatBytes(mem.value_or(0))}};
}

json metadataFrom(const json& obj, bool namespaced) {
  json meta = {{"name", valueAt(obj, "/metadata/name", std::string())},
               {"creationTimestamp", formatRfc3339(Clock::now())}};
  if (namespaced) meta["namespace"] = valueAt(obj, "/metadata/namespace", std::string());
  if (obj.contains("/metadata/labels"_json_pointer)) meta["labels"] = obj["metadata"]["labels"];
  return meta;
}

std::vector<std::string> splitPath(const std::string& p) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string::npos) slash = p.size();
    if (slash > start) parts.push_back(p.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

json listOf(const std::string& kind, json items) {
  return {{"kind", kind},
          {"apiVersion", kGroupVersion},
          {"metadata", json::object()},
          {"items", std::move(items)}};
}

}  // namespace

std::optional<uint64_t> cpuRate(const CpuReading& older, const CpuReading& newer) {
  auto dt = newer.time - older.time;
  if (dt < kMinRateInterval || newer.coreNanoSeconds < older.coreNanoSeconds) return std::nullopt;
  long double rate = static_cast<long double>(newer.coreNanoSeconds - older.coreNanoSeconds) *
                     1e9L / static_cast<long double>(dt.count());
  return static_cast<uint64_t>(rate + 0.5L);
}

std::string formatNanoCores(uint64_t nanoCores) { return std::to_string(nanoCores) + "n"; }

std::string formatBytes(uint64_t bytes) {
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + "Ki";
  return std::to_string(bytes);
}

MetricsApi::MetricsApi(Registry& registry, SummaryFetcher fetcher)
    : registry_(registry), fetcher_(fetcher ? std::move(fetcher) : fetchOverHttp) {}

json MetricsApi::legacyGroup() {
  json v = {{"groupVersion", kGroupVersion}, {"version", "v1beta1"}};
  return {{"name", "metrics.k8s.io"}, {"versions", {v}}, {"preferredVersion", v}};
}

json MetricsApi::resourceList() {
  auto res = [](const char* name, const char* kind, bool namespaced) {
    return json{{"name", name},
                {"singularName", ""},
                {"namespaced", namespaced},
                {"kind", kind},
                {"verbs", {"get", "list"}}};
  };
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", kGroupVersion},
          {"resources", {res("nodes", "NodeMetrics", false), res("pods", "PodMetrics", true)}}};
}

json MetricsApi::aggregatedGroup() {
  auto res = [](const char* name, const char* singular, const char* kind, bool namespaced) {
    return json{
        {"resource", name},
        {"responseKind", {{"group", "metrics.k8s.io"}, {"version", "v1beta1"}, {"kind", kind}}},
        {"scope", namespaced ? "Namespaced" : "Cluster"},
        {"singularResource", singular},
        {"verbs", {"get", "list"}}};
  };
  return {
      {"metadata", {{"name", "metrics.k8s.io"}, {"creationTimestamp", nullptr}}},
      {"versions",
       {{{"version", "v1beta1"},
         {"freshness", "Current"},
         {"resources",
          {res("nodes", "node", "NodeMetrics", false), res("pods", "pod", "PodMetrics", true)}}}}}};
}

MetricsApi::Usage MetricsApi::usageOf(const std::string& key, const json& stats) {
  Usage u;
  u.workingSet = optU64(stats, "/memory/workingSetBytes"_json_pointer);
  std::string time = valueAt(stats, "/cpu/time", std::string());
  auto parsed = parseRfc3339(time);
  Clock::time_point t = parsed ? *parsed : Clock::now();
  u.timestamp = formatRfc3339(t);
  auto cumulative = optU64(stats, "/cpu/usageCoreNanoSeconds"_json_pointer);
  auto reported = optU64(stats, "/cpu/usageNanoCores"_json_pointer);
  if (!cumulative) {
    u.nanoCores = reported;
    return u;
  }
  CpuReading now{std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()),
                 *cumulative};
  std::lock_guard lock(mu_);
  auto& h = history_[key];
  while (!h.empty() && (now.time - h.front().time > kHistory ||
                        h.front().coreNanoSeconds > now.coreNanoSeconds)) {
    h.pop_front();  // too old, or from before a counter reset (restarted container)
  }
  // The newest reading at least kMinRateInterval older than this one.
  std::optional<CpuReading> base;
  for (const auto& r : h) {
    if (now.time - r.time >= kMinRateInterval) base = r;
  }
  if (base) {
    u.nanoCores = cpuRate(*base, now);
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time - base->time).count();
    u.window = std::to_string(std::max<int64_t>(secs, 1)) + "s";
  } else if (reported) {
    u.nanoCores = reported;
  } else if (!h.empty() && now.time - h.front().time >= kShortRateInterval) {
    // The node's own figures carry no rate: the oldest recent reading gives one.
    const CpuReading& oldest = h.front();
    const long double cpu = static_cast<long double>(now.coreNanoSeconds - oldest.coreNanoSeconds);
    u.nanoCores = static_cast<uint64_t>(
        cpu * 1e9L / static_cast<long double>((now.time - oldest.time).count()) + 0.5L);
    u.window = "1s";
  }
  if (h.empty() || h.back().time < now.time) h.push_back(now);
  return u;
}

Result<json> MetricsApi::summaryOf(const std::string& nodeName) {
  auto ep = nodeAgentEndpoint(registry_, nodeName);
  if (!ep.ok()) return ep.status();
  return fetcher_(*ep);
}

Result<json> MetricsApi::nodeMetrics(const json& node) {
  std::string name = valueAt(node, "/metadata/name", std::string());
  auto ep = nodeAgentEndpoint(node);
  if (!ep.ok()) return ep.status();
  auto summary = fetcher_(*ep);
  if (!summary.ok()) return summary.status();
  Usage u = usageOf("node/" + name, summary->value("node", json::object()));
  return json{{"kind", "NodeMetrics"},
              {"apiVersion", kGroupVersion},
              {"metadata", metadataFrom(node, false)},
              {"timestamp", u.timestamp},
              {"window", u.window},
              {"usage", usageJson(u.nanoCores, u.workingSet)}};
}

Result<json> MetricsApi::listPodMetrics(const http::Request& req, const std::string& ns,
                                        const std::string& name) {
  const auto* pods = registry_.scheme().byResource("", "v1", "pods");
  if (!pods) return Status::Internal("the scheme has no pods resource");
  std::vector<json> selected;
  if (!name.empty()) {
    auto pod = registry_.get(*pods, ns, name);
    if (!pod.ok()) {
      return Status::NotFound("podmetrics.metrics.k8s.io", name);
    }
    selected.push_back(*pod);
  } else {
    ListOptions opts;
    opts.labelSelector = req.param("labelSelector").value_or("");
    opts.fieldSelector = req.param("fieldSelector").value_or("");
    auto page = registry_.list(*pods, ns, opts);
    if (!page.ok()) return page.status();
    selected = std::move(page->items);
  }
  std::map<std::string, std::optional<json>> summaries;  // by node; nullopt = unreachable
  json items = json::array();
  for (const auto& pod : selected) {
    std::string node = valueAt(pod, "/spec/nodeName", std::string());
    if (node.empty()) continue;
    if (!summaries.count(node)) {
      auto s = summaryOf(node);
      summaries[node] = s.ok() ? std::optional<json>(*s) : std::nullopt;
    }
    if (!summaries[node]) continue;
    std::string podNs = valueAt(pod, "/metadata/namespace", std::string());
    std::string podName = valueAt(pod, "/metadata/name", std::string());
    for (const auto& ps : summaries[node]->value("pods", json::array())) {
      if (valueAt(ps, "/podRef/name", std::string()) != podName ||
          valueAt(ps, "/podRef/namespace", std::string()) != podNs) {
        continue;
      }
      json containers = json::array();
      std::string timestamp = formatRfc3339(Clock::now()), window = "10s";
      for (const auto& c : ps.value("containers", json::array())) {
        std::string cname = c.value("name", std::string());
        Usage u = usageOf(podNs + "/" + podName + "/" + cname, c);
        timestamp = u.timestamp;
        window = u.window;
        containers.push_back({{"name", cname}, {"usage", usageJson(u.nanoCores, u.workingSet)}});
      }
      items.push_back({{"kind", "PodMetrics"},
                       {"apiVersion", kGroupVersion},
                       {"metadata", metadataFrom(pod, true)},
                       {"timestamp", timestamp},
                       {"window", window},
                       {"containers", containers}});
      break;
    }
  }
  if (!name.empty()) {
    if (items.empty()) return Status::NotFound("podmetrics.metrics.k8s.io", name);
    return items[0];
  }
  return listOf("PodMetricsList", std::move(items));
}

bool MetricsApi::handle(const http::Request& req, http::ResponseWriter& w) {
  auto parts = splitPath(req.path);
  if (parts.size() < 2 || parts[0] != "apis" || parts[1] != "metrics.k8s.io") return false;
  auto reply = [&](const Result<json>& r) {
    w.send(r.ok() ? http::Response::json(200, *r) : http::Response::error(r.status()));
  };
  if (req.method != "GET") {
    w.send(http::Response::error(Status::MethodNotAllowed("the metrics API is read-only")));
    return true;
  }
  if (parts.size() == 2) {
    json g = legacyGroup();
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    reply(g);
    return true;
  }
  if (parts[2] != "v1beta1") {
    reply(Status::NotFoundMessage("the server could not find the requested resource"));
    return true;
  }
  if (parts.size() == 3) {
    reply(resourceList());
    return true;
  }
  std::vector<std::string> rest(parts.begin() + 3, parts.end());
  if (rest[0] == "nodes" && rest.size() <= 2) {
    const auto* nodes = registry_.scheme().byResource("", "v1", "nodes");
    if (!nodes) {
      reply(Status::Internal("the scheme has no nodes resource"));
      return true;
    }
    if (rest.size() == 2) {
      auto node = registry_.get(*nodes, "", rest[1]);
      if (!node.ok()) {
        reply(Status::NotFound("nodemetrics.metrics.k8s.io", rest[1]));
        return true;
      }
      auto m = nodeMetrics(*node);
      reply(m.ok() ? m : Result<json>(Status::NotFound("nodemetrics.metrics.k8s.io", rest[1])));
      return true;
    }
    ListOptions opts;
    opts.labelSelector = req.param("labelSelector").value_or("");
    auto page = registry_.list(*nodes, "", opts);
    if (!page.ok()) {
      reply(page.status());
      return true;
    }
    json items = json::array();
    for (const auto& n : page->items) {
      auto m = nodeMetrics(n);
      if (m.ok()) items.push_back(*m);
    }
    reply(listOf("NodeMetricsList", std::move(items)));
    return true;
  }
  if (rest[0] == "pods" && rest.size() == 1) {
    reply(listPodMetrics(req, "", ""));
    return true;
  }
  if (rest[0] == "namespaces" && rest.size() >= 3 && rest[2] == "pods" && rest.size() <= 4) {
    reply(listPodMetrics(req, rest[1], rest.size() == 4 ? rest[3] : ""));
    return true;
  }
  reply(Status::NotFoundMessage("the server could not find the requested resource"));
  return true;
}

}  // namespace minik8s::apiserver
