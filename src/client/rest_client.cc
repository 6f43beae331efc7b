#include "client/rest_client.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "client/in_process_server.h"
#include "client/watch_event_decoder.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/metrics.h"

namespace minik8s::client {

namespace resources {
const Resource kPods{"", "v1", "pods", true};
const Resource kNodes{"", "v1", "nodes", false};
const Resource kCertificateSigningRequests{"certificates.k8s.io", "v1",
                                           "certificatesigningrequests", false};
const Resource kNamespaces{"", "v1", "namespaces", false};
const Resource kServices{"", "v1", "services", true};
const Resource kEndpoints{"", "v1", "endpoints", true};
const Resource kEvents{"", "v1", "events", true};
const Resource kConfigMaps{"", "v1", "configmaps", true};
const Resource kSecrets{"", "v1", "secrets", true};
const Resource kServiceAccounts{"", "v1", "serviceaccounts", true};
const Resource kLeases{"coordination.k8s.io", "v1", "leases", true};
const Resource kDeployments{"apps", "v1", "deployments", true};
const Resource kReplicaSets{"apps", "v1", "replicasets", true};
const Resource kHpas{"autoscaling", "v2", "horizontalpodautoscalers", true};
const Resource kJobs{"batch", "v1", "jobs", true};
const Resource kEndpointSlices{"discovery.k8s.io", "v1", "endpointslices", true};
const Resource kDnses{"minik8s.io", "v1", "dnses", true};
}  // namespace resources

std::string Resource::path(const std::string& ns, const std::string& name,
                           const std::string& subresource) const {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) p += "/namespaces/" + ns;
  p += "/" + plural;
  if (!name.empty()) p += "/" + name;
  if (!subresource.empty()) p += "/" + subresource;
  return p;
}

Status statusFromResponse(int code, const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    Status s(j.value("code", code), j.value("reason", "Unknown"), j.value("message", ""));
    return s;
  }
  return Status(code, "Unknown", body.substr(0, 512));
}

RestClient::RestClient(std::string baseUrl) : baseUrl_(std::move(baseUrl)) {
  size_t start = 0;
  while (start <= baseUrl_.size()) {
    size_t comma = baseUrl_.find(',', start);
    if (comma == std::string::npos) comma = baseUrl_.size();
    std::string url = baseUrl_.substr(start, comma - start);
    if (!url.empty()) urls_.push_back(std::move(url));
    start = comma + 1;
  }
  if (urls_.empty()) urls_.push_back(baseUrl_);
}

RestClient::RestClient(const ClientConfig& config) : RestClient(config.servers) {
  tls_ = config.tls;
  timeouts_ = config.timeouts;
  bearerToken_ = config.bearerToken;
  maxRetries_ = config.maxRetries;
  inProcess_ = config.inProcess;
  inProcessIdentity_ = config.inProcessIdentity;
}

RestClient::~RestClient() = default;

std::string RestClient::currentUrl() const { return urls_[current_.load() % urls_.size()]; }

std::unique_ptr<http::Client> RestClient::acquire(size_t server) {
  {
    std::lock_guard lock(mu_);
    while (!pool_.empty()) {
      auto [owner, c] = std::move(pool_.back());
      pool_.pop_back();
      if (owner == server) return std::move(c);
    }
  }
  return std::make_unique<http::Client>(urls_[server], tls_, timeouts_);
}

void RestClient::release(size_t server, std::unique_ptr<http::Client> c) {
  std::lock_guard lock(mu_);
  if (pool_.size() < 8) pool_.emplace_back(server, std::move(c));
}

void RestClient::failOver(size_t failed) {
  size_t expected = failed;
  current_.compare_exchange_strong(expected, (failed + 1) % urls_.size());
}

std::vector<std::pair<std::string, std::string>> RestClient::authHeaders() const {
  if (bearerToken_.empty()) return {};
  return {{"Authorization", "Bearer " + bearerToken_}};
}

namespace {
// A request may be sent again to another server when repeating it cannot apply it twice: a read,
// or a request no server can have acted on.
bool safeToRetryElsewhere(const std::string& method, const Status& failure) {
  return method == "GET" || http::neverReachedServer(failure);
}
}  // namespace

