// batch/v1 Job.
#include <string>

#include "api/validation/kinds.h"

namespace minik8s::api::validation {

void validateJob(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  for (const char* f : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                        "ttlSecondsAfterFinished"}) {
    std::string p = child("spec", f);
    validateNonnegative(errs, errs.integer(spec, f, p), p);
  }
  auto mode = errs.string(spec, "completionMode", "spec.completionMode");
  if (mode && *mode != "NonIndexed" && *mode != "Indexed") {
    errs.notSupported("spec.completionMode", *mode, {"NonIndexed", "Indexed"});
  }
  if (mode == "Indexed" && absent(spec, "completions")) {
    errs.required("spec.completions", "when completion mode is Indexed");
  }
  auto replacement = errs.string(spec, "podReplacementPolicy", "spec.podReplacementPolicy");
  if (replacement && *replacement != "TerminatingOrFailed" && *replacement != "Failed") {
    errs.notSupported("spec.podReplacementPolicy", *replacement, {"Failed", "TerminatingOrFailed"});
  }
  errs.boolean(spec, "suspend", "spec.suspend");
  errs.boolean(spec, "manualSelector", "spec.manualSelector");

  const json* selector = member(spec, "selector");
  bool selectorOk = false;
  if (!selector || selector->is_null()) {
    errs.required("spec.selector");
  } else {
    selectorOk = validateLabelSelector(errs, *selector, "spec.selector");
  }
  const json* tmpl = errs.object(spec, "template", "spec.template");
  const json* meta = tmpl ? member(*tmpl, "metadata") : nullptr;
  const json* labels = meta ? member(*meta, "labels") : nullptr;
  if (selectorOk && !selectorMatches(*selector, labels ? *labels : json())) {
    errs.invalid("spec.template.metadata.labels", labels ? *labels : json(),
                 "`selector` does not match template `labels`");
  }
  validatePodTemplate(errs, tmpl ? *tmpl : kNoObject, "spec.template",
                      PodSpecOptions{.checkRestartPolicy = false});
  const json* podSpec = tmpl ? member(*tmpl, "spec") : nullptr;
  const json* restart = podSpec ? member(*podSpec, "restartPolicy") : nullptr;
  std::string policy = restart && restart->is_string() ? restart->get<std::string>() : "";
  if (policy.empty() || policy == "Always") {
    errs.required("spec.template.spec.restartPolicy", "valid values: \"OnFailure\", \"Never\"");
  } else if (policy != "OnFailure" && policy != "Never") {
    errs.notSupported("spec.template.spec.restartPolicy", policy, {"OnFailure", "Never"});
  }

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

}  // namespace minik8s::api::validation
