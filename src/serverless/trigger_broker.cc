#include "serverless/trigger_broker.h"

#include <fmt/format.h>

#include "api/object_meta.h"
#include "common/http_client.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "serverless/function.h"
#include "serverless/workflow.h"

namespace minik8s::serverless {

namespace {

constexpr int kMaxFunctionTimeoutSeconds = 900;  // the Function CRD's timeoutSeconds maximum
constexpr size_t kMaxIdleDeliveryConnections = 16;

http::Response brokerError(int code, const std::string& message, const std::string& type) {
  return http::Response::json(code, {{"error", message}, {"type", type}});
}

// (ns, name) from "/<prefix>/<ns>/<name>"; false when the path has another shape.
bool splitBrokerRoute(const std::string& path, const std::string& prefix, std::string* ns,
                      std::string* name) {
  if (path.rfind(prefix, 0) != 0) return false;
  const std::string rest = path.substr(prefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == rest.size() ||
      rest.find('/', slash + 1) != std::string::npos) {
    return false;
  }
  *ns = rest.substr(0, slash);
  *name = rest.substr(slash + 1);
  return true;
}

}  // namespace

void GatewayDeliveryTarget::setGatewayUrl(const std::string& url) {
  std::lock_guard lock(mu_);
  gatewayUrl_ = url;
  idle_.clear();
}

Status GatewayDeliveryTarget::deliver(const std::string& ns, const TriggerTarget& target,
                                      const CloudEvent& event) {
  if (!target.workflow.empty()) {
    auto r = startWorkflowExecution(rest_, ns, target.workflow, toStructured(event));
    return r.ok() ? Status() : r.status();
  }
  const std::string body = toStructured(event).dump();
  const std::string path = "/function/" + ns + "/" + target.function;
  Result<http::Response> r = Status::Unavailable("not sent");
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::string url;
    std::unique_ptr<http::Client> client;
    {
      std::lock_guard lock(mu_);
      url = gatewayUrl_;
      if (!idle_.empty() && attempt == 0) {
        client = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!client) {
      http::ClientTimeouts t;
      t.connect = std::chrono::seconds(2);
      t.request = std::chrono::seconds(kMaxFunctionTimeoutSeconds + 30);
      client = std::make_unique<http::Client>(url, http::TlsClientConfig{}, t);
    }
    r = client->request("POST", path, body, {{"Content-Type", "application/json"}});
    if (r.ok()) {
      std::lock_guard lock(mu_);
      if (idle_.size() < kMaxIdleDeliveryConnections && url == gatewayUrl_) {
        idle_.push_back(std::move(client));
      }
      break;
    }
    // A pooled connection the gateway closed meanwhile: once more on a new one.
    if (!http::neverReachedServer(r.status())) break;
  }
  if (!r.ok()) return r.status();
  if (r->status >= 200 && r->status < 300) return {};
  std::string message = r->body.substr(0, 300);
  json parsed = json::parse(r->body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_string()) {
    message = parsed["error"].get<std::string>();
  }
  return Status::Unavailable(
      fmt::format("function {} answered {}: {}", target.function, r->status, message));
}

StatusDeliveryRecorder::StatusDeliveryRecorder(client::RestClient& rest,
                                               client::EventRecorder* events,
                                               std::chrono::milliseconds interval)
    : rest_(rest), events_(events), interval_(interval) {}

StatusDeliveryRecorder::~StatusDeliveryRecorder() { stop(); }

void StatusDeliveryRecorder::record(const std::string& ns, const std::string& trigger,
                                    const DeliveryOutcome& outcome, bool deadLetter) {
  {
    std::lock_guard lock(mu_);
    pending_[ns + "/" + trigger].add(outcome, deadLetter);
  }
  wake_.notify_one();
}

void StatusDeliveryRecorder::start() {
  std::lock_guard lock(mu_);
  stopping_ = false;
  if (!flusher_.joinable()) flusher_ = std::thread([this] { flushLoop(); });
}

void StatusDeliveryRecorder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  flush();
}

void StatusDeliveryRecorder::flushLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) break;
    // Gather what else comes within the interval, then write it all.
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
    lock.unlock();
    flush();
    lock.lock();
  }
}

void StatusDeliveryRecorder::flush() {
  std::lock_guard writeLock(writeMu_);
  std::map<std::string, DeliverySummary> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
  }
  for (const auto& [key, summary] : batch) write(key, summary);
}