namespace {
// client-go's rest_client_* metrics, in the process registry (the API server's /metrics shows its
// in-process controllers' and scheduler's requests; an agent's its own).
struct RestClientMetrics {
  metrics::CounterVec& requests;
  metrics::HistogramVec& duration;
};
RestClientMetrics& restClientMetrics() {
  static RestClientMetrics m{
      metrics::defaultRegistry().counterVec(
          "rest_client_requests_total",
          "Number of HTTP requests, partitioned by status code, method, and host.",
          {"code", "method", "host"}),
      metrics::defaultRegistry().histogramVec(
          "rest_client_request_duration_seconds",
          "Request latency in seconds. Broken down by verb, and host.", {"verb", "host"},
          {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60})};
  return m;
}
// "https://10.0.0.1:6443/base" -> "10.0.0.1:6443"
std::string_view hostOf(std::string_view url) {
  if (size_t s = url.find("://"); s != std::string_view::npos) url.remove_prefix(s + 3);
  return url.substr(0, url.find('/'));
}
void recordRequest(const std::string& method, std::string_view host,
                   std::chrono::steady_clock::time_point start, const Result<http::Response>& res) {
  RestClientMetrics& m = restClientMetrics();
  m.duration.with({method, host})
      .observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  m.requests.with({res.ok() ? std::to_string(res->status) : std::string("<error>"), method, host})
      .inc();
}
}  // namespace

Result<json> RestClient::request(const std::string& method, const std::string& path,
                                 const std::string& body, const std::string& contentType) {
  auto text = requestText(method, path, body, contentType, "application/json");
  if (!text.ok()) return text.status();
  if (text->empty()) return json();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status::Internal("the server sent a body that is not JSON");
  return j;
}

namespace {
// The seconds of an answer's `Retry-After: N` header when the answer may be retried after them
// (client-go's checkWait: 429 or 5xx); nullopt otherwise.
std::optional<int> retryAfterSeconds(const http::Response& r) {
  if (r.status != 429 && (r.status < 500 || r.status > 599)) return std::nullopt;
  for (const auto& [k, v] : r.headers) {
    if (strcasecmp(k.c_str(), "Retry-After") != 0) continue;
    int seconds = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
    if (ec != std::errc() || end != v.data() + v.size() || seconds < 0) return std::nullopt;
    return seconds;
  }
  return std::nullopt;
}
}  // namespace

void RestClient::stopRetrying() {
  {
    std::lock_guard lock(retryMu_);
    stopRetrying_ = true;
  }
  retryCv_.notify_all();
}

bool RestClient::waitToRetry(std::chrono::milliseconds d) {
  std::unique_lock lock(retryMu_);
  return !retryCv_.wait_for(lock, d, [this] { return stopRetrying_; });
}

Result<std::string> RestClient::requestText(const std::string& method, const std::string& path,
                                            const std::string& body, const std::string& contentType,
                                            const std::string& accept) {
  std::vector<std::pair<std::string, std::string>> headers = authHeaders();
  headers.emplace_back("Accept", accept);
  if (!body.empty()) headers.emplace_back("Content-Type", contentType);
  Result<http::Response> res = send(method, path, body, headers);
  for (int retry = 0; retry < maxRetries_ && res.ok(); ++retry) {
    std::optional<int> after = retryAfterSeconds(*res);
    if (!after) break;
    const auto wait = std::chrono::milliseconds(std::min(*after, 10) * 1000);
    LOG_DEBUG("{} {}: {} with Retry-After {}, retry {} of {}", method, path, res->status, *after,
              retry + 1, maxRetries_);
    if (!waitToRetry(wait)) break;
    res = send(method, path, body, headers);
  }
  if (!res.ok()) return res.status();
  if (res->status >= 300) return statusFromResponse(res->status, res->body);
  return std::move(res->body);
}

Result<http::Response> RestClient::send(
    const std::string& method, const std::string& path, const std::string& body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  if (inProcess_ && InProcessServer::servesInProcess(path)) {
    const auto start = std::chrono::steady_clock::now();
    auto res = inProcess_->request(inProcessIdentity_, method, path, body, withHost(headers));
    recordRequest(method, hostOf(urls_[0]), start, res);
    return res;
  }
  Result<http::Response> res = Status::Unavailable("no API server");
  for (size_t attempt = 0; attempt < urls_.size(); ++attempt) {
    const size_t server = current_.load() % urls_.size();
    auto c = acquire(server);
    const auto start = std::chrono::steady_clock::now();
    res = c->request(method, path, body, headers);
    recordRequest(method, hostOf(urls_[server]), start, res);
    if (res.ok()) {
      release(server, std::move(c));
      break;
    }
    if (urls_.size() == 1) return res.status();
    failOver(server);
    if (!safeToRetryElsewhere(method, res.status())) return res.status();
  }
  return res;
}

namespace {
std::string query(const ListParams& p) {
  std::string q;
  auto add = [&](const std::string& k, const std::string& v) {
    if (v.empty()) return;
    q += (q.empty() ? "?" : "&") + k + "=" + http::percentEncode(v);
  };
  add("labelSelector", p.labelSelector);
  add("fieldSelector", p.fieldSelector);
  if (p.limit > 0) add("limit", std::to_string(p.limit));
  add("continue", p.continueToken);
  add("resourceVersion", p.resourceVersion);
  return q;
}

std::string nsOf(const json& obj) { return valueAt(obj, "/metadata/namespace", std::string()); }
std::string nameOf(const json& obj) { return valueAt(obj, "/metadata/name", std::string()); }
}  // namespace

