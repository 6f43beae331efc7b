#include "controllers/trigger/trigger_controller.h"

#include <fmt/format.h>

#include "api/object_meta.h"
#include "common/http_client.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "serverless/function.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
namespace sl = serverless;

namespace {

using client::resources::kDeployments;

constexpr const char* kWatcherHashAnnotation = "serverless.minik8s.io/watcher-hash";

std::string triggerSource(const std::string& ns, const std::string& name) {
  return "/apis/serverless.minik8s.io/v1/namespaces/" + ns + "/triggers/" + name;
}

json triggerReadyCondition(const json& old, bool ok, const std::string& reason,
                           const std::string& message, const std::string& now) {
  const std::string status = ok ? "True" : "False";
  std::string since = now;
  for (const auto& c : old.value("conditions", json::array())) {
    if (c.value("type", "") == "Ready" && c.value("status", "") == status) {
      since = c.value("lastTransitionTime", now);
    }
  }
  return json::array({{{"type", "Ready"},
                       {"status", status},
                       {"reason", reason},
                       {"message", message},
                       {"lastTransitionTime", since}}});
}

bool ownedByTrigger(const json& obj, const std::string& name) {
  auto ref = controllerRef(obj);
  return ref && ref->value("kind", "") == "Trigger" &&
         ref->value("apiVersion", "") == sl::kApiVersion && ref->value("name", "") == name;
}

class GatewayEventSender : public TriggerEventSender {
 public:
  explicit GatewayEventSender(client::RestClient& rest) : rest_(rest) {}
  Status send(const std::string& ns, const std::string& trigger,
              const sl::CloudEvent& event) override {
    std::string url;
    {
      std::lock_guard lock(mu_);
      url = url_;
    }
    if (url.empty()) {
      auto found = sl::gatewayNodeUrl(rest_);
      if (!found.ok()) return found.status();
      url = *found;
    }
    http::ClientTimeouts t;
    t.connect = std::chrono::seconds(2);
    t.request = std::chrono::seconds(10);
    http::Client client(url, {}, t);
    auto headers = sl::toBinaryHeaders(event);
    headers.emplace_back("Content-Type", "application/json");
    auto r = client.request("POST", "/trigger/" + ns + "/" + trigger,
                            event.data.is_null() ? "" : event.data.dump(), headers);
    std::lock_guard lock(mu_);
    if (!r.ok()) {
      url_.clear();  // look the gateway up again next time (a node may have gone)
      return r.status();
    }
    url_ = url;
    if (r->status == 202) return {};
    json body = json::parse(r->body, nullptr, false);
    const std::string message =
        body.is_object() ? body.value("error", r->body) : r->body.substr(0, 200);
    if (r->status == 409) return Status::ConflictMessage(message);  // Forbid: still delivering
    if (r->status == 422) return Status::BadRequest(message);  // its copy of the spec is invalid
    return Status::Unavailable(fmt::format("gateway answered {}: {}", r->status, message));
  }

 private:
  client::RestClient& rest_;
  std::mutex mu_;
  std::string url_;
};

}  // namespace

std::unique_ptr<TriggerEventSender> gatewayEventSender(client::RestClient& rest) {
  return std::make_unique<GatewayEventSender>(rest);
}

std::string fileWatcherName(const std::string& trigger) { return trigger + "-trigger-watch"; }

json fileWatcherDeployment(const json& trigger, const sl::FileSource& file,
                           const std::string& image, const std::string& gatewayUrl) {
  const std::string ns = namespaceOf(trigger), name = nameOf(trigger);
  std::string dir = "/watch";
  if (!file.path.empty() && file.path != "/") {
    dir += (file.path[0] == '/' ? "" : "/") + file.path;
  }
  std::string events;
  if (file.created) events = "created";
  if (file.modified) events += events.empty() ? "modified" : ",modified";
  json volume = {{"name", "watched"}};
  if (!file.claim.empty()) {
    volume["persistentVolumeClaim"] = {{"claimName", file.claim}, {"readOnly", true}};
  } else {
    volume["hostPath"] = {{"path", file.hostPath}, {"type", "Directory"}};
  }
  const json labels = {{sl::kTriggerLabel, name}};
  json container = {
      {"name", "watcher"},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"args",
       {"serverless-file-watcher", "--dir", dir, "--pattern", file.pattern, "--events", events,
        "--interval", fmt::format("{}ms", file.pollInterval.count()), "--url",
        gatewayUrl + "/trigger/" + ns + "/" + name, "--source", triggerSource(ns, name)}},
      {"volumeMounts", {{{"name", "watched"}, {"mountPath", "/watch"}, {"readOnly", true}}}},
      {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}}}};
  json templ = {{"metadata", {{"labels", labels}}},
                {"spec",
                 {{"containers", json::array({container})},
                  {"volumes", json::array({volume})},
                  {"automountServiceAccountToken", false},
                  {"terminationGracePeriodSeconds", 2}}}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", fileWatcherName(name)},
            {"namespace", ns},
            {"labels", labels},
            {"annotations", {{kWatcherHashAnnotation, sl::stableHash(templ.dump())}}},
            {"ownerReferences",
             {{{"apiVersion", sl::kApiVersion},
               {"kind", "Trigger"},
               {"name", name},
               {"uid", api::uidOf(trigger)},
               {"controller", true},
               {"blockOwnerDeletion", true}}}}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", labels}}},
            {"strategy", {{"type", "Recreate"}}},
            {"template", templ}}}};
}

