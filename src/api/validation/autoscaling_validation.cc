// autoscaling/v2 and v1 HorizontalPodAutoscaler.
#include <string>

#include "api/quantity.h"
#include "api/validation/kinds.h"

namespace minik8s::api::validation {
namespace {

const std::vector<std::string> kMetricSourceTypes = {"ContainerResource", "External", "Object",
                                                     "Pods", "Resource"};

void validateCrossVersionObjectReference(FieldErrors& errs, const json& ref,
                                         const std::string& path) {
  for (const char* f : {"kind", "name"}) {
    auto v = errs.string(ref, f, child(path, f));
    if (!v || v->empty()) {
      errs.required(child(path, f));
    } else {
      errs.invalidEach(child(path, f), *v, isPathSegmentName(*v));
    }
  }
  errs.string(ref, "apiVersion", child(path, "apiVersion"));
}

void validatePositiveQuantity(FieldErrors& errs, const json& target, const char* name,
                              const std::string& path) {
  const json* v = member(target, name);
  if (!v || v->is_null()) return;
  auto q = Quantity::fromJson(*v);
  if (!q.ok()) {
    errs.invalid(child(path, name), *v, q.status().message());
  } else if (q->sign() != 1) {
    errs.invalid(child(path, name), q->toString(), "must be positive");
  }
}

void validateMetricTarget(FieldErrors& errs, const json& source, const std::string& path) {
  const json* target = errs.object(source, "target", path);
  const json& t = target ? *target : kNoObject;
  auto type = errs.string(t, "type", child(path, "type"));
  if (!type || type->empty())
    errs.required(child(path, "type"), "must specify a metric target type");
  if (type.value_or("") != "Utilization" && type.value_or("") != "Value" &&
      type.value_or("") != "AverageValue") {
    errs.invalid(child(path, "type"), type.value_or(""),
                 "must be either Utilization, Value, or AverageValue");
  }
  validatePositiveQuantity(errs, t, "value", path);
  validatePositiveQuantity(errs, t, "averageValue", path);
  auto utilization = errs.integer(t, "averageUtilization", child(path, "averageUtilization"));
  if (utilization && *utilization < 1) {
    errs.invalid(child(path, "averageUtilization"), *utilization, "must be greater than 0");
  }
}

void validateMetricName(FieldErrors& errs, const json& source, const std::string& path) {
  const json* metric = errs.object(source, "metric", child(path, "metric"));
  auto name = metric ? errs.string(*metric, "name", child(path, "metric.name")) : std::nullopt;
  if (!name || name->empty())
    errs.required(child(path, "metric.name"), "must specify a metric name");
}

void validateMetricSource(FieldErrors& errs, const std::string& kind, const json& src,
                          const std::string& path) {
  std::string targetPath = child(path, "target");
  const json* target = member(src, "target");
  const json& t = target && target->is_object() ? *target : kNoObject;
  if (kind == "resource" || kind == "containerResource") {
    auto name = errs.string(src, "name", child(path, "name"));
    if (!name || name->empty()) errs.required(child(path, "name"), "must specify a resource name");
    if (kind == "containerResource") {
      auto container = errs.string(src, "container", child(path, "container"));
      if (!container || container->empty()) {
        errs.required(child(path, "container"), "must specify a container");
      }
    }
    validateMetricTarget(errs, src, targetPath);
    bool utilization = !absent(t, "averageUtilization"), average = !absent(t, "averageValue");
    if (!utilization && !average) {
      errs.required(child(targetPath, "averageUtilization"),
                    "must set either a target raw value or a target utilization");
    } else if (utilization && average) {
      errs.forbidden(child(targetPath, "averageValue"),
                     "may not set both a target raw value and a target utilization");
    }
    return;
  }
  validateMetricName(errs, src, path);
  validateMetricTarget(errs, src, targetPath);
  if (kind == "pods") {
    if (absent(t, "averageValue")) {
      errs.required(child(targetPath, "averageValue"),
                    "must specify a positive target averageValue");
    }
  } else {
    if (kind == "object") {
      const json* described = errs.object(src, "describedObject", child(path, "describedObject"));
      validateCrossVersionObjectReference(errs, described ? *described : kNoObject,
                                          child(path, "describedObject"));
    }
    if (absent(t, "value") && absent(t, "averageValue")) {
      errs.required(child(targetPath, "value"), "must set either a target value or averageValue");
    }
  }
}

void validateMetrics(FieldErrors& errs, const json& metrics) {
  for (size_t i = 0; i < metrics.size(); ++i) {
    std::string p = index("spec.metrics", i);
    const json& m = metrics[i];
    if (!m.is_object()) {
      errs.typeInvalid(p, m, "object");
      continue;
    }
    auto type = errs.string(m, "type", child(p, "type"));
    if (!type || type->empty()) {
      errs.required(child(p, "type"), "must specify a metric source type");
    }
    std::string expected;
    if (type == "Object")
      expected = "object";
    else if (type == "Pods")
      expected = "pods";
    else if (type == "Resource")
      expected = "resource";
    else if (type == "External")
      expected = "external";
    else if (type == "ContainerResource")
      expected = "containerResource";
    else
      errs.notSupported(child(p, "type"), type.value_or(""), kMetricSourceTypes);
    bool first = true;
    for (const char* s : {"object", "pods", "resource", "external", "containerResource"}) {
      const json* src = errs.object(m, s, child(p, s));
      if (!src) continue;
      if (first) validateMetricSource(errs, s, *src, child(p, s));
      first = false;
      if (s != expected) errs.forbidden(child(p, s), "must populate the given metric source only");
    }
    if (!expected.empty() && absent(m, expected)) {
      errs.required(child(p, expected), "must populate information for the given metric source");
    }
  }
}

}  // namespace

void validateHorizontalPodAutoscaler(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, true, nameIsDNSSubdomain);
  const json* specPtr = errs.object(obj, "spec", "spec");
  const json& spec = specPtr ? *specPtr : kNoObject;
  auto minReplicas = errs.integer(spec, "minReplicas", "spec.minReplicas");
  auto maxReplicas = errs.integer(spec, "maxReplicas", "spec.maxReplicas");
  if (minReplicas && *minReplicas < 1) {
    errs.invalid("spec.minReplicas", *minReplicas, "must be greater than or equal to 1");
  }
  if (maxReplicas.value_or(0) < 1) {
    errs.invalid("spec.maxReplicas", maxReplicas.value_or(0), "must be greater than 0");
  }
  if (minReplicas && maxReplicas.value_or(0) < *minReplicas) {
    errs.invalid("spec.maxReplicas", maxReplicas.value_or(0),
                 "must be greater than or equal to `minReplicas`");
  }
  size_t before = errs.size();
  const json* ref = errs.object(spec, "scaleTargetRef", "spec.scaleTargetRef");
  validateCrossVersionObjectReference(errs, ref ? *ref : kNoObject, "spec.scaleTargetRef");
  // As Kubernetes: metrics are only looked at once the target reference is sound.
  if (errs.size() == before) {
    if (const json* metrics = errs.array(spec, "metrics", "spec.metrics")) {
      validateMetrics(errs, *metrics);
    }
    auto cpu =
        errs.integer(spec, "targetCPUUtilizationPercentage", "spec.targetCPUUtilizationPercentage");
    if (cpu && *cpu < 1) {
      errs.invalid("spec.targetCPUUtilizationPercentage", *cpu, "must be greater than 0");
    }
    errs.object(spec, "behavior", "spec.behavior");
  }
  if (old) validateObjectMetaUpdate(errs, obj, *old);
}

}  // namespace minik8s::api::validation
