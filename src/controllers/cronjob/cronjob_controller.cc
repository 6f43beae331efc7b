#include "controllers/cronjob/cronjob_controller.h"

#include <algorithm>
#include <set>

#include "api/cron_schedule.h"
#include "api/object_meta.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/job/job_util.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

const client::Resource kCronJobs{"batch", "v1", "cronjobs", true};

namespace cron = api::cron;

namespace {

using client::resources::kJobs;
constexpr char kScheduledTimestampAnnotation[] = "batch.kubernetes.io/cronjob-scheduled-timestamp";
constexpr int kTooManyMissed = 100;

cron::SysSeconds toSys(WallClock::time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t);
}

json jobReference(const json& job) {
  return {{"kind", "Job"},
          {"namespace", namespaceOf(job)},
          {"name", nameOf(job)},
          {"uid", uidOf(job)},
          {"apiVersion", "batch/v1"},
          {"resourceVersion", stringAt(job, "/metadata/resourceVersion")}};
}

// When a finished Job counts as started, for the history order.
std::string startedAt(const json& job) {
  std::string t = stringAt(job, "/status/startTime");
  return t.empty() ? stringAt(job, "/metadata/creationTimestamp") : t;
}

}  // namespace

CronJobController::CronJobController(client::RestClient& rest, client::Informer& cronJobs,
                                     client::Informer& jobs, CronJobControllerOptions options)
    : rest_(rest),
      cronJobs_(cronJobs),
      jobs_(jobs),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "cronjob") {
  auto enqueue = [this](const json& cj) { queue_.add(client::objectKey(cj)); };
  cronJobs_.addHandlers(
      {enqueue, [enqueue](const json&, const json& cj) { enqueue(cj); }, nullptr});
  auto enqueueOwner = [this](const json& job) {
    auto ref = controllerRef(job);
    if (ref && ref->value("kind", "") == "CronJob") {
      queue_.add(namespaceOf(job) + "/" + ref->value("name", ""));
    }
  };
  jobs_.addHandlers({enqueueOwner, [enqueueOwner](const json&, const json& j) { enqueueOwner(j); },
                     enqueueOwner});
}

CronJobController::~CronJobController() { stop(); }
void CronJobController::start() { workers_.start(options_.workers); }
void CronJobController::stop() { workers_.stop(); }

void CronJobController::recordEvent(const json& cronJob, const std::string& type,
                                    const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = cronJob;
  involved["kind"] = "CronJob";
  involved["apiVersion"] = "batch/v1";
  options_.events->record(involved, type, reason, message);
}

void CronJobController::requeueAt(const std::string& key, WallClock::time_point at) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at - options_.now());
  queue_.addAfter(key,
                  std::max(left, std::chrono::milliseconds(0)) + std::chrono::milliseconds(100));
}

