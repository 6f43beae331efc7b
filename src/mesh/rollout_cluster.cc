#include "mesh/rollout_cluster.h"

#include <fmt/core.h>

#include <algorithm>
#include <future>
#include <regex>

#include "common/json_pointer.h"
#include "common/tls.h"
#include "common/websocket.h"
#include "mesh/config_watcher.h"

namespace minik8s::mesh {

namespace {

namespace res = client::resources;

std::string textAt(const json& obj, const char* pointer) {
  json::json_pointer p(pointer);
  return obj.contains(p) && obj.at(p).is_string() ? obj.at(p).get<std::string>() : "";
}

// A label value: [A-Za-z0-9._-], starting and ending alphanumeric, at most 63.
bool isLabelValue(const std::string& v) {
  static const std::regex kLabel("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");
  return v.size() <= 63 && std::regex_match(v, kLabel);
}

bool selects(const json& selector, const json& labels) {
  if (!selector.is_object() || selector.empty() || !labels.is_object()) return false;
  for (const auto& [k, v] : selector.items()) {
    if (!labels.contains(k) || labels[k] != v) return false;
  }
  return true;
}

}  // namespace

std::string versionOfImage(const std::string& image) {
  std::string ref = image;
  if (size_t at = ref.find('@'); at != std::string::npos) ref = ref.substr(0, at);
  size_t colon = ref.rfind(':');
  if (colon == std::string::npos || ref.find('/', colon) != std::string::npos) return "";
  std::string tag = ref.substr(colon + 1);
  return isLabelValue(tag) && tag != "latest" ? tag : "";
}

Result<json> newVersionDeployment(const json& old, const std::string& name,
                                  const std::string& version, const std::string& image,
                                  const std::string& container) {
  json d = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}};
  d["metadata"] = {{"name", name}, {"namespace", textAt(old, "/metadata/namespace")}};
  if (old.contains("/metadata/labels"_json_pointer)) {
    d["metadata"]["labels"] = old.at("/metadata/labels"_json_pointer);
    if (d["metadata"]["labels"].contains("version")) d["metadata"]["labels"]["version"] = version;
  }
  d["metadata"]["annotations"] = {{"mesh.minik8s.io/rollout-from", textAt(old, "/metadata/name")}};
  d["spec"] = old.value("spec", json::object());
  d["spec"]["replicas"] = 0;
  json& spec = d["spec"];
  if (spec.contains("/selector/matchLabels/version"_json_pointer)) {
    spec["selector"]["matchLabels"]["version"] = version;
  }
  spec["template"]["metadata"]["labels"]["version"] = version;
  json& containers = spec["template"]["spec"]["containers"];
  if (!containers.is_array() || containers.empty()) {
    return Status::BadRequest("Deployment " + textAt(old, "/metadata/name") + " has no containers");
  }
  json* target = &containers[0];
  if (!container.empty()) {
    target = nullptr;
    for (auto& c : containers) {
      if (c.value("name", "") == container) target = &c;
    }
    if (target == nullptr) {
      return Status::BadRequest("--container: Deployment " + textAt(old, "/metadata/name") +
                                " has no container named " + container);
    }
  }
  (*target)["image"] = image;
  return d;
}

json rolloutDestinationRule(const std::string& ns, const std::string& service,
                            const std::vector<std::string>& versions) {
  json subsets = json::array();
  for (const auto& v : versions) subsets.push_back({{"name", v}, {"labels", {{"version", v}}}});
  return {{"apiVersion", "networking.istio.io/v1"},
          {"kind", "DestinationRule"},
          {"metadata",
           {{"name", service},
            {"namespace", ns},
            {"labels", {{"app.kubernetes.io/managed-by", "minik8s-mesh-rollout"}}}}},
          {"spec", {{"host", service}, {"subsets", subsets}}}};
}

json rolloutVirtualService(const std::string& ns, const std::string& service,
                           const std::vector<std::pair<std::string, int>>& weights) {
  json route = json::array();
  for (const auto& [v, w] : weights) {
    route.push_back({{"destination", {{"host", service}, {"subset", v}}}, {"weight", w}});
  }
  return {{"apiVersion", "networking.istio.io/v1"},
          {"kind", "VirtualService"},
          {"metadata",
           {{"name", service},
            {"namespace", ns},
            {"labels", {{"app.kubernetes.io/managed-by", "minik8s-mesh-rollout"}}}}},
          {"spec", {{"hosts", {service}}, {"http", {{{"route", route}}}}}}};
}