TriggerController::TriggerController(client::RestClient& rest, client::Informer& triggers,
                                     client::Informer& deployments,
                                     TriggerControllerOptions options)
    : rest_(rest),
      triggers_(triggers),
      deployments_(deployments),
      options_(std::move(options)),
      ownSender_(options_.sender ? nullptr : gatewayEventSender(rest)),
      sender_(options_.sender ? options_.sender : ownSender_.get()),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "trigger") {
  auto enqueue = [this](const json& t) { queue_.add(client::objectKey(t)); };
  triggers_.addHandlers({enqueue, [enqueue](const json&, const json& t) { enqueue(t); }, enqueue});
  auto enqueueOwner = [this](const json& obj) {
    const std::string owner = api::labelValue(obj, sl::kTriggerLabel);
    if (!owner.empty()) queue_.add(namespaceOf(obj) + "/" + owner);
  };
  deployments_.addHandlers({enqueueOwner,
                            [enqueueOwner](const json&, const json& d) { enqueueOwner(d); },
                            enqueueOwner});
}

TriggerController::~TriggerController() { stop(); }
void TriggerController::start() { workers_.start(options_.workers); }
void TriggerController::stop() { workers_.stop(); }

Status TriggerController::syncDeleted(const std::string& ns, const std::string& name) {
  {
    std::lock_guard lock(firedMu_);
    lastFired_.erase(ns + "/" + name);
  }
  auto dep = deployments_.get(ns + "/" + fileWatcherName(name));
  if (!dep || !ownedByTrigger(*dep, name)) return {};
  LOG_INFO("trigger controller: Trigger {}/{} is gone: deleting its watcher", ns, name);
  auto r = rest_.remove(kDeployments, ns, nameOf(*dep), {{"propagationPolicy", "Background"}});
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

Status TriggerController::syncSchedule(const std::string& key, const json& trigger,
                                       const sl::ScheduleSource& schedule, json* status) {
  const auto now = std::chrono::floor<std::chrono::seconds>(options_.now());
  auto last = parseRfc3339(status->value("lastScheduleTime", std::string()));
  if (!last) last = parseRfc3339(api::stringAt(trigger, "/metadata/creationTimestamp"));
  auto lastSec = std::chrono::floor<std::chrono::seconds>(last.value_or(Clock::now()));
  {
    std::lock_guard lock(firedMu_);
    if (auto it = lastFired_.find(key); it != lastFired_.end() && it->second > lastSec) {
      lastSec = it->second;
    }
  }
  auto decision = sl::scheduleDecision(schedule, lastSec, now);
  if (!decision.ok()) return decision.status();
  const std::string nowText = formatRfc3339(now);
  if (decision->fire) {
    const auto [ns, name] = client::splitObjectKey(key);
    sl::CloudEvent e;
    e.id = fmt::format("{}.{}.{}", ns, name, decision->fire->time_since_epoch().count());
    e.source = triggerSource(ns, name);
    e.type = sl::kScheduleEventType;
    e.time = formatRfc3339(*decision->fire);
    e.datacontenttype = "application/json";
    e.data = {{"schedule", schedule.cron}, {"scheduledTime", e.time}};
    if (!schedule.timeZone.empty()) e.data["timeZone"] = schedule.timeZone;
    Status s = sender_->send(ns, name, e);
    if (!s.ok() && s.code() != 409) {
      // The activation stays due: the next sync tries it again. A refusal (400) comes from a
      // gateway whose copy of the Trigger is invalid (older or newer than this one).
      const bool refused = s.code() == 400;
      (*status)["conditions"] =
          triggerReadyCondition(*status, false, refused ? "GatewayRefused" : "GatewayUnavailable",
                                (refused ? "the serverless gateway refused the activation: "
                                         : "cannot reach the serverless gateway: ") +
                                    s.message(),
                                nowText);
      queue_.addAfter(key, std::chrono::seconds(5));
      return {};
    }
    if (s.code() == 409) {
      (*status)["skipped"] = status->value("skipped", 0) + 1;
      if (options_.events) {
        json involved = trigger;
        involved["kind"] = "Trigger";
        involved["apiVersion"] = sl::kApiVersion;
        options_.events->record(involved, "Normal", "ActivationSkipped",
                                "the activation of " + e.time +
                                    " was skipped: the previous one is still being delivered "
                                    "(concurrencyPolicy Forbid)");
      }
    }
    (*status)["lastScheduleTime"] = e.time;
    std::lock_guard lock(firedMu_);
    lastFired_[key] = *decision->fire;
  }
  std::string message = "schedule " + schedule.cron;
  if (decision->next) {
    message += ", next at " + formatRfc3339(*decision->next);
    const auto wait = *decision->next - now;
    queue_.addAfter(key, std::chrono::duration_cast<std::chrono::milliseconds>(wait) +
                             std::chrono::milliseconds(5));
  }
  (*status)["conditions"] = triggerReadyCondition(*status, true, "Scheduled", message, nowText);
  return {};
}

Status TriggerController::syncFile(const json& trigger, const sl::FileSource& file, json* status) {
  const std::string ns = namespaceOf(trigger), name = nameOf(trigger);
  const std::string nowText = formatRfc3339(options_.now());
  auto gateway = sl::gatewayClusterUrl(rest_);
  if (!gateway.ok()) {
    (*status)["conditions"] = triggerReadyCondition(
        *status, false, "GatewayUnavailable",
        "the watcher posts to the serverless gateway: " + gateway.status().message(), nowText);
    queue_.addAfter(ns + "/" + name, std::chrono::seconds(10));
    return {};
  }
  json want = fileWatcherDeployment(trigger, file, options_.watcherImage, *gateway);
  auto dep = deployments_.get(ns + "/" + fileWatcherName(name));
  if (dep && !ownedByTrigger(*dep, name)) {
    (*status)["conditions"] = triggerReadyCondition(
        *status, false, "NameConflict",
        "Deployment " + fileWatcherName(name) + " exists and is not this Trigger's", nowText);
    return {};
  }
  if (dep && controllerRef(*dep)->value("uid", "") != api::uidOf(trigger)) {
    // An earlier Trigger of the same name left it: replace it.
    auto r = rest_.remove(kDeployments, ns, nameOf(*dep), {{"propagationPolicy", "Background"}});
    if (!r.ok() && r.status().code() != 404) return r.status();
    queue_.addAfter(ns + "/" + name, std::chrono::seconds(1));
    return {};
  }
  const std::string wantHash = api::annotationValue(want, kWatcherHashAnnotation);
  if (!dep) {
    auto created = rest_.create(kDeployments, ns, want);
    if (!created.ok() && created.status().code() != 409) return created.status();
    if (created.ok()) dep = *created;
  } else if (api::annotationValue(*dep, kWatcherHashAnnotation) != wantHash) {
    json updated = *dep;
    updated["metadata"]["annotations"][kWatcherHashAnnotation] = wantHash;
    updated["spec"]["template"] = want["spec"]["template"];
    auto r = rest_.update(kDeployments, updated);
    if (!r.ok()) return r.status();
    dep = *r;
  }
  const int ready = dep ? valueAt(*dep, "/status/readyReplicas", 0) : 0;
  const std::string where =
      (file.claim.empty() ? "hostPath " + file.hostPath : "claim " + file.claim) + " " + file.path +
      " (" + file.pattern + ")";
  if (ready > 0) {
    (*status)["conditions"] =
        triggerReadyCondition(*status, true, "Watching", "watching " + where, nowText);
  } else {
    (*status)["conditions"] = triggerReadyCondition(
        *status, false, "WatcherStarting",
        "the watcher pod of " + fileWatcherName(name) + " is not ready yet", nowText);
  }
  return {};
}

Status TriggerController::sync(const std::string& key) {
  const auto [ns, name] = client::splitObjectKey(key);
  auto cached = triggers_.get(key);
  if (!cached || isTerminating(*cached)) return syncDeleted(ns, name);
  const json& trigger = *cached;
  const json current = trigger.value("status", json::object());
  json status = current;
  const std::string nowText = formatRfc3339(options_.now());

  auto spec = sl::parseTriggerSpec(trigger);
  if (!spec.ok()) {
    status["conditions"] =
        triggerReadyCondition(current, false, "InvalidSpec", spec.status().message(), nowText);
    Status s = syncDeleted(ns, name);  // a file trigger changed into a bad one: no watcher
    if (!s.ok()) return s;
  } else {
    status["type"] = spec->type();
    status["target"] = spec->target.describe();
    Status s;
    if (spec->schedule) {
      s = syncSchedule(key, trigger, *spec->schedule, &status);
    } else if (spec->file) {
      s = syncFile(trigger, *spec->file, &status);
    } else {
      s = syncDeleted(ns, name);
      status["conditions"] = triggerReadyCondition(
          current, true, "Listening",
          "POST CloudEvents to the gateway's /broker/" + ns + "/" + spec->event->broker, nowText);
    }
    if (!s.ok()) return s;
  }
  if (status == current) return {};
  // A merge patch of the fields this controller owns: the gateway's counters stay as they are.
  json patch = json::object();
  for (const auto& [field, value] : status.items()) {
    if (!current.contains(field) || current[field] != value) patch[field] = value;
  }
  auto r = rest_.patch(sl::kTriggers, ns, name, {{"status", patch}}, "merge", "status");
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

}  // namespace minik8s::controllers