void StatusDeliveryRecorder::write(const std::string& key, const DeliverySummary& summary) {
  const auto [ns, trigger] = client::splitObjectKey(key);
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto obj = rest_.get(kTriggers, ns, trigger);
    if (!obj.ok()) {
      LOG_WARN("trigger {}: cannot record {} delivered, {} failed: {}", key, summary.delivered,
               summary.failed, obj.status().message());
      return;
    }
    json updated = *obj;
    updated["status"] = statusAfterDeliveries(obj->value("status", json::object()), summary,
                                              formatRfc3339(Clock::now()));
    auto r = rest_.update(kTriggers, updated, "status");
    if (r.ok()) {
      if (events_) {
        json involved = *obj;
        involved["kind"] = "Trigger";
        involved["apiVersion"] = kApiVersion;
        for (const auto& o : summary.deadLetters) {
          events_->record(involved, "Warning", "DeliveryFailed",
                          fmt::format("event {} (type {}) not delivered after {} attempt(s): {}",
                                      o.event.id, o.event.type, o.attempts, o.error));
        }
      }
      return;
    }
    if (r.status().code() != 409) {
      LOG_WARN("trigger {}: cannot record {} delivered, {} failed: {}", key, summary.delivered,
               summary.failed, r.status().message());
      return;
    }
  }
}

TriggerBroker::TriggerBroker(client::RestClient& rest, std::string gatewayUrl, int workers)
    : rest_(rest),
      target_(rest, std::move(gatewayUrl)),
      events_(std::make_unique<client::ApiEventRecorder>(
          rest, client::ApiEventRecorderOptions{.component = "serverless-gateway"})),
      recorder_(rest, events_.get()),
      dispatcher_(target_, recorder_),
      triggers_(rest, kTriggers),
      workers_(workers) {}

TriggerBroker::~TriggerBroker() { stop(); }

void TriggerBroker::start() {
  triggers_.start();
  recorder_.start();
  dispatcher_.start(workers_);
}

void TriggerBroker::stop() {
  dispatcher_.stop();
  recorder_.stop();
  triggers_.stop();
}

bool TriggerBroker::handles(const std::string& path) {
  return path.rfind("/broker/", 0) == 0 || path.rfind("/trigger/", 0) == 0;
}

void TriggerBroker::serve(const http::Request& req, http::ResponseWriter& w) {
  std::string ns, name;
  const bool toBroker = splitBrokerRoute(req.path, "/broker/", &ns, &name);
  if (!toBroker && !splitBrokerRoute(req.path, "/trigger/", &ns, &name)) {
    return w.send(brokerError(
        404, "use /broker/<namespace>/<broker> or /trigger/<namespace>/<trigger>", "NotFound"));
  }
  if (req.method != "POST") {
    return w.send(brokerError(405, "method " + req.method + " not allowed: POST a CloudEvent",
                              "MethodNotAllowed"));
  }
  if (!triggers_.hasSynced()) {
    return w.send(brokerError(503,
                              "the gateway has not read the Triggers yet (is the Trigger "
                              "CRD installed? the trigger controller installs it)",
                              "Unavailable"));
  }
  auto event = parseCloudEvent(req);
  if (!event.ok()) return w.send(brokerError(400, event.status().message(), "BadRequest"));
  const std::string now = formatRfc3339(Clock::now());

  std::vector<std::pair<json, TriggerSpec>> chosen;
  if (toBroker) {
    for (const auto& t : triggers_.list()) {
      if (api::namespaceOf(t) != ns) continue;
      auto spec = parseTriggerSpec(t);
      if (!spec.ok() || !spec->event || spec->event->broker != name) continue;
      if (matchesFilter(spec->event->filter, *event)) chosen.emplace_back(t, *spec);
    }
  } else {
    auto t = triggers_.get(ns + "/" + name);
    if (!t)
      return w.send(brokerError(404, "trigger " + ns + "/" + name + " not found", "NotFound"));
    auto spec = parseTriggerSpec(*t);
    if (!spec.ok()) return w.send(brokerError(422, spec.status().message(), "InvalidSpec"));
    chosen.emplace_back(*t, *spec);
  }
  json accepted = json::array();
  std::string refused;  // a broker event some matching Trigger could not queue
  for (const auto& [t, spec] : chosen) {
    Delivery d;
    d.ns = ns;
    d.trigger = api::nameOf(t);
    d.target = spec.target;
    d.policy = spec.delivery;
    d.event = *event;
    d.firedAt = now;
    const bool forbid = !toBroker && spec.schedule && spec.schedule->forbidConcurrent;
    Status s = dispatcher_.submit(std::move(d), forbid);
    if (!s.ok()) {
      if (!toBroker) {
        return w.send(brokerError(s.code(), s.message(),
                                  s.code() == 409 ? "ConcurrencyForbidden" : "Unavailable"));
      }
      LOG_WARN("broker {}/{}: event {} not queued for trigger {}: {}", ns, name, event->id,
               api::nameOf(t), s.message());
      refused = s.message();
      continue;
    }
    accepted.push_back(api::nameOf(t));
  }
  if (!refused.empty()) {
    // The sender should retry (the Triggers that took it may then see it twice: at least once).
    return w.send(http::Response::json(
        503, {{"error", refused}, {"type", "Unavailable"}, {"triggers", accepted}}));
  }
  return w.send(http::Response::json(202, {{"id", event->id}, {"triggers", accepted}}));
}

}  // namespace minik8s::serverless
