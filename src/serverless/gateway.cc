#include "serverless/gateway.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "serverless/trigger_broker.h"
#include "serverless/workflow_http.h"

namespace minik8s::serverless {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr const char* kHostSuffix = ".fn.cluster.local";
constexpr size_t kMaxIdlePerInstance = 64;
constexpr auto kRefusedBackoff = std::chrono::seconds(2);
constexpr int kAttempts = 3;

client::ListParams functionLabelled() {
  client::ListParams p;
  p.labelSelector = kFunctionLabel;
  return p;
}

http::Response jsonError(int code, const std::string& message, const std::string& type) {
  return http::Response::json(code, {{"error", message}, {"type", type}});
}

// "ns/name" from a labelled object (its Function's key).
std::string functionKeyOf(const json& obj) {
  const std::string fn = api::labelValue(obj, kFunctionLabel);
  return fn.empty() ? "" : api::namespaceOf(obj) + "/" + fn;
}

std::string importErrorOf(const json& fn) {
  for (const auto& c : valueAt(fn, "/status/conditions", json::array())) {
    if (c.value("type", "") == "Ready" && c.value("reason", "") == "ImportFailed") {
      return c.value("message", std::string("the handler cannot be imported"));
    }
  }
  return "";
}

class RestScaler : public Scaler {
 public:
  explicit RestScaler(client::RestClient& rest) : rest_(rest) {}
  Status scale(const std::string& ns, const std::string& deployment, int replicas) override {
    auto r = rest_.patch(client::resources::kDeployments, ns, deployment,
                         {{"spec", {{"replicas", replicas}}}}, "merge", "scale");
    return r.ok() ? Status() : r.status();
  }

 private:
  client::RestClient& rest_;
};

}  // namespace

std::unique_ptr<Scaler> restScaler(client::RestClient& rest) {
  return std::make_unique<RestScaler>(rest);
}

std::optional<Route> routeRequest(const std::string& target, const std::string& host) {
  const size_t q = target.find('?');
  const std::string path = target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : target.substr(q);
  static const std::string prefix = "/function/";
  if (path.rfind(prefix, 0) == 0) {
    const size_t nsEnd = path.find('/', prefix.size());
    if (nsEnd == std::string::npos) return std::nullopt;
    const size_t nameEnd = path.find('/', nsEnd + 1);
    Route r;
    r.ns = path.substr(prefix.size(), nsEnd - prefix.size());
    r.name = path.substr(nsEnd + 1,
                         nameEnd == std::string::npos ? std::string::npos : nameEnd - nsEnd - 1);
    if (r.ns.empty() || r.name.empty()) return std::nullopt;
    r.target = (nameEnd == std::string::npos ? "/" : path.substr(nameEnd)) + query;
    return r;
  }
  std::string h = host.substr(0, host.find(':'));
  std::transform(h.begin(), h.end(), h.begin(), ::tolower);
  if (h.size() > std::strlen(kHostSuffix) &&
      h.compare(h.size() - std::strlen(kHostSuffix), std::string::npos, kHostSuffix) == 0) {
    const std::string head = h.substr(0, h.size() - std::strlen(kHostSuffix));  // name.ns
    const size_t dot = head.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == head.size() ||
        head.find('.', dot + 1) != std::string::npos) {
      return std::nullopt;
    }
    Route r;
    r.name = head.substr(0, dot);
    r.ns = head.substr(dot + 1);
    r.target = target.empty() ? "/" : target;
    return r;
  }
  return std::nullopt;
}

std::vector<std::string> endpointAddresses(const json& endpoints, const std::string& list) {
  std::set<std::string> ips;
  for (const auto& subset : endpoints.value("subsets", json::array())) {
    if (!subset.is_object()) continue;
    for (const auto& a : subset.value(list, json::array())) {
      if (a.is_object() && a.contains("ip") && a["ip"].is_string()) ips.insert(a["ip"]);
    }
  }
  return {ips.begin(), ips.end()};
}

int pickLeastInFlight(const std::vector<int>& inFlight, int limit, size_t start) {
  int best = -1;
  const size_t n = inFlight.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (start + k) % n;
    if (limit > 0 && inFlight[i] >= limit) continue;
    if (best < 0 || inFlight[i] < inFlight[best]) best = static_cast<int>(i);
  }
  return best;
}

