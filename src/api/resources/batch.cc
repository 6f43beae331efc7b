// batch/v1: Jobs and CronJobs.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

bool jobCondition(const json& status, std::string_view type) {
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == type) return str(c, "status") == "True";
  }
  return false;
}

json jobCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  int64_t succeeded = integer(status, "succeeded");
  std::string completions;
  if (spec.contains("completions") && spec["completions"].is_number_integer()) {
    completions = std::to_string(succeeded) + "/" + std::to_string(integer(spec, "completions"));
  } else if (integer(spec, "parallelism") > 1) {
    completions =
        std::to_string(succeeded) + "/1 of " + std::to_string(integer(spec, "parallelism"));
  } else {
    completions = std::to_string(succeeded) + "/1";
  }
  std::string duration;
  auto start = parseTime(status.value("startTime", json()));
  if (start) {
    auto end = parseTime(status.value("completionTime", json())).value_or(now);
    duration = humanDuration(std::chrono::duration_cast<std::chrono::seconds>(end - *start));
  }
  std::string state = "Running";
  if (jobCondition(status, "Complete")) {
    state = "Complete";
  } else if (jobCondition(status, "Failed")) {
    state = "Failed";
  } else if (meta.contains("deletionTimestamp")) {
    state = "Terminating";
  } else if (jobCondition(status, "Suspended")) {
    state = "Suspended";
  } else if (jobCondition(status, "FailureTarget")) {
    state = "FailureTarget";
  }
  const json& podSpec = object(object(spec, "template"), "spec");
  return json::array({str(meta, "name"), state, completions, duration, age(meta, now),
                      containerNames(podSpec), containerImages(podSpec),
                      orNone(labelSelectorString(object(spec, "selector")))});
}

json cronJobCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  const json& status = object(obj, "status");
  const json& jobSpec = object(object(spec, "jobTemplate"), "spec");
  const json& podSpec = object(object(jobSpec, "template"), "spec");
  std::string last = status.contains("lastScheduleTime") ? since(status["lastScheduleTime"], now)
                                                         : std::string("<none>");
  std::string suspend = spec.contains("suspend") && spec["suspend"].is_boolean()
                            ? (spec["suspend"].get<bool>() ? "True" : "False")
                            : "<unset>";
  return json::array({str(meta, "name"), str(spec, "schedule"), str(spec, "timeZone", "<none>"),
                      suspend, static_cast<int64_t>(array(status, "active").size()), last,
                      age(meta, now), containerNames(podSpec), containerImages(podSpec),
                      orNone(labelSelectorString(object(jobSpec, "selector")))});
}

ResourceType job() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("batch", "v1", "Job", "jobs", "job");
  r.categories = {"all"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::job;
  t.validate = validation::validateJob;
  t.columns = {nameColumn(),
               col("Status", "Status of the job."),
               col("Completions", "The number of pods which reached phase Succeeded."),
               col("Duration", "Time required to complete the job."),
               ageColumn(),
               containersColumn(),
               imagesColumn(),
               wide("Selector", "A label query over pods.")};
  t.cells = jobCells;
  return t;
}

ResourceType cronJob() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("batch", "v1", "CronJob", "cronjobs", "cronjob");
  r.shortNames = {"cj"};
  r.categories = {"all"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::cronJob;
  t.validate = validation::validateCronJob;
  t.columns = {nameColumn(),
               col("Schedule", "The schedule in Cron format."),
               col("Timezone", "The time zone of the schedule."),
               col("Suspend", "Whether subsequent executions are suspended.", "boolean"),
               col("Active", "Number of currently running jobs.", "integer"),
               col("Last Schedule", "When the job was last scheduled."),
               ageColumn(),
               containersColumn(),
               imagesColumn(),
               wide("Selector", "A label query over pods.")};
  t.cells = cronJobCells;
  return t;
}

}  // namespace

void addBatchResources(std::vector<ResourceType>& out) {
  out.push_back(job());
  out.push_back(cronJob());
}

}  // namespace minik8s::api::resources