Status CronJobController::sync(const std::string& key) {
  auto cached = cronJobs_.get(key);
  if (!cached || isTerminating(*cached)) return Status::Ok();
  const json& cj = *cached;
  const std::string ns = namespaceOf(cj), uid = uidOf(cj);
  const json spec = cj.value("spec", json::object());
  const json oldStatus = cj.value("status", json::object());
  json status = oldStatus.is_object() ? oldStatus : json::object();
  const auto now = options_.now();

  std::vector<json> children;
  std::set<std::string> childUids;
  for (const auto& job : jobs_.byIndexShared("namespace", ns)) {
    auto ref = controllerRef(*job);
    if (!ref || ref->value("uid", "") != uid) continue;
    childUids.insert(uidOf(*job));
    children.push_back(*job);
  }

  // status.active: running children only; a reference the cache does not know is checked live.
  json active = json::array();
  std::set<std::string> activeUids;
  for (const auto& ref : status.value("active", json::array())) {
    const std::string refUid = ref.value("uid", "");
    if (childUids.count(refUid)) continue;  // decided below from the cached Job
    auto live = rest_.get(kJobs, ns, ref.value("name", ""));
    if (live.ok() && uidOf(*live) == refUid && !job::isJobFinished(*live)) {
      active.push_back(ref);
      activeUids.insert(refUid);
    } else if (!live.ok() && live.status().code() != 404) {
      return live.status();
    }
  }
  const std::set<std::string> wasActive = [&] {
    std::set<std::string> s;
    for (const auto& ref : status.value("active", json::array())) s.insert(ref.value("uid", ""));
    return s;
  }();
  std::vector<json> succeeded, failed;
  for (const json& job : children) {
    if (!job::isJobFinished(job)) {
      if (!activeUids.count(uidOf(job))) {
        active.push_back(jobReference(job));
        activeUids.insert(uidOf(job));
      }
      continue;
    }
    const bool complete = job::trueCondition(job, "Complete") != nullptr;
    if (wasActive.count(uidOf(job))) {
      recordEvent(
          cj, "Normal", "SawCompletedJob",
          "Saw completed job: " + nameOf(job) + ", status: " + (complete ? "Complete" : "Failed"));
    }
    if (complete) {
      succeeded.push_back(job);
      const std::string done = stringAt(job, "/status/completionTime");
      if (!done.empty() && done > status.value("lastSuccessfulTime", std::string())) {
        status["lastSuccessfulTime"] = done;
      }
    } else {
      failed.push_back(job);
    }
  }
  if (active.empty()) {
    status.erase("active");
  } else {
    status["active"] = active;
  }

  // History: the oldest finished Jobs beyond the limits go (with their pods).
  Status firstError = Status::Ok();
  for (auto [list, limitField, fallback] :
       {std::tuple{&succeeded, "successfulJobsHistoryLimit", int64_t{3}},
        std::tuple{&failed, "failedJobsHistoryLimit", int64_t{1}}}) {
    const json limitJson = spec.value(limitField, json(fallback));
    const int64_t limit = limitJson.is_number_integer() ? limitJson.get<int64_t>() : fallback;
    if (static_cast<int64_t>(list->size()) <= limit) continue;
    std::sort(list->begin(), list->end(),
              [](const json& a, const json& b) { return startedAt(a) < startedAt(b); });
    const size_t excess = list->size() - static_cast<size_t>(std::max<int64_t>(limit, 0));
    for (size_t i = 0; i < excess; ++i) {
      json opts = {{"kind", "DeleteOptions"},
                   {"apiVersion", "v1"},
                   {"propagationPolicy", "Background"},
                   {"preconditions", {{"uid", uidOf((*list)[i])}}}};
      auto r = rest_.remove(kJobs, ns, nameOf((*list)[i]), opts);
      if (r.ok()) {
        recordEvent(cj, "Normal", "SuccessfulDelete", "Deleted job " + nameOf((*list)[i]));
      } else if (r.status().code() != 404 && r.status().code() != 409 && firstError.ok()) {
        firstError = r.status();
      }
    }
  }

  auto writeStatus = [&]() -> Status {
    if (status == oldStatus) return firstError;
    json updated = cj;
    updated["status"] = status;
    auto r = rest_.update(kCronJobs, updated, "status");
    if (!r.ok() && r.status().code() != 404) return r.status();
    return firstError;
  };
  if (spec.value("suspend", json(false)) == true) return writeStatus();

  auto schedule = cron::CronSchedule::parse(spec.value("schedule", ""));
  if (!schedule.ok()) {
    recordEvent(cj, "Warning", "UnparseableSchedule",
                "unparseable schedule: \"" + spec.value("schedule", "") +
                    "\" : " + schedule.status().message());
    return writeStatus();
  }
  auto zone = cron::TimeZone::load(spec.value("timeZone", ""));
  if (!zone.ok()) {
    recordEvent(cj, "Warning", "UnknownTimeZone", zone.status().message());
    return writeStatus();
  }
  const cron::TimeZone& tz = **zone;

  // The most recent scheduled time that has not run yet, counting the missed ones.
  std::optional<WallClock::time_point> earliest =
      parseRfc3339(status.value("lastScheduleTime", ""));
  if (!earliest) earliest = parseRfc3339(stringAt(cj, "/metadata/creationTimestamp"));
  if (!earliest) earliest = now;
  const json deadlineJson = spec.value("startingDeadlineSeconds", json());
  std::optional<int64_t> deadline;
  if (deadlineJson.is_number_integer()) deadline = deadlineJson.get<int64_t>();
  if (deadline) {
    const auto floor = now - std::chrono::seconds(*deadline);
    if (floor > *earliest) earliest = floor;
  }
  std::optional<cron::SysSeconds> scheduled;
  int64_t missed = 0;
  for (auto t = schedule->next(toSys(*earliest), tz); t && *t <= toSys(now);
       t = schedule->next(*t, tz)) {
    scheduled = t;
    ++missed;
  }
  const auto nextRun = schedule->next(toSys(now), tz);
  auto requeueNext = [&]() -> Status {
    if (nextRun) requeueAt(key, WallClock::time_point(*nextRun));
    return writeStatus();
  };
  if (!scheduled) return requeueNext();
  if (missed > kTooManyMissed) {
    recordEvent(cj, "Warning", "TooManyMissedTimes",
                "too many missed start times: " + std::to_string(missed) +
                    ". Set or decrease .spec.startingDeadlineSeconds or check clock skew");
  }
  const WallClock::time_point scheduledAt(*scheduled);
  if (deadline && scheduledAt + std::chrono::seconds(*deadline) < now) {
    recordEvent(cj, "Warning", "MissSchedule",
                "Missed scheduled time to start a job: " + formatRfc3339(scheduledAt));
    return requeueNext();
  }
  const int64_t unixMinutes =
      std::chrono::duration_cast<std::chrono::minutes>(scheduled->time_since_epoch()).count();
  const std::string jobName = nameOf(cj) + "-" + std::to_string(unixMinutes);
  for (const json& job : children) {
    if (nameOf(job) == jobName) {  // this time ran already (the status write was lost)
      status["lastScheduleTime"] = formatRfc3339(scheduledAt);
      return requeueNext();
    }
  }
  const std::string policy = spec.value("concurrencyPolicy", "Allow");
  if (policy == "Forbid" && !active.empty()) {
    recordEvent(cj, "Normal", "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is "
                "Forbid");
    return requeueNext();
  }
  if (policy == "Replace") {
    for (const auto& ref : active) {
      json opts = {
          {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
      auto r = rest_.remove(kJobs, ns, ref.value("name", ""), opts);
      if (!r.ok() && r.status().code() != 404) return r.status();
      recordEvent(cj, "Normal", "SuccessfulDelete", "Deleted job " + ref.value("name", ""));
    }
    active = json::array();
    status.erase("active");
  }

  const json tmpl = spec.value("jobTemplate", json::object());
  json newJob = {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", json::object()}};
  const json meta = tmpl.value("metadata", json::object());
  newJob["metadata"]["name"] = jobName;
  newJob["metadata"]["namespace"] = ns;
  if (meta.contains("labels")) newJob["metadata"]["labels"] = meta["labels"];
  newJob["metadata"]["annotations"] = meta.value("annotations", json::object());
  newJob["metadata"]["annotations"][kScheduledTimestampAnnotation] = formatRfc3339(scheduledAt);
  newJob["metadata"]["ownerReferences"] = json::array({makeControllerRef(cj)});
  newJob["spec"] = tmpl.value("spec", json::object());
  auto created = rest_.create(kJobs, ns, newJob);
  if (!created.ok() && created.status().reason() != "AlreadyExists") {
    recordEvent(cj, "Warning", "FailedCreate", "Error creating job: " + created.status().message());
    return created.status();
  }
  if (created.ok()) {
    recordEvent(cj, "Normal", "SuccessfulCreate", "Created job " + jobName);
    active.push_back(jobReference(*created));
    status["active"] = active;
  }
  status["lastScheduleTime"] = formatRfc3339(scheduledAt);
  return requeueNext();
}

}  // namespace minik8s::controllers
