#include "monitoring/custom_metrics_api.h"

#include <cmath>

#include "api/object_meta.h"
#include "api/quantity.h"
#include "api/scheme.h"
#include "api/selector.h"
#include "common/json_pointer.h"
#include "common/strings.h"
#include "common/time_util.h"

namespace minik8s::monitoring {

namespace {

constexpr const char* kGroup = "custom.metrics.k8s.io";

bool isMetricName(const std::string& m) {
  if (m.empty() || m.size() > 200) return false;
  for (size_t i = 0; i < m.size(); ++i) {
    const char c = m[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// A PromQL string literal of a Kubernetes name (DNS characters only; anything else refused).
Result<std::string> nameLiteral(const std::string& name) {
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_';
    if (!ok) return Status::BadRequest("invalid name \"" + name + "\"");
  }
  return "\"" + name + "\"";
}

// pod=~"a|b\\.c": the names as an anchored alternation, dots escaped.
std::string podRegex(const std::vector<std::string>& pods) {
  std::string out;
  for (const auto& p : pods) {
    if (!out.empty()) out += '|';
    for (char c : p) {
      if (c == '.') out += "\\\\";
      out += c;
    }
  }
  return out;
}

std::string quantityOf(double v) {
  if (!std::isfinite(v)) v = 0;
  return api::Quantity::fromMilli(static_cast<int64_t>(std::llround(v * 1000))).toString();
}

double sampleValue(const json& sample) {
  try {
    return std::stod(sample.at("value").at(1).get<std::string>());
  } catch (...) {
    return 0;
  }
}

Status notFoundMetric(const std::string& metric, const std::string& what) {
  return Status::NotFoundMessage("the custom metric \"" + metric + "\" is not available for " +
                                 what + ": Prometheus has no series " + metric + "_total or " +
                                 metric + " for it");
}

// Runs `sum by (by) (rate(m_total{sel}[1m]))`, else `sum by (by) (m{sel})`.
Result<json> counterOrGauge(PrometheusClient& prometheus, const std::string& metric,
                            const std::string& selector, const std::string& by) {
  const std::string group = by.empty() ? "sum" : "sum by (" + by + ")";
  auto rate = prometheus.query(group + " (rate(" + metric + "_total{" + selector + "}[1m]))");
  if (!rate.ok()) return rate.status();
  if (!rate->empty()) return rate;
  return prometheus.query(group + " (" + metric + "{" + selector + "})");
}

json metricValue(const std::string& version, const json& describedObject, const std::string& metric,
                 double value, const std::string& timestamp) {
  json item = {{"describedObject", describedObject},
               {"timestamp", timestamp},
               {"windowSeconds", 60},
               {"value", quantityOf(value)}};
  if (version == "v1beta1") {
    item["metricName"] = metric;
  } else {
    item["metric"] = {{"name", metric}};
  }
  return item;
}

json valueList(const std::string& version, json items) {
  return {{"kind", "MetricValueList"},
          {"apiVersion", std::string(kGroup) + "/" + version},
          {"metadata", json::object()},
          {"items", std::move(items)}};
}

void sendJson(http::ResponseWriter& w, const json& body) {
  w.send(http::Response::json(200, body));
}

}  // namespace

Result<std::map<std::string, double>> CustomMetricsApi::podValues(
    const std::string& ns, const std::vector<std::string>& pods, const std::string& metric) const {
  if (!isMetricName(metric)) return Status::BadRequest("invalid metric name \"" + metric + "\"");
  auto nsLit = nameLiteral(ns);
  if (!nsLit.ok()) return nsLit.status();
  for (const auto& p : pods)
    if (auto ok = nameLiteral(p); !ok.ok()) return ok.status();
  std::map<std::string, double> out;
  if (pods.empty()) return out;
  auto result = counterOrGauge(*prometheus_, metric,
                               "namespace=" + *nsLit + ",pod=~\"" + podRegex(pods) + "\"", "pod");
  if (!result.ok()) return result.status();
  for (const auto& s : *result) {
    const std::string pod = valueAt(s, "/metric/pod", std::string());
    if (!pod.empty()) out[pod] = sampleValue(s);
  }
  return out;
}

Result<json> CustomMetricsApi::podMetrics(const std::string& version, const std::string& ns,
                                          const std::string& name, const std::string& metric,
                                          const std::string& labelSelector) const {
  std::vector<std::string> names;
  if (name == "*") {
    auto selector = api::LabelSelector::parse(labelSelector);
    if (!selector.ok()) return Status::BadRequest("labelSelector: " + selector.status().message());
    for (const auto& p : cluster_->podsIn(ns)) {
      if (selector->matches(valueAt(p, "/metadata/labels", json()))) {
        names.push_back(api::nameOf(p));
      }
    }
  } else {
    names.push_back(name);
  }
  auto values = podValues(ns, names, metric);
  if (!values.ok()) return values.status();
  if (values->empty() && !names.empty()) {
    return notFoundMetric(metric, name == "*" ? "the pods of " + ns : "pod " + ns + "/" + name);
  }
  const std::string now = formatRfc3339(Clock::now());
  json items = json::array();
  for (const auto& [pod, v] : *values) {
    items.push_back(metricValue(
        version, {{"kind", "Pod"}, {"namespace", ns}, {"name", pod}, {"apiVersion", "/v1"}}, metric,
        v, now));
  }
  return valueList(version, std::move(items));
}

Result<json> CustomMetricsApi::objectMetric(const std::string& version, const std::string& ns,
                                            const std::string& resource, const std::string& name,
                                            const std::string& metric) const {
  if (!isMetricName(metric)) return Status::BadRequest("invalid metric name \"" + metric + "\"");
  // The resource as the scheme knows it (any group): its kind, group and singular.
  const api::ResourceInfo* info = nullptr;
  const auto all = api::Scheme::builtin().resources();
  for (const auto& r : all) {
    if (r.plural == resource && (!info || r.version == r.storageVersion)) info = &r;
  }
  if (!info) return Status::NotFoundMessage("the server has no resource \"" + resource + "\"");
  const json described = {
      {"kind", info->kind}, {"namespace", ns}, {"name", name}, {"apiVersion", info->apiVersion()}};
  auto nsLit = nameLiteral(ns), nameLit = nameLiteral(name);
  if (!nsLit.ok()) return nsLit.status();
  if (!nameLit.ok()) return nameLit.status();
  double value = 0;
  bool found = false;
  if (resource == "deployments" || resource == "replicasets" || resource == "statefulsets" ||
      resource == "daemonsets") {
    // A workload: the sum over the pods its selector matches.
    auto obj = cluster_->object(info->group, info->version, resource, ns, name);
    if (!obj.ok()) return obj.status();
    auto selector = api::LabelSelector::fromJson(valueAt(*obj, "/spec/selector", json::object()));
    if (!selector.ok()) return selector.status();
    std::vector<std::string> pods;
    for (const auto& p : cluster_->podsIn(ns)) {
      if (selector->matches(valueAt(p, "/metadata/labels", json()))) pods.push_back(api::nameOf(p));
    }
    auto values = podValues(ns, pods, metric);
    if (!values.ok()) return values.status();
    for (const auto& [pod, v] : *values) value += v;
    found = !values->empty();
  } else {
    auto result = counterOrGauge(*prometheus_, metric,
                                 "namespace=" + *nsLit + "," + info->singular + "=" + *nameLit, "");
    if (!result.ok()) return result.status();
    if (!result->empty()) {
      value = sampleValue((*result)[0]);
      found = true;
    }
  }
  if (!found) return notFoundMetric(metric, resource + " " + ns + "/" + name);
  return metricValue(version, described, metric, value, formatRfc3339(Clock::now()));
}

Result<json> CustomMetricsApi::resourceList(const std::string& version) const {
  auto names = prometheus_->query("count by (__name__) ({namespace!=\"\",pod!=\"\"})");
  json resources = json::array();
  std::set<std::string> seen;
  if (names.ok()) {
    for (const auto& s : *names) {
      std::string n = valueAt(s, "/metric/__name__", std::string());
      if (n.size() > 6 && n.compare(n.size() - 6, 6, "_total") == 0) n.resize(n.size() - 6);
      if (n.empty() || !seen.insert(n).second) continue;
      resources.push_back({{"name", "pods/" + n},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"kind", "MetricValueList"},
                           {"verbs", json::array({"get"})}});
    }
  }
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", std::string(kGroup) + "/" + version},
              {"resources", std::move(resources)}};
}

void CustomMetricsApi::serve(const http::Request& req, http::ResponseWriter& w) const {
  if (req.method != "GET") {
    return w.send(http::Response::error(Status::MethodNotAllowed("custom metrics: use GET")));
  }
  const std::vector<std::string> parts =
      splitNonEmpty(std::string_view(req.path).substr(std::string_view(kPrefix).size()), '/');
  if (parts.empty()) {
    json v2 = {{"groupVersion", std::string(kGroup) + "/v1beta2"}, {"version", "v1beta2"}};
    json v1 = {{"groupVersion", std::string(kGroup) + "/v1beta1"}, {"version", "v1beta1"}};
    return sendJson(w, {{"kind", "APIGroup"},
                        {"apiVersion", "v1"},
                        {"name", kGroup},
                        {"versions", json::array({v2, v1})},
                        {"preferredVersion", v2}});
  }
  const std::string& version = parts[0];
  if (version != "v1beta2" && version != "v1beta1") {
    return w.send(http::Response::error(
        Status::NotFoundMessage("custom.metrics.k8s.io has versions v1beta2 and v1beta1")));
  }
  Result<json> out = Status::NotFoundMessage("the custom metrics API serves " +
                                             std::string(kPrefix) + "/" + version +
                                             "/namespaces/NS/pods/NAME|*/METRIC and "
                                             "/namespaces/NS/RESOURCE/NAME/METRIC");
  if (parts.size() == 1) {
    out = resourceList(version);
  } else if (parts.size() == 6 && parts[1] == "namespaces") {
    if (!cluster_->ensureSynced(std::chrono::seconds(5))) {
      return w.send(http::Response::error(
          Status::Unavailable("custom metrics: the cluster's objects are still loading")));
    }
    if (parts[3] == "pods") {
      out = podMetrics(version, parts[2], parts[4], parts[5],
                       req.param("labelSelector").value_or(""));
    } else {
      out = objectMetric(version, parts[2], parts[3], parts[4], parts[5]);
    }
  }
  if (!out.ok()) return w.send(http::Response::error(out.status()));
  sendJson(w, *out);
}

Result<std::string> prometheusUrlFromCluster(const ClusterCache& cache) {
  if (!cache.ensureSynced(std::chrono::seconds(5)))
    return Status::Unavailable("the cluster's objects are still loading");
  auto svc = cache.service("monitoring", "prometheus");
  if (!svc) return Status::Unavailable("no Service monitoring/prometheus (is monitoring on?)");
  int nodePort = 0;
  for (const auto& p : valueAt(*svc, "/spec/ports", json::array())) {
    if (p.contains("nodePort") && p["nodePort"].is_number_integer()) {
      nodePort = p["nodePort"].get<int>();
      break;
    }
  }
  if (nodePort == 0) return Status::Unavailable("Service monitoring/prometheus has no nodePort");
  for (const auto& node : cache.nodes()) {
    bool ready = false;
    for (const auto& c : valueAt(node, "/status/conditions", json::array()))
      if (c.value("type", "") == "Ready" && c.value("status", "") == "True") ready = true;
    if (!ready) continue;
    for (const auto& a : valueAt(node, "/status/addresses", json::array())) {
      if (a.value("type", "") == "InternalIP" && a.contains("address") &&
          a["address"].is_string()) {
        return "http://" + a["address"].get<std::string>() + ":" + std::to_string(nodePort);
      }
    }
  }
  return Status::Unavailable("no Ready node to reach Prometheus' NodePort on");
}

}  // namespace minik8s::monitoring