Gateway::Gateway(client::RestClient& rest, std::unique_ptr<Scaler> scaler, GatewayOptions options)
    : rest_(rest),
      scaler_(std::move(scaler)),
      options_(std::move(options)),
      autoscaler_(*options_.clock, options_.windows),
      functions_(rest, kFunctions),
      endpoints_(rest, client::resources::kEndpoints, "", functionLabelled()),
      deployments_(rest, client::resources::kDeployments, "", functionLabelled()) {
  functions_.addHandlers({[this](const json& o) { onFunction(o, false); },
                          [this](const json&, const json& o) { onFunction(o, false); },
                          [this](const json& o) { onFunction(o, true); }});
  endpoints_.addHandlers({[this](const json& o) { onEndpoints(o, false); },
                          [this](const json&, const json& o) { onEndpoints(o, false); },
                          [this](const json& o) { onEndpoints(o, true); }});
  deployments_.addHandlers({[this](const json& o) { onDeployment(o, false); },
                            [this](const json&, const json& o) { onDeployment(o, false); },
                            [this](const json& o) { onDeployment(o, true); }});
  if (options_.triggers) broker_ = std::make_unique<TriggerBroker>(rest_, "");
}

Gateway::~Gateway() { stop(); }

int Gateway::port() const { return server_ ? server_->port() : 0; }

Status Gateway::start() {
  for (auto* inf : {&functions_, &endpoints_, &deployments_}) inf->start();
  for (auto* inf : {&functions_, &endpoints_, &deployments_}) {
    if (!inf->waitForSync(options_.syncTimeout)) {
      return Status::Unavailable("serverless gateway: informers did not sync from " +
                                 rest_.baseUrl() +
                                 " (is the Function CRD installed? the function controller "
                                 "installs it)");
    }
  }
  http::ServerLimits limits;
  limits.maxBodyBytes = options_.maxBodyBytes;
  limits.maxConnections = 4096;
  server_ = std::make_unique<http::Server>(
      [this](const http::Request& req, http::ResponseWriter& w) { serve(req, w); }, limits);
  if (broker_) broker_->start();
  if (Status s = server_->start(options_.listen); !s.ok()) return s;
  if (broker_) broker_->setGatewayUrl(fmt::format("http://127.0.0.1:{}", server_->port()));
  {
    std::lock_guard lock(loopMu_);
    stopping_ = false;
  }
  loop_ = std::thread([this] { autoscaleLoop(); });
  prober_ = std::thread([this] { probeLoop(); });
  LOG_INFO("serverless gateway on {} ({} functions)", options_.listen, functions_.list().size());
  return {};
}

void Gateway::stop() {
  {
    std::lock_guard lock(loopMu_);
    stopping_ = true;
  }
  loopWake_.notify_all();
  {
    std::lock_guard lock(probeMu_);  // the prober reads stopping_ under its own mutex too
  }
  probeWake_.notify_all();
  if (loop_.joinable()) loop_.join();
  if (prober_.joinable()) prober_.join();
  if (server_) server_->stop();
  if (broker_) broker_->stop();
  for (auto* inf : {&functions_, &endpoints_, &deployments_}) inf->stop();
  changed_.notify_all();
}

void Gateway::onFunction(const json& fn, bool deleted) {
  const std::string key = client::objectKey(fn);
  {
    std::lock_guard lock(mu_);
    FunctionState& f = state_[key];
    f.exists = !deleted;
    auto spec = parseFunctionSpec(fn);
    f.specOk = spec.ok();
    if (spec.ok()) f.spec = *spec;
    f.importError = importErrorOf(fn);
    if (deleted) {
      autoscaler_.forget(key);
    } else {
      autoscaler_.configure(key, f.spec.scale);
    }
  }
  changed_.notify_all();
}

void Gateway::setInstances(FunctionState& f, const std::vector<std::string>& ips) {
  std::vector<Instance> next;
  auto keep = [&](const std::string& ip) {
    auto it = std::find_if(f.instances.begin(), f.instances.end(),
                           [&](const Instance& i) { return i.ip == ip; });
    next.push_back(it != f.instances.end() ? *it : Instance{ip});
  };
  for (const auto& ip : ips) keep(ip);
  for (const auto& ip : f.probedReady) {
    if (std::find(ips.begin(), ips.end(), ip) == ips.end()) keep(ip);
  }
  f.instances = std::move(next);
}