std::map<std::string, RequestCounts> parseDestinationCounts(const std::string& text,
                                                            const std::string& serviceKey) {
  // mesh_destination_requests_total{destination_service="ns/a",destination_version="v2",
  // response_code="500"} 3
  static const std::regex kLine(
      R"re(^mesh_destination_requests_total\{destination_service="([^"]*)",destination_version="([^"]*)",response_code="([0-9]+)"\} ([0-9.e+]+))re");
  std::map<std::string, RequestCounts> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (!std::regex_search(line, m, kLine) || m[1] != serviceKey) continue;
    const auto n = static_cast<int64_t>(std::stod(m[4]));
    RequestCounts& c = out[m[2]];
    c.requests += n;
    if (m[3].str()[0] == '5') c.errors += n;
  }
  return out;
}

// --- ApiRolloutTarget ---------------------------------------------------------------------

ApiRolloutTarget::ApiRolloutTarget(client::RestClient& rest, RolloutRequest request)
    : rest_(rest), req_(std::move(request)) {}

Status ApiRolloutTarget::resolve() {
  auto svc = rest_.get(res::kServices, req_.ns, req_.service);
  if (!svc.ok()) return svc.status();
  const json selector = valueAt(*svc, "/spec/selector", json::object());
  if (!selector.is_object() || selector.empty()) {
    return Status::BadRequest("service " + req_.ns + "/" + req_.service +
                              " has no selector: nothing to roll out");
  }
  newVersion_ = req_.version.empty() ? versionOfImage(req_.image) : req_.version;
  if (newVersion_.empty()) {
    return Status::BadRequest("--image " + req_.image +
                              ": no tag to name the new version by; give --version");
  }
  if (!isLabelValue(newVersion_)) {
    return Status::BadRequest("--version: \"" + newVersion_ + "\" is not a valid label value");
  }
  auto list = rest_.list(res::kDeployments, req_.ns);
  if (!list.ok()) return list.status();
  std::vector<json> current;
  for (const auto& d : list->value("items", json::array())) {
    if (!selects(selector, valueAt(d, "/spec/template/metadata/labels", json()))) {
      continue;
    }
    if (valueAt(d, "/spec/replicas", 1) == 0) continue;  // a leftover at zero
    current.push_back(d);
  }
  if (current.size() != 1) {
    std::string names;
    for (const auto& d : current)
      names += (names.empty() ? "" : ", ") + textAt(d, "/metadata/name");
    return Status::BadRequest(fmt::format(
        "service {}/{}: a rollout starts from one Deployment whose pods the service selects; "
        "found {}{}",
        req_.ns, req_.service, current.size(), names.empty() ? "" : " (" + names + ")"));
  }
  old_ = current[0];
  oldName_ = textAt(old_, "/metadata/name");
  oldVersion_ = textAt(old_, "/spec/template/metadata/labels/version");
  if (oldVersion_.empty()) {
    return Status::BadRequest("Deployment " + oldName_ +
                              ": its pods have no `version` label, which the rollout's subsets "
                              "select by");
  }
  if (oldVersion_ == newVersion_) {
    return Status::BadRequest("Deployment " + oldName_ + " already runs version " + newVersion_ +
                              "; give another --version");
  }
  const std::string suffix = "-" + oldVersion_;
  newName_ = oldName_.size() > suffix.size() &&
                     oldName_.compare(oldName_.size() - suffix.size(), suffix.size(), suffix) == 0
                 ? oldName_.substr(0, oldName_.size() - suffix.size()) + "-" + newVersion_
                 : req_.service + "-" + newVersion_;
  auto existing = rest_.get(res::kDeployments, req_.ns, newName_);
  if (existing.ok()) {
    return Status::AlreadyExists("deployments.apps", newName_);
  }
  return Status::Ok();
}

void ApiRolloutTarget::restore(std::string oldDeployment, std::string newDeployment,
                               std::string oldVersion, std::string newVersion) {
  oldName_ = std::move(oldDeployment);
  newName_ = std::move(newDeployment);
  oldVersion_ = std::move(oldVersion);
  newVersion_ = std::move(newVersion);
  old_ = json();
}

Status ApiRolloutTarget::loadOld() {
  if (old_.is_object()) return Status::Ok();
  auto got = rest_.get(res::kDeployments, req_.ns, oldName_);
  if (!got.ok()) return got.status();
  old_ = *got;
  return Status::Ok();
}

