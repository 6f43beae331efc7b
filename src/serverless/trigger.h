// Trigger (serverless.minik8s.io/v1, short name trg): what starts a Function or a Workflow
// besides a direct request, as Knative Eventing's Trigger and its sources do:
//   spec.target    {function: NAME} or {workflow: NAME}
//   spec.schedule  {cron: "*/5 * * * *" | "@every 30s", timeZone, concurrencyPolicy Allow|Forbid}
//   spec.file      {persistentVolumeClaim: NAME | hostPath: /dir, path, pattern, events,
//   pollInterval} spec.event     {broker: NAME, filter: {attributes: {type: ..., source: ..., ext:
//   ...}}} spec.delivery  {retry, backoffPolicy exponential|linear, backoffDelay, deadLetter
//   record|none}
// exactly one of schedule, file and event. The CRD (printer columns TYPE/TARGET/LAST-FIRED/AGE)
// is installed by the trigger controller at start. This header holds the spec as read from an
// object, the pure decisions (when a schedule fires, the retry back-off, the status after a
// delivery) and where the gateway is. Pure functions except the REST helpers; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/status.h"
#include "serverless/cloud_event.h"

namespace minik8s::serverless {

extern const client::Resource kTriggers;  // serverless.minik8s.io/v1 triggers (namespaced)
// On a file trigger's watcher Deployment and pods: the Trigger's name.
inline constexpr const char* kTriggerLabel = "serverless.minik8s.io/trigger";
// CloudEvent types of the built-in sources.
inline constexpr const char* kScheduleEventType = "minik8s.schedule";
inline constexpr const char* kFileCreatedEventType = "minik8s.file.created";
inline constexpr const char* kFileModifiedEventType = "minik8s.file.modified";
// Dead letters kept in a Trigger's status (the newest last).
inline constexpr size_t kMaxDeadLetters = 10;

json triggerCrd();
Status ensureTriggerCrd(client::RestClient& rest);

struct TriggerTarget {
  std::string function;  // one of the two
  std::string workflow;
  std::string describe() const {
    return function.empty() ? "workflow/" + workflow : "function/" + function;
  }
};

struct ScheduleSource {
  std::string cron;                           // five fields, a descriptor, or "@every <duration>"
  std::optional<std::chrono::seconds> every;  // the extension: a fixed period
  std::string timeZone;                       // "" = UTC
  bool forbidConcurrent = false;              // concurrencyPolicy Forbid
};

struct FileSource {
  std::string claim;       // persistentVolumeClaim, or
  std::string hostPath;    // a directory on the node (every node: the same on a shared filesystem)
  std::string path = "/";  // the directory under the volume that is watched (and below it)
  std::string pattern = "*";  // a glob on the file's name
  bool created = true, modified = true;
  std::chrono::milliseconds pollInterval{1000};
};

struct EventSource {
  std::string broker = "default";
  std::map<std::string, std::string> filter;  // attribute -> exact value
};

struct DeliveryPolicy {
  int retry = 3;  // attempts after the first
  bool exponential = true;
  std::chrono::milliseconds backoffDelay{500};
  bool deadLetter = true;  // record the event when every attempt failed
};

struct TriggerSpec {
  TriggerTarget target;
  std::optional<ScheduleSource> schedule;
  std::optional<FileSource> file;
  std::optional<EventSource> event;
  DeliveryPolicy delivery;
  std::string type() const { return schedule ? "schedule" : file ? "file" : "event"; }
};

// Reads and checks a Trigger's spec. BadRequest with the field path (spec.target: Required
// value; spec.schedule.cron: ...; "spec: Invalid value: exactly one of schedule, file, event").
Result<TriggerSpec> parseTriggerSpec(const json& trigger);

// Durations as Knative writes backoffDelay (ISO 8601 "PT0.5S", "PT1M") or as Go does ("500ms").
std::optional<std::chrono::milliseconds> parseDelay(const std::string& text);

// The wait before retry number `retry` (1 = the first retry): exponential backoffDelay *
// 2^(retry-1), linear backoffDelay * retry; capped at one hour.
std::chrono::milliseconds retryBackoff(const DeliveryPolicy& policy, int retry);

using SysSeconds = std::chrono::sys_seconds;
struct ScheduleDecision {
  std::optional<SysSeconds> fire;  // the activation to fire now (the latest missed one), if any
  std::optional<SysSeconds> next;  // the next activation after now (when to look again)
};
// Given the last activation handled (or the Trigger's creation) and now: a missed activation
// fires once (the latest, within the last hour, as a CronJob without startingDeadlineSeconds
// would only after its 100-miss limit), later ones wait. BadRequest for a bad schedule or zone.
Result<ScheduleDecision> scheduleDecision(const ScheduleSource& schedule, SysSeconds last,
                                          SysSeconds now);

// What one delivery ended as, for the Trigger's status.
struct DeliveryOutcome {
  bool delivered = false;
  int attempts = 0;
  std::string error;    // the last attempt's failure
  std::string firedAt;  // when the event reached the trigger (status.lastFired)
  CloudEvent event;
};
// The status after `outcome`: delivered/failed counts, lastFired, lastDelivered, and on failure a
// dead letter {time, id, type, source, subject, attempts, error} appended to deadLetters (the
// newest kMaxDeadLetters kept) when `deadLetter`.
json statusAfterDelivery(const json& status, const DeliveryOutcome& outcome, bool deadLetter,
                         const std::string& now);

// The outcomes of one Trigger gathered between two status writes (the gateway writes each
// Trigger's status at most every 250 ms, not once per event).
struct DeliverySummary {
  int delivered = 0, failed = 0;
  std::string lastFired;
  std::vector<DeliveryOutcome> deadLetters;  // the newest kMaxDeadLetters
  void add(const DeliveryOutcome& outcome, bool deadLetter);
  bool empty() const { return delivered == 0 && failed == 0; }
};
// statusAfterDelivery for all of them at once.
json statusAfterDeliveries(const json& status, const DeliverySummary& summary,
                           const std::string& now);

}  // namespace minik8s::serverless