void Gateway::onEndpoints(const json& endpoints, bool deleted) {
  const std::string key = functionKeyOf(endpoints);
  if (key.empty()) return;
  std::vector<std::string> gone;
  bool probe = false;
  {
    std::lock_guard lock(mu_);
    FunctionState& f = state_[key];
    const json none = json::object();
    const std::vector<std::string> ips = endpointAddresses(deleted ? none : endpoints, "addresses");
    f.starting = endpointAddresses(deleted ? none : endpoints, "notReadyAddresses");
    for (auto it = f.probedReady.begin(); it != f.probedReady.end();) {
      const bool stillStarting =
          std::find(f.starting.begin(), f.starting.end(), *it) != f.starting.end();
      it = stillStarting ? std::next(it) : f.probedReady.erase(it);
    }
    const size_t before = f.instances.size();
    std::vector<std::string> previous;
    for (const auto& i : f.instances) previous.push_back(i.ip);
    setInstances(f, ips);
    for (const auto& ip : previous) {
      auto it = std::find_if(f.instances.begin(), f.instances.end(),
                             [&](const Instance& i) { return i.ip == ip; });
      if (it == f.instances.end()) gone.push_back(ip);
    }
    if (f.instances.size() != before || !gone.empty()) {
      LOG_INFO("function {}: {} ready instance(s)", key, f.instances.size());
    }
    probe = f.starting.size() > f.probedReady.size();
  }
  changed_.notify_all();
  if (probe) {
    {
      std::lock_guard lock(probeMu_);
      probePoked_ = true;
    }
    probeWake_.notify_all();
  }
  if (!gone.empty()) {
    std::lock_guard lock(poolMu_);
    for (auto it = idle_.begin(); it != idle_.end();) {
      const std::string ip = it->first.substr(0, it->first.find('/'));
      it = std::find(gone.begin(), gone.end(), ip) != gone.end() ? idle_.erase(it) : std::next(it);
    }
  }
}

void Gateway::onDeployment(const json& deployment, bool deleted) {
  const std::string key = functionKeyOf(deployment);
  if (key.empty() ||
      api::nameOf(deployment) != deploymentName(api::labelValue(deployment, kFunctionLabel))) {
    return;
  }
  std::lock_guard lock(mu_);
  state_[key].replicas = deleted ? -1 : valueAt(deployment, "/spec/replicas", 1);
}

Result<std::string> Gateway::acquire(const std::string& key, SteadyClock::time_point until) {
  std::unique_lock lock(mu_);
  bool poked = false;
  for (;;) {
    auto it = state_.find(key);
    if (it == state_.end() || !it->second.exists) {
      return Status::NotFoundMessage("function " + key + " not found");
    }
    FunctionState& f = it->second;
    const auto now = SteadyClock::now();
    std::vector<int> counts;
    counts.reserve(f.instances.size());
    for (const auto& i : f.instances) {
      counts.push_back(i.failedUntil > now ? std::numeric_limits<int>::max() : i.inFlight);
    }
    const int limit = f.spec.containerConcurrency;
    int pick = pickLeastInFlight(counts, limit, f.rotate++);
    if (pick >= 0 && counts[pick] == std::numeric_limits<int>::max()) pick = -1;
    if (pick >= 0) {
      ++f.instances[pick].inFlight;
      return f.instances[pick].ip;
    }
    if (f.instances.empty()) {
      if (!f.importError.empty()) {
        return Status::Internal("function " + key + ": " + f.importError);
      }
      if (!poked) {  // the activator: ask the autoscaler loop for an instance now
        poked = true;
        {
          std::lock_guard loopLock(loopMu_);
          poked_ = true;
        }
        loopWake_.notify_all();
      }
    }
    if (now >= until) {
      return Status::Timeout(fmt::format(
          "function {} had no ready instance{} within {} s", key,
          f.instances.empty() ? "" : " below its containerConcurrency", f.spec.timeoutSeconds));
    }
    // Woken by an Endpoints update, a request's end or a Function change; the 1 s bound
    // re-evaluates instances a refused connection took out for a while.
    changed_.wait_until(lock, std::min(until, now + std::chrono::seconds(1)));
  }
}

void Gateway::release(const std::string& key, const std::string& ip, bool refused) {
  {
    std::lock_guard lock(mu_);
    auto it = state_.find(key);
    if (it != state_.end()) {
      for (auto& i : it->second.instances) {
        if (i.ip != ip) continue;
        if (i.inFlight > 0) --i.inFlight;
        if (refused) i.failedUntil = SteadyClock::now() + kRefusedBackoff;
      }
    }
  }
  changed_.notify_all();
}