Result<int> ApiRolloutTarget::oldReplicas() {
  if (Status s = loadOld(); !s.ok()) return s;
  return static_cast<int>(valueAt(old_, "/spec/replicas", 1));
}

Status ApiRolloutTarget::apply(const client::Resource& r, const json& obj) {
  const std::string name = textAt(obj, "/metadata/name");
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto got = rest_.get(r, req_.ns, name);
    if (!got.ok() && got.status().code() != 404) return got.status();
    if (!got.ok()) {
      auto created = rest_.create(r, req_.ns, obj);
      if (created.ok()) return Status::Ok();
      if (created.status().code() == 409) continue;
      return created.status();
    }
    json next = obj;
    next["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
    // A DestinationRule's trafficPolicy (load balancing, outlier detection) is the user's.
    if (r.plural == kDestinationRules.plural && got->contains("/spec/trafficPolicy"_json_pointer)) {
      next["spec"]["trafficPolicy"] = got->at("/spec/trafficPolicy"_json_pointer);
    }
    auto updated = rest_.update(r, next);
    if (updated.ok()) return Status::Ok();
    if (updated.status().code() != 409) return updated.status();
  }
  return Status::ConflictMessage("kept conflicting on " + r.plural + " " + name);
}

Status ApiRolloutTarget::prepare() {
  Status s = apply(kDestinationRules,
                   rolloutDestinationRule(req_.ns, req_.service, {oldVersion_, newVersion_}));
  if (s.ok()) {
    s = apply(kVirtualServices,
              rolloutVirtualService(req_.ns, req_.service, {{oldVersion_, 100}, {newVersion_, 0}}));
  }
  if (!s.ok()) return s;
  if (s = loadOld(); !s.ok()) return s;
  auto d = newVersionDeployment(old_, newName_, newVersion_, req_.image, req_.container);
  if (!d.ok()) return d.status();
  auto created = rest_.create(res::kDeployments, req_.ns, *d);
  if (created.ok()) return Status::Ok();
  if (created.status().code() == 409) {
    // Created by this rollout before a restart: fine. Anyone else's: refused.
    auto existing = rest_.get(res::kDeployments, req_.ns, newName_);
    if (existing.ok() &&
        textAt(*existing, "/metadata/annotations/mesh.minik8s.io~1rollout-from") == oldName_) {
      return Status::Ok();
    }
  }
  return created.status();
}

Status ApiRolloutTarget::scale(const std::string& name, int replicas) {
  auto r = rest_.patch(res::kDeployments, req_.ns, name, {{"spec", {{"replicas", replicas}}}});
  return r.ok() ? Status::Ok() : r.status();
}

Status ApiRolloutTarget::scaleNew(int replicas) { return scale(newName_, replicas); }
Status ApiRolloutTarget::scaleOld(int replicas) { return scale(oldName_, replicas); }

Result<int> ApiRolloutTarget::readyNewEndpoints() {
  auto eps = rest_.get(res::kEndpoints, req_.ns, req_.service);
  if (!eps.ok()) return eps.status().code() == 404 ? Result<int>(0) : Result<int>(eps.status());
  // Distinct pods: a pod is listed once per port group.
  std::vector<std::string> pods;
  const std::string prefix = newName_ + "-";
  for (const auto& subset : eps->value("subsets", json::array())) {
    for (const auto& a : subset.value("addresses", json::array())) {
      std::string pod = textAt(a, "/targetRef/name");
      if (pod.rfind(prefix, 0) == 0 && std::find(pods.begin(), pods.end(), pod) == pods.end()) {
        pods.push_back(pod);
      }
    }
  }
  return static_cast<int>(pods.size());
}

Status ApiRolloutTarget::setWeights(int oldWeight, int newWeight) {
  return apply(kVirtualServices,
               rolloutVirtualService(req_.ns, req_.service,
                                     {{oldVersion_, oldWeight}, {newVersion_, newWeight}}));
}

Status ApiRolloutTarget::promote() {
  Status s =
      apply(kVirtualServices, rolloutVirtualService(req_.ns, req_.service, {{newVersion_, 100}}));
  if (!s.ok()) return s;
  auto gone =
      rest_.remove(res::kDeployments, req_.ns, oldName_, {{"propagationPolicy", "Background"}});
  if (!gone.ok() && gone.status().code() != 404) return gone.status();
  return apply(kDestinationRules, rolloutDestinationRule(req_.ns, req_.service, {newVersion_}));
}