Result<json> RestClient::get(const Resource& r, const std::string& ns, const std::string& name) {
  return request("GET", r.path(ns, name));
}

Result<json> RestClient::list(const Resource& r, const std::string& ns, const ListParams& p) {
  return request("GET", r.path(ns) + query(p));
}

Result<json> RestClient::create(const Resource& r, const std::string& ns, const json& obj) {
  return request("POST", r.path(ns), obj.dump());
}

Result<json> RestClient::update(const Resource& r, const json& obj,
                                const std::string& subresource) {
  return request("PUT", r.path(nsOf(obj), nameOf(obj), subresource), obj.dump());
}

Result<json> RestClient::patch(const Resource& r, const std::string& ns, const std::string& name,
                               const json& patch, const std::string& patchType,
                               const std::string& subresource) {
  std::string ct = patchType == "strategic" ? "application/strategic-merge-patch+json"
                   : patchType == "json"    ? "application/json-patch+json"
                                            : "application/merge-patch+json";
  return request("PATCH", r.path(ns, name, subresource), patch.dump(), ct);
}

Result<json> RestClient::remove(const Resource& r, const std::string& ns, const std::string& name,
                                const json& deleteOptions) {
  return request("DELETE", r.path(ns, name), deleteOptions.dump());
}

Result<json> RestClient::createSubresource(const Resource& r, const std::string& ns,
                                           const std::string& name, const std::string& subresource,
                                           const json& body) {
  return request("POST", r.path(ns, name, subresource), body.dump());
}

void WatchCanceller::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (client_) client_->close();
}

bool WatchCanceller::cancelled() {
  std::lock_guard lock(mu_);
  return cancelled_;
}

Status RestClient::watch(const Resource& r, const std::string& ns, const ListParams& params,
                         int64_t timeoutSeconds, const std::function<bool(WatchEvent&)>& onEvent,
                         WatchCanceller* canceller) {
  std::string q = query(params);
  q += (q.empty() ? "?" : "&") + std::string("watch=true&allowWatchBookmarks=true");
  if (timeoutSeconds > 0) q += "&timeoutSeconds=" + std::to_string(timeoutSeconds);
  if (inProcess_) return watchInProcess(r.path(ns) + q, onEvent, canceller);
  const size_t server = current_.load() % urls_.size();
  http::Client c(urls_[server], tls_, timeouts_);
  if (canceller) {
    std::lock_guard lock(canceller->mu_);
    if (canceller->cancelled_) return Status::Ok();
    canceller->client_ = &c;
  }
  struct Unregister {
    WatchCanceller* w;
    ~Unregister() {
      if (!w) return;
      std::lock_guard lock(w->mu_);
      w->client_ = nullptr;
    }
  } unregister{canceller};
  WatchEventDecoder decoder;
  auto res = c.stream(
      "GET", r.path(ns) + q, [&](std::string_view chunk) { return decoder.feed(chunk, onEvent); },
      authHeaders());
  if (!res.ok()) {
    if (canceller && canceller->cancelled()) return Status::Ok();
    // The server could not be reached or the watch broke off: the next watch (or request) goes
    // to the next server.
    if (urls_.size() > 1) failOver(server);
    return res.status();
  }
  if (res->status >= 300) return statusFromResponse(res->status, "");
  return decoder.failure();
}

std::vector<std::pair<std::string, std::string>> RestClient::withHost(
    const std::vector<std::pair<std::string, std::string>>& headers) const {
  auto out = headers;
  out.emplace_back("Host", std::string(hostOf(urls_[0])));
  return out;
}

Status RestClient::watchInProcess(const std::string& target,
                                  const std::function<bool(WatchEvent&)>& onEvent,
                                  WatchCanceller* canceller) {
  if (canceller && canceller->cancelled()) return Status::Ok();
  WatchEventDecoder decoder;
  auto res = inProcess_->stream(
      inProcessIdentity_, "GET", target, withHost(authHeaders()),
      [&](std::string_view chunk) { return decoder.feed(chunk, onEvent); },
      canceller ? std::function<bool()>([canceller] { return canceller->cancelled(); })
                : std::function<bool()>());
  if (!res.ok()) {
    if (canceller && canceller->cancelled()) return Status::Ok();
    return res.status();
  }
  if (res->status >= 300) return statusFromResponse(res->status, res->body);
  return decoder.failure();
}

}  // namespace minik8s::client
