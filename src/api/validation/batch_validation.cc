// batch/v1 Job and CronJob.
#include <string>

#include "api/cron_schedule.h"
#include "api/validation/kinds.h"

namespace minik8s::api::validation {

namespace {

// A JobSpec at `path` ("spec", or "spec.jobTemplate.spec" of a CronJob). A Job's selector is
// generated on create, so only a Job (not a CronJob's template) must carry one.
void validateJobSpec(FieldErrors& errs, const json& spec, const std::string& path,
                     bool requireSelector) {
  auto at = [&](const std::string& f) { return path + "." + f; };
  for (const char* f : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                        "ttlSecondsAfterFinished"}) {
    validateNonnegative(errs, errs.integer(spec, f, at(f)), at(f));
  }
  auto mode = errs.string(spec, "completionMode", at("completionMode"));
  if (mode && *mode != "NonIndexed" && *mode != "Indexed") {
    errs.notSupported(at("completionMode"), *mode, {"NonIndexed", "Indexed"});
  }
  if (mode == "Indexed" && absent(spec, "completions")) {
    errs.required(at("completions"), "when completion mode is Indexed");
  }
  auto replacement = errs.string(spec, "podReplacementPolicy", at("podReplacementPolicy"));
  if (replacement && *replacement != "TerminatingOrFailed" && *replacement != "Failed") {
    errs.notSupported(at("podReplacementPolicy"), *replacement, {"Failed", "TerminatingOrFailed"});
  }
  errs.boolean(spec, "suspend", at("suspend"));
  errs.boolean(spec, "manualSelector", at("manualSelector"));

  const json* selector = member(spec, "selector");
  bool selectorOk = false;
  if (!selector || selector->is_null()) {
    if (requireSelector) errs.required(at("selector"));
  } else {
    selectorOk = validateLabelSelector(errs, *selector, at("selector"));
  }
  const json* tmpl = errs.object(spec, "template", at("template"));
  const json* meta = tmpl ? member(*tmpl, "metadata") : nullptr;
  const json* labels = meta ? member(*meta, "labels") : nullptr;
  if (selectorOk && !selectorMatches(*selector, labels ? *labels : json())) {
    errs.invalid(at("template.metadata.labels"), labels ? *labels : json(),
                 "`selector` does not match template `labels`");
  }
  validatePodTemplate(errs, tmpl ? *tmpl : kNoObject, at("template"),
                      PodSpecOptions{.checkRestartPolicy = false});
  const json* podSpec = tmpl ? member(*tmpl, "spec") : nullptr;
  const json* restart = podSpec ? member(*podSpec, "restartPolicy") : nullptr;
  std::string policy = restart && restart->is_string() ? restart->get<std::string>() : "";
  if (policy.empty() || policy == "Always") {
    errs.required(at("template.spec.restartPolicy"), "valid values: \"OnFailure\", \"Never\"");
  } else if (policy != "OnFailure" && policy != "Never") {
    errs.notSupported(at("template.spec.restartPolicy"), policy, {"OnFailure", "Never"});
  }
}

}  // namespace

void validateJob(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  validateJobSpec(errs, spec, "spec", true);
  auto mode = errs.string(spec, "completionMode", "spec.completionMode");

  if (old) {
    validateObjectMetaUpdate(errs, obj, *old);
    const json* oldSpec = member(*old, "spec");
    const json& os = oldSpec ? *oldSpec : kNoObject;
    validateImmutable(errs, member(spec, "selector"), member(os, "selector"), "spec.selector");
    validateImmutable(errs, member(spec, "template"), member(os, "template"), "spec.template");
    validateImmutable(errs, member(spec, "completionMode"), member(os, "completionMode"),
                      "spec.completionMode");
    if (mode != "Indexed") {
      validateImmutable(errs, member(spec, "completions"), member(os, "completions"),
                        "spec.completions");
    }
  }
}

void validateCronJob(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  // Job names are the CronJob's name plus "-" and up to 11 digits (Kubernetes' limit).
  const json* meta = member(obj, "metadata");
  const json* name = meta ? member(*meta, "name") : nullptr;
  if (name && name->is_string() && name->get<std::string>().size() > 52) {
    errs.invalid("metadata.name", *name, "must be no more than 52 characters");
  }
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  auto schedule = errs.string(spec, "schedule", "spec.schedule");
  if (!schedule || schedule->empty()) {
    if (absent(spec, "schedule") || (schedule && schedule->empty())) errs.required("spec.schedule");
  } else if (schedule->find("TZ") != std::string::npos) {
    errs.invalid("spec.schedule", *schedule,
                 "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
  } else if (auto parsed = cron::CronSchedule::parse(*schedule); !parsed.ok()) {
    errs.invalid("spec.schedule", *schedule, parsed.status().message());
  }
  if (auto zone = errs.string(spec, "timeZone", "spec.timeZone")) {
    if (zone->empty() || !cron::TimeZone::load(*zone).ok()) {
      errs.invalid("spec.timeZone", *zone, "unknown time zone " + *zone);
    }
  }
  auto policy = errs.string(spec, "concurrencyPolicy", "spec.concurrencyPolicy");
  if (policy && *policy != "Allow" && *policy != "Forbid" && *policy != "Replace") {
    errs.notSupported("spec.concurrencyPolicy", *policy, {"Allow", "Forbid", "Replace"});
  }
  errs.boolean(spec, "suspend", "spec.suspend");
  for (const char* f :
       {"startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"}) {
    std::string p = child("spec", f);
    validateNonnegative(errs, errs.integer(spec, f, p), p);
  }
  const json* tmpl = errs.object(spec, "jobTemplate", "spec.jobTemplate");
  if (!tmpl) {
    if (absent(spec, "jobTemplate")) errs.required("spec.jobTemplate");
  } else {
    const json* jobSpec = errs.object(*tmpl, "spec", "spec.jobTemplate.spec");
    validateJobSpec(errs, jobSpec ? *jobSpec : kNoObject, "spec.jobTemplate.spec", false);
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

}  // namespace minik8s::api::validation