Status ApiRolloutTarget::rollBack(int oldReplicas) {
  Status s =
      apply(kVirtualServices, rolloutVirtualService(req_.ns, req_.service, {{oldVersion_, 100}}));
  if (!s.ok()) return s;
  if (s = scale(oldName_, oldReplicas); !s.ok()) return s;
  auto gone =
      rest_.remove(res::kDeployments, req_.ns, newName_, {{"propagationPolicy", "Background"}});
  if (!gone.ok() && gone.status().code() != 404) return gone.status();
  return apply(kDestinationRules, rolloutDestinationRule(req_.ns, req_.service, {oldVersion_}));
}

// --- ExecRolloutMetrics -------------------------------------------------------------------

ExecRolloutMetrics::ExecRolloutMetrics(client::ClientConfig config, client::RestClient& rest,
                                       std::string ns, std::string service)
    : config_(std::move(config)),
      rest_(rest),
      ns_(std::move(ns)),
      serviceKey_(ns_ + "/" + service) {}

Result<std::string> ExecRolloutMetrics::exec(const std::string& pod, const std::string& container,
                                             const std::vector<std::string>& command) {
  // https://host:port of the server in use.
  std::string url = rest_.currentUrl();
  const bool tls = url.rfind("https://", 0) == 0;
  std::string hostPort = url.substr(url.find("://") + 3);
  if (size_t slash = hostPort.find('/'); slash != std::string::npos) hostPort.resize(slash);
  size_t colon = hostPort.rfind(':');
  std::string host = colon == std::string::npos ? hostPort : hostPort.substr(0, colon);
  int port = colon == std::string::npos ? (tls ? 443 : 80) : std::stoi(hostPort.substr(colon + 1));
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  std::shared_ptr<http::TlsContext> context;
  if (tls) {
    auto c = http::TlsContext::forClient(config_.tls);
    if (!c.ok()) return c.status();
    context = *c;
  }
  std::string target = "/api/v1/namespaces/" + http::percentEncode(ns_) + "/pods/" +
                       http::percentEncode(pod) +
                       "/exec?container=" + http::percentEncode(container) + "&stdout=true";
  for (const auto& c : command) target += "&command=" + http::percentEncode(c);
  std::vector<std::pair<std::string, std::string>> headers;
  if (!config_.bearerToken.empty()) {
    headers.emplace_back("Authorization", "Bearer " + config_.bearerToken);
  }
  auto conn = ws::dial(host, port, target, {"v5.channel.k8s.io", "v4.channel.k8s.io"},
                       context.get(), headers);
  if (!conn.ok()) return conn.status();
  std::string out, status;
  for (;;) {
    auto m = (*conn)->read();
    if (!m.ok() || m->opcode == ws::Opcode::kClose) break;
    if (m->payload.empty()) continue;
    const char channel = m->payload[0];
    if (channel == 1) out += m->payload.substr(1);
    if (channel == 3) status += m->payload.substr(1);
  }
  if (!status.empty()) {
    auto parsed = json::parse(status, nullptr, false);
    if (!parsed.is_discarded() && parsed.value("status", "") == "Failure") {
      return Status::Internal("exec in " + ns_ + "/" + pod + ": " + parsed.value("message", ""));
    }
  }
  return out;
}

Result<CounterReading> ExecRolloutMetrics::read() {
  auto pods = rest_.list(client::resources::kPods, ns_);
  if (!pods.ok()) return pods.status();
  std::vector<std::string> names;
  for (const auto& p : pods->value("items", json::array())) {
    if (textAt(p, "/status/phase") != "Running" ||
        p.contains("/metadata/deletionTimestamp"_json_pointer)) {
      continue;
    }
    for (const auto& c : valueAt(p, "/spec/containers", json::array())) {
      if (c.value("name", "") == "istio-proxy") names.push_back(textAt(p, "/metadata/name"));
    }
  }
  // Every sidecar at once: each exec is a round trip through the API server and the kubelet.
  std::vector<std::future<Result<std::string>>> scrapes;
  for (const auto& name : names) {
    scrapes.push_back(std::async(std::launch::async, [this, name] {
      return exec(name, "istio-proxy", {kSidecarBinary, "mesh-proxy-metrics"});
    }));
  }
  CounterReading out;
  for (size_t i = 0; i < names.size(); ++i) {
    auto text = scrapes[i].get();
    if (!text.ok()) {
      out.unreadable.push_back(names[i]);  // a pod going away mid-scrape
      continue;
    }
    out.counts[names[i]] = parseDestinationCounts(*text, serviceKey_);
  }
  return out;
}

}  // namespace minik8s::mesh