Result<http::Response> Gateway::forward(const std::string& ip, const http::Request& req,
                                        const std::string& target,
                                        std::chrono::milliseconds timeout) {
  const std::string poolKey = ip + "/" + std::to_string(timeout.count());
  std::unique_ptr<http::Client> client;
  {
    std::lock_guard lock(poolMu_);
    auto& idle = idle_[poolKey];
    if (!idle.empty()) {
      client = std::move(idle.back());
      idle.pop_back();
    }
  }
  if (!client) {
    http::ClientTimeouts t;
    t.connect = std::chrono::seconds(2);
    t.request = timeout;
    client = std::make_unique<http::Client>(
        fmt::format("http://{}:{}", options_.dialHost.empty() ? ip : options_.dialHost,
                    options_.instancePort),
        http::TlsClientConfig{}, t);
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (auto ct = req.header("Content-Type"); !ct.empty()) headers.emplace_back("Content-Type", ct);
  if (!req.remoteAddress.empty()) headers.emplace_back("X-Forwarded-For", req.remoteAddress);
  if (auto host = req.header("Host"); !host.empty()) headers.emplace_back("X-Forwarded-Host", host);
  auto r = client->request(req.method, target, req.body, headers);
  if (r.ok()) {
    std::lock_guard lock(poolMu_);
    auto& idle = idle_[poolKey];
    if (idle.size() < kMaxIdlePerInstance) idle.push_back(std::move(client));
  }
  return r;
}

void Gateway::serve(const http::Request& req, http::ResponseWriter& w) {
  if (req.path == "/healthz") return w.send(http::Response::text(200, "ok"));
  if (isWorkflowRequest(req.path)) return serveWorkflowRequest(rest_, req, w);
  if (broker_ && TriggerBroker::handles(req.path)) return broker_->serve(req, w);
  auto route = routeRequest(req.target, req.header("Host"));
  if (!route) {
    return w.send(jsonError(404,
                            "no function addressed: use /function/<namespace>/<name> or Host "
                            "<name>.<namespace>.fn.cluster.local",
                            "NotFound"));
  }
  if (req.method != "GET" && req.method != "POST" && req.method != "PUT") {
    return w.send(jsonError(405, "method " + req.method + " not allowed: use POST or GET",
                            "MethodNotAllowed"));
  }
  const std::string key = route->ns + "/" + route->name;
  int timeoutSeconds = 30;
  {
    std::lock_guard lock(mu_);
    auto it = state_.find(key);
    if (it == state_.end() || !it->second.exists) {
      return w.send(jsonError(404, "function " + key + " not found", "NotFound"));
    }
    if (!it->second.specOk) {
      return w.send(jsonError(500, "function " + key + " has an invalid spec (kubectl describe fn)",
                              "InvalidSpec"));
    }
    timeoutSeconds = it->second.spec.timeoutSeconds;
  }
  const auto timeout = std::chrono::seconds(timeoutSeconds);
  const auto until = SteadyClock::now() + timeout;
  autoscaler_.requestStarted(key);
  struct Finished {
    Autoscaler& a;
    const std::string& key;
    ~Finished() { a.requestFinished(key); }
  } finished{autoscaler_, key};

  for (int attempt = 1;; ++attempt) {
    auto ip = acquire(key, until);
    if (!ip.ok()) {
      const Status& s = ip.status();
      if (s.code() == 404) return w.send(jsonError(404, s.message(), "NotFound"));
      if (s.code() == 500) return w.send(jsonError(500, s.message(), "ImportError"));
      return w.send(jsonError(504, s.message(), "Timeout"));
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - SteadyClock::now());
    auto r = forward(*ip, req, route->target, std::max(left, std::chrono::milliseconds(1000)));
    const bool refused = !r.ok() && http::neverReachedServer(r.status());
    release(key, *ip, refused);
    if (r.ok()) {
      http::Response out;
      out.status = r->status;
      out.body = std::move(r->body);
      for (const auto& [name, value] : r->headers) {
        if (strcasecmp(name.c_str(), "Content-Type") == 0) out.headers.emplace_back(name, value);
      }
      return w.send(std::move(out));
    }
    if (refused && attempt < kAttempts && SteadyClock::now() < until) {
      LOG_INFO("function {}: instance {} refused the connection ({}); trying another", key, *ip,
               r.status().message());
      continue;
    }
    if (r.status().code() == 504) {
      return w.send(
          jsonError(504, fmt::format("function {} did not answer within {} s", key, timeoutSeconds),
                    "Timeout"));
    }
    return w.send(jsonError(502, "function " + key + ": " + r.status().message(), "BadGateway"));
  }
}

bool Gateway::healthy(const std::string& ip) {
  http::ClientTimeouts t;
  t.connect = std::chrono::milliseconds(250);
  t.request = std::chrono::milliseconds(500);
  http::Client c(fmt::format("http://{}:{}", options_.dialHost.empty() ? ip : options_.dialHost,
                             options_.instancePort),
                 http::TlsClientConfig{}, t);
  auto r = c.get("/healthz");
  return r.ok() && r->status == 200;
}

void Gateway::probeLoop() {
  struct Probe {
    int failures = 0;
    SteadyClock::time_point next;
  };
  std::map<std::string, Probe> probes;  // "key ip" -> back-off
  std::unique_lock lock(probeMu_);
  while (!stopping_) {
    std::vector<std::pair<std::string, std::string>> targets;  // (key, ip)
    {
      std::lock_guard stateLock(mu_);
      for (const auto& [key, f] : state_) {
        for (const auto& ip : f.starting) {
          if (!f.probedReady.count(ip)) targets.emplace_back(key, ip);
        }
      }
    }
    std::map<std::string, Probe> kept;
    for (const auto& [key, ip] : targets) kept[key + " " + ip] = probes[key + " " + ip];
    probes = std::move(kept);
    if (targets.empty()) {
      probeWake_.wait(lock, [this] { return stopping_ || probePoked_; });
      probePoked_ = false;
      continue;
    }
    lock.unlock();
    for (const auto& [key, ip] : targets) {
      Probe& p = probes[key + " " + ip];
      if (SteadyClock::now() < p.next) continue;
      if (!healthy(ip)) {
        ++p.failures;
        // 25 ms while it starts, backing off to 1 s for one that stays unready (an import error).
        auto wait = std::chrono::milliseconds(25) * (1 << std::min(p.failures / 8, 5));
        p.next =
            SteadyClock::now() + std::min<std::chrono::milliseconds>(wait, std::chrono::seconds(1));
        continue;
      }
      {
        std::lock_guard stateLock(mu_);
        FunctionState& f = state_[key];
        if (std::find(f.starting.begin(), f.starting.end(), ip) == f.starting.end()) continue;
        f.probedReady.insert(ip);
        std::vector<std::string> ips;
        for (const auto& i : f.instances) ips.push_back(i.ip);
        setInstances(f, ips);
        LOG_INFO(
            "function {}: instance {} answers /healthz: in use before its readiness probe "
            "({} ready instance(s))",
            key, ip, f.instances.size());
      }
      changed_.notify_all();
    }
    lock.lock();
    probeWake_.wait_for(lock, std::chrono::milliseconds(25), [this] { return stopping_.load(); });
  }
}

void Gateway::autoscaleLoop() {
  auto nextSample = SteadyClock::now();
  std::unique_lock lock(loopMu_);
  while (!stopping_) {
    loopWake_.wait_until(lock, nextSample, [this] { return stopping_ || poked_; });
    if (stopping_) break;
    poked_ = false;
    lock.unlock();
    if (SteadyClock::now() >= nextSample) {
      autoscaler_.sample();
      nextSample = SteadyClock::now() + options_.sampleInterval;
    }
    autoscaleOnce();
    lock.lock();
  }
}

void Gateway::autoscaleOnce() {
  struct Entry {
    std::string key;
    int ready, replicas;
  };
  std::vector<Entry> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, f] : state_) {
      if (!f.exists || !f.specOk || f.replicas < 0) continue;  // no Deployment yet
      entries.push_back({key, static_cast<int>(f.instances.size()), f.replicas});
    }
  }
  for (auto& e : entries) {
    ScaleDecision d = autoscaler_.decide(e.key, e.ready, e.replicas);
    if (d.desired == e.replicas) continue;
    const size_t slash = e.key.find('/');
    const std::string ns = e.key.substr(0, slash), name = e.key.substr(slash + 1);
    Status s = scaler_->scale(ns, deploymentName(name), d.desired);
    if (!s.ok()) {
      LOG_WARN("function {}: cannot scale to {}: {}", e.key, d.desired, s.toString());
      continue;
    }
    LOG_INFO("function {}: {} -> {} instances (in flight {}, stable {:.1f}, panic {:.1f}{})", e.key,
             e.replicas, d.desired, autoscaler_.inFlight(e.key), d.stableConcurrency,
             d.panicConcurrency, d.panicking ? ", panicking" : "");
    std::lock_guard lock(mu_);
    auto it = state_.find(e.key);
    if (it != state_.end()) it->second.replicas = d.desired;  // the informer confirms it
  }
}

}  // namespace minik8s::serverless
