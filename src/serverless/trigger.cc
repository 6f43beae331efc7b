#include "serverless/trigger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "api/cron_schedule.h"
#include "client/custom_resource_definitions.h"
#include "common/json_pointer.h"
#include "common/time_util.h"
#include "common/yaml_json.h"
#include "serverless/function.h"

namespace minik8s::serverless {

const client::Resource kTriggers{kGroup, "v1", "triggers", true};

namespace {

constexpr const char* kTriggerCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: triggers.serverless.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: serverless.minik8s.io
  scope: Namespaced
  names:
    plural: triggers
    singular: trigger
    kind: Trigger
    listKind: TriggerList
    shortNames: [trg]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Type, type: string, jsonPath: .status.type}
    - {name: Target, type: string, jsonPath: .status.target}
    - {name: Last-Fired, type: date, jsonPath: .status.lastFired}
    - {name: Delivered, type: integer, jsonPath: .status.delivered, priority: 1}
    - {name: Failed, type: integer, jsonPath: .status.failed, priority: 1}
    - {name: Reason, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: Starts a Function or a Workflow on a schedule, a file event or a CloudEvent from a broker.
        properties:
          spec:
            type: object
            required: [target]
            properties:
              target:
                type: object
                description: What the trigger starts (one of function, workflow).
                properties:
                  function: {type: string, description: A Function of the Trigger's namespace}
                  workflow: {type: string, description: A Workflow of the Trigger's namespace (a WorkflowExecution is created)}
              schedule:
                type: object
                required: [cron]
                description: Fire on a schedule.
                properties:
                  cron: {type: string, minLength: 1, description: 'Five cron fields as a CronJob''s schedule, a descriptor (@hourly), or the extension "@every 30s"'}
                  timeZone: {type: string, description: An IANA zone for the cron fields (default UTC)}
                  concurrencyPolicy: {type: string, enum: [Allow, Forbid], default: Allow, description: 'Forbid: skip an activation while the previous one is still being delivered'}
              file:
                type: object
                description: Fire when a file is created or changed under a directory of a volume.
                properties:
                  persistentVolumeClaim: {type: string, description: The claim whose volume is watched}
                  hostPath: {type: string, description: A directory of the node instead (shared filesystems)}
                  path: {type: string, default: /, description: The directory in the volume}
                  pattern: {type: string, default: '*', description: A glob on file names}
                  events:
                    type: array
                    items: {type: string, enum: [created, modified]}
                  pollInterval: {type: string, default: 1s, description: How often the directory is scanned}
              event:
                type: object
                description: Fire on CloudEvents posted to a broker (/broker/NAMESPACE/BROKER on the gateway).
                properties:
                  broker: {type: string, default: default}
                  filter:
                    type: object
                    properties:
                      attributes:
                        type: object
                        description: Exact matches on CloudEvent attributes (type, source, subject, extensions)
                        additionalProperties: {type: string}
              delivery:
                type: object
                default: {}
                properties:
                  retry: {type: integer, minimum: 0, maximum: 20, default: 3, description: Attempts after the first}
                  backoffPolicy: {type: string, enum: [exponential, linear], default: exponential}
                  backoffDelay: {type: string, default: PT0.5S, description: 'ISO 8601 (PT0.5S) or Go (500ms) duration'}
                  deadLetter: {type: string, enum: [record, none], default: record, description: 'record: an Event and an entry of status.deadLetters'}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              type: {type: string}
              target: {type: string}
              lastFired: {type: string, format: date-time}
              lastScheduleTime: {type: string, format: date-time}
              delivered: {type: integer}
              failed: {type: integer}
              skipped: {type: integer}
              deadLetters:
                type: array
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
)";

bool isTriggerName(const std::string& s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, re);
}

std::string triggerStr(const json& o, const char* key, const std::string& def = "") {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : def;
}

Status invalidTriggerField(const std::string& field, const std::string& value,
                           const std::string& why) {
  return Status::BadRequest(field + ": Invalid value: \"" + value + "\": " + why);
}

Result<ScheduleSource> parseScheduleSource(const json& s) {
  ScheduleSource out;
  out.cron = triggerStr(s, "cron");
  if (out.cron.empty()) return Status::BadRequest("spec.schedule.cron: Required value");
  if (out.cron.rfind("@every", 0) == 0) {
    std::string d = out.cron.substr(6);
    d.erase(0, d.find_first_not_of(' '));
    auto period = parseGoDuration(d);
    if (!period || *period < std::chrono::seconds(1)) {
      return invalidTriggerField("spec.schedule.cron", out.cron,
                                 "@every wants a duration of at least 1s, e.g. @every 30s");
    }
    out.every = std::chrono::duration_cast<std::chrono::seconds>(*period);
  } else if (auto c = api::cron::CronSchedule::parse(out.cron); !c.ok()) {
    return invalidTriggerField("spec.schedule.cron", out.cron, c.status().message());
  }
  out.timeZone = triggerStr(s, "timeZone");
  if (!out.timeZone.empty()) {
    if (auto z = api::cron::TimeZone::load(out.timeZone); !z.ok()) {
      return invalidTriggerField("spec.schedule.timeZone", out.timeZone, z.status().message());
    }
  }
  const std::string policy = triggerStr(s, "concurrencyPolicy", "Allow");
  if (policy != "Allow" && policy != "Forbid") {
    return Status::BadRequest("spec.schedule.concurrencyPolicy: Unsupported value: \"" + policy +
                              "\": supported values: \"Allow\", \"Forbid\"");
  }
  out.forbidConcurrent = policy == "Forbid";
  return out;
}

Result<FileSource> parseFileSource(const json& f) {
  FileSource out;
  out.claim = triggerStr(f, "persistentVolumeClaim");
  out.hostPath = triggerStr(f, "hostPath");
  if (out.claim.empty() == out.hostPath.empty()) {
    return Status::BadRequest(
        "spec.file: Invalid value: exactly one of persistentVolumeClaim and hostPath");
  }
  if (!out.claim.empty() && !isTriggerName(out.claim)) {
    return invalidTriggerField("spec.file.persistentVolumeClaim", out.claim,
                               "must be a claim's name");
  }
  if (!out.hostPath.empty() && out.hostPath[0] != '/') {
    return invalidTriggerField("spec.file.hostPath", out.hostPath, "must be an absolute path");
  }
  out.path = triggerStr(f, "path", "/");
  if (out.path.find("..") != std::string::npos) {
    return invalidTriggerField("spec.file.path", out.path, "must not contain '..'");
  }
  out.pattern = triggerStr(f, "pattern", "*");
  if (out.pattern.empty() || out.pattern.find('/') != std::string::npos) {
    return invalidTriggerField("spec.file.pattern", out.pattern, "a glob on file names (no '/')");
  }
  if (f.contains("events")) {
    if (!f["events"].is_array() || f["events"].empty()) {
      return Status::BadRequest("spec.file.events: Invalid value: a list of created, modified");
    }
    out.created = out.modified = false;
    for (size_t i = 0; i < f["events"].size(); ++i) {
      const json& e = f["events"][i];
      const std::string v = e.is_string() ? e.get<std::string>() : e.dump();
      if (v == "created") {
        out.created = true;
      } else if (v == "modified") {
        out.modified = true;
      } else {
        return Status::BadRequest(fmt::format(
            "spec.file.events[{}]: Unsupported value: \"{}\": supported values: \"created\", "
            "\"modified\"",
            i, v));
      }
    }
  }
  const std::string interval = triggerStr(f, "pollInterval", "1s");
  auto d = parseGoDuration(interval);
  if (!d || *d < std::chrono::milliseconds(100)) {
    return invalidTriggerField("spec.file.pollInterval", interval, "a duration of at least 100ms");
  }
  out.pollInterval = *d;
  return out;
}

Result<EventSource> parseEventSource(const json& e) {
  EventSource out;
  out.broker = triggerStr(e, "broker", "default");
  if (!isTriggerName(out.broker))
    return invalidTriggerField("spec.event.broker", out.broker, "must be a name");
  const json attrs = valueAt(e, "/filter/attributes", json::object());
  if (!attrs.is_object()) {
    return Status::BadRequest("spec.event.filter.attributes: Invalid value: must be a map");
  }
  for (const auto& [name, value] : attrs.items()) {
    const std::string field = "spec.event.filter.attributes[" + name + "]";
    if (!validAttributeName(name)) {
      return invalidTriggerField(
          field, name, "CloudEvent attribute names are lower-case letters and digits, at most 20");
    }
    if (!value.is_string()) return Status::BadRequest(field + ": Invalid value: must be a string");
    out.filter[name] = value.get<std::string>();
  }
  return out;
}

Result<DeliveryPolicy> parseDeliveryPolicy(const json& d) {
  DeliveryPolicy out;
  if (d.contains("retry")) {
    if (!d["retry"].is_number_integer() || d["retry"].get<int>() < 0 ||
        d["retry"].get<int>() > 20) {
      return Status::BadRequest("spec.delivery.retry: Invalid value: " + d["retry"].dump() +
                                ": must be between 0 and 20");
    }
    out.retry = d["retry"].get<int>();
  }
  const std::string policy = triggerStr(d, "backoffPolicy", "exponential");
  if (policy != "exponential" && policy != "linear") {
    return Status::BadRequest("spec.delivery.backoffPolicy: Unsupported value: \"" + policy +
                              "\": supported values: \"exponential\", \"linear\"");
  }
  out.exponential = policy == "exponential";
  const std::string delay = triggerStr(d, "backoffDelay", "PT0.5S");
  auto ms = parseDelay(delay);
  if (!ms) return invalidTriggerField("spec.delivery.backoffDelay", delay, "want PT0.5S or 500ms");
  out.backoffDelay = *ms;
  const std::string dl = triggerStr(d, "deadLetter", "record");
  if (dl != "record" && dl != "none") {
    return Status::BadRequest("spec.delivery.deadLetter: Unsupported value: \"" + dl +
                              "\": supported values: \"record\", \"none\"");
  }
  out.deadLetter = dl == "record";
  return out;
}

}  // namespace

json triggerCrd() {
  static const json crd = [] {
    auto parsed = parseYaml(kTriggerCrdYaml);
    return parsed.ok() ? *parsed : json::object();
  }();
  return crd;
}

Status ensureTriggerCrd(client::RestClient& rest) {
  return client::ensureCustomResourceDefinition(rest, triggerCrd());
}

std::optional<std::chrono::milliseconds> parseDelay(const std::string& text) {
  if (text.rfind("PT", 0) != 0) return parseGoDuration(text);
  static const std::regex iso(R"(PT(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)");
  std::smatch m;
  if (text.size() == 2 || !std::regex_match(text, m, iso)) return std::nullopt;
  double seconds = 0;
  if (m[1].matched) seconds += 3600.0 * std::stod(m[1]);
  if (m[2].matched) seconds += 60.0 * std::stod(m[2]);
  if (m[3].matched) seconds += std::stod(m[3]);
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

Result<TriggerSpec> parseTriggerSpec(const json& trigger) {
  const json spec = trigger.value("spec", json::object());
  if (!spec.is_object()) return Status::BadRequest("spec: Invalid value: must be an object");
  TriggerSpec out;
  const json target = spec.value("target", json::object());
  if (!target.is_object()) return Status::BadRequest("spec.target: Invalid value: an object");
  out.target.function = triggerStr(target, "function");
  out.target.workflow = triggerStr(target, "workflow");
  if (out.target.function.empty() && out.target.workflow.empty()) {
    return Status::BadRequest("spec.target: Required value: one of function, workflow");
  }
  if (!out.target.function.empty() && !out.target.workflow.empty()) {
    return Status::BadRequest("spec.target: Invalid value: one of function, workflow, not both");
  }
  if (!out.target.function.empty() && !isTriggerName(out.target.function)) {
    return invalidTriggerField("spec.target.function", out.target.function,
                               "must be a Function's name");
  }
  if (!out.target.workflow.empty() && !isTriggerName(out.target.workflow)) {
    return invalidTriggerField("spec.target.workflow", out.target.workflow,
                               "must be a Workflow's name");
  }
  const int sources = (spec.contains("schedule") ? 1 : 0) + (spec.contains("file") ? 1 : 0) +
                      (spec.contains("event") ? 1 : 0);
  if (sources != 1) {
    return Status::BadRequest(fmt::format(
        "spec: Invalid value: exactly one of schedule, file, event is required ({} given)",
        sources));
  }
  for (const char* key : {"schedule", "file", "event", "delivery"}) {
    if (spec.contains(key) && !spec[key].is_object()) {
      return Status::BadRequest(std::string("spec.") + key + ": Invalid value: must be an object");
    }
  }
  if (spec.contains("schedule")) {
    auto s = parseScheduleSource(spec["schedule"]);
    if (!s.ok()) return s.status();
    out.schedule = *s;
  } else if (spec.contains("file")) {
    auto f = parseFileSource(spec["file"]);
    if (!f.ok()) return f.status();
    out.file = *f;
  } else {
    auto e = parseEventSource(spec["event"]);
    if (!e.ok()) return e.status();
    out.event = *e;
  }
  auto d = parseDeliveryPolicy(spec.value("delivery", json::object()));
  if (!d.ok()) return d.status();
  out.delivery = *d;
  return out;
}

std::chrono::milliseconds retryBackoff(const DeliveryPolicy& policy, int retry) {
  using std::chrono::milliseconds;
  const milliseconds cap = std::chrono::hours(1);
  retry = std::max(retry, 1);
  if (!policy.exponential) return std::min<milliseconds>(policy.backoffDelay * retry, cap);
  milliseconds d = policy.backoffDelay;
  for (int i = 1; i < retry && d < cap; ++i) d *= 2;
  return std::min(d, cap);
}

Result<ScheduleDecision> scheduleDecision(const ScheduleSource& schedule, SysSeconds last,
                                          SysSeconds now) {
  ScheduleDecision out;
  if (schedule.every) {
    const auto period = *schedule.every;
    if (now < last + period) {
      out.next = last + period;
      return out;
    }
    const auto periods = (now - last) / period;  // >= 1
    out.fire = last + periods * period;
    out.next = *out.fire + period;
    return out;
  }
  auto cron = api::cron::CronSchedule::parse(schedule.cron);
  if (!cron.ok()) return cron.status();
  std::shared_ptr<const api::cron::TimeZone> zone;
  if (!schedule.timeZone.empty()) {
    auto z = api::cron::TimeZone::load(schedule.timeZone);
    if (!z.ok()) return z.status();
    zone = *z;
  }
  const api::cron::TimeZone& tz = zone ? *zone : api::cron::TimeZone::utc();
  SysSeconds from = std::max(last, now - std::chrono::hours(1));
  for (auto t = cron->next(from, tz); t; t = cron->next(*t, tz)) {
    if (*t > now) {
      out.next = *t;
      break;
    }
    out.fire = *t;
  }
  return out;
}

void DeliverySummary::add(const DeliveryOutcome& outcome, bool deadLetter) {
  if (outcome.firedAt > lastFired) lastFired = outcome.firedAt;
  if (outcome.delivered) {
    ++delivered;
    return;
  }
  ++failed;
  if (!deadLetter) return;
  deadLetters.push_back(outcome);
  if (deadLetters.size() > kMaxDeadLetters) deadLetters.erase(deadLetters.begin());
}

json statusAfterDeliveries(const json& status, const DeliverySummary& summary,
                           const std::string& now) {
  json out = status.is_object() ? status : json::object();
  if (!summary.lastFired.empty() && summary.lastFired > out.value("lastFired", std::string())) {
    out["lastFired"] = summary.lastFired;
  }
  if (summary.delivered > 0) {
    out["delivered"] = out.value("delivered", 0) + summary.delivered;
    out["lastDelivered"] = now;
  }
  if (summary.failed > 0) out["failed"] = out.value("failed", 0) + summary.failed;
  if (summary.deadLetters.empty()) return out;
  json letters = out.value("deadLetters", json::array());
  if (!letters.is_array()) letters = json::array();
  for (const auto& o : summary.deadLetters) {
    json letter = {{"time", now},
                   {"id", o.event.id},
                   {"type", o.event.type},
                   {"source", o.event.source},
                   {"attempts", o.attempts},
                   {"error", o.error}};
    if (!o.event.subject.empty()) letter["subject"] = o.event.subject;
    letters.push_back(letter);
  }
  while (letters.size() > kMaxDeadLetters) letters.erase(letters.begin());
  out["deadLetters"] = letters;
  return out;
}

json statusAfterDelivery(const json& status, const DeliveryOutcome& outcome, bool deadLetter,
                         const std::string& now) {
  DeliverySummary summary;
  summary.add(outcome, deadLetter);
  return statusAfterDeliveries(status, summary, now);
}

}  // namespace minik8s::serverless
