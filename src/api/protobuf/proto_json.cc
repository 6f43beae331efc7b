#include "api/protobuf/proto_json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <unordered_set>

#include "common/base64.h"

namespace minik8s::api::protobuf {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::UnknownFieldSet;

constexpr std::string_view kMeta = "k8s.io.apimachinery.pkg.apis.meta.v1.";

// Fields whose zero value is meaningful: Go pointers (*int32, *bool, *string) and fields without
// omitempty. Keyed by "<message full name>.<field>" without the "k8s.io." prefix.
const std::unordered_set<std::string>& keepZeroFields() {
  static const std::unordered_set<std::string> fields = {
      "apimachinery.pkg.apis.meta.v1.ObjectMeta.deletionGracePeriodSeconds",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.apiVersion",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.kind",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.name",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.uid",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.controller",
      "apimachinery.pkg.apis.meta.v1.OwnerReference.blockOwnerDeletion",
      "apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement.key",
      "apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement.operator",
      "apimachinery.pkg.apis.meta.v1.Condition.type",
      "apimachinery.pkg.apis.meta.v1.Condition.status",
      "apimachinery.pkg.apis.meta.v1.Condition.reason",
      "apimachinery.pkg.apis.meta.v1.Condition.message",
      "api.core.v1.ConfigMap.immutable",
      "api.core.v1.Secret.immutable",
      "api.core.v1.ServiceAccount.automountServiceAccountToken",
      "api.core.v1.ServiceSpec.ipFamilyPolicy",
      "api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts",
      "api.core.v1.ServiceSpec.loadBalancerClass",
      "api.core.v1.ServiceSpec.internalTrafficPolicy",
      "api.core.v1.ServiceSpec.trafficDistribution",
      "api.core.v1.ServicePort.port",
      "api.core.v1.ServicePort.appProtocol",
      "api.core.v1.ClientIPConfig.timeoutSeconds",
      "api.core.v1.PodSpec.terminationGracePeriodSeconds",
      "api.core.v1.PodSpec.activeDeadlineSeconds",
      "api.core.v1.PodSpec.automountServiceAccountToken",
      "api.core.v1.PodSpec.priority",
      "api.core.v1.PodSpec.shareProcessNamespace",
      "api.core.v1.PodSpec.runtimeClassName",
      "api.core.v1.PodSpec.enableServiceLinks",
      "api.core.v1.PodSpec.preemptionPolicy",
      "api.core.v1.PodSpec.setHostnameAsFQDN",
      "api.core.v1.PodSpec.hostUsers",
      "api.core.v1.Container.name",
      "api.core.v1.Container.restartPolicy",
      "api.core.v1.ContainerPort.containerPort",
      "api.core.v1.EnvVar.name",
      "api.core.v1.ConfigMapKeySelector.key",
      "api.core.v1.ConfigMapKeySelector.optional",
      "api.core.v1.SecretKeySelector.key",
      "api.core.v1.SecretKeySelector.optional",
      "api.core.v1.ObjectFieldSelector.fieldPath",
      "api.core.v1.ResourceFieldSelector.resource",
      "api.core.v1.ConfigMapEnvSource.optional",
      "api.core.v1.SecretEnvSource.optional",
      "api.core.v1.ResourceClaim.name",
      "api.core.v1.VolumeMount.name",
      "api.core.v1.VolumeMount.mountPath",
      "api.core.v1.VolumeMount.mountPropagation",
      "api.core.v1.VolumeMount.recursiveReadOnly",
      "api.core.v1.Volume.name",
      "api.core.v1.HostPathVolumeSource.path",
      "api.core.v1.HostPathVolumeSource.type",
      "api.core.v1.SecretVolumeSource.defaultMode",
      "api.core.v1.SecretVolumeSource.optional",
      "api.core.v1.ConfigMapVolumeSource.defaultMode",
      "api.core.v1.ConfigMapVolumeSource.optional",
      "api.core.v1.KeyToPath.key",
      "api.core.v1.KeyToPath.path",
      "api.core.v1.KeyToPath.mode",
      "api.core.v1.PersistentVolumeClaimVolumeSource.claimName",
      "api.core.v1.DownwardAPIVolumeSource.defaultMode",
      "api.core.v1.DownwardAPIVolumeFile.path",
      "api.core.v1.DownwardAPIVolumeFile.mode",
      "api.core.v1.ProjectedVolumeSource.defaultMode",
      "api.core.v1.SecretProjection.optional",
      "api.core.v1.ConfigMapProjection.optional",
      "api.core.v1.ServiceAccountTokenProjection.expirationSeconds",
      "api.core.v1.ServiceAccountTokenProjection.path",
      "api.core.v1.Probe.terminationGracePeriodSeconds",
      "api.core.v1.HTTPHeader.name",
      "api.core.v1.HTTPHeader.value",
      "api.core.v1.GRPCAction.port",
      "api.core.v1.GRPCAction.service",
      "api.core.v1.SleepAction.seconds",
      "api.core.v1.SecurityContext.privileged",
      "api.core.v1.SecurityContext.runAsUser",
      "api.core.v1.SecurityContext.runAsNonRoot",
      "api.core.v1.SecurityContext.readOnlyRootFilesystem",
      "api.core.v1.SecurityContext.allowPrivilegeEscalation",
      "api.core.v1.SecurityContext.runAsGroup",
      "api.core.v1.SeccompProfile.type",
      "api.core.v1.SeccompProfile.localhostProfile",
      "api.core.v1.PodSecurityContext.runAsUser",
      "api.core.v1.PodSecurityContext.runAsNonRoot",
      "api.core.v1.PodSecurityContext.fsGroup",
      "api.core.v1.PodSecurityContext.runAsGroup",
      "api.core.v1.Toleration.tolerationSeconds",
      "api.core.v1.HostAlias.ip",
      "api.core.v1.PodDNSConfigOption.value",
      "api.core.v1.PodReadinessGate.conditionType",
      "api.core.v1.PodCondition.type",
      "api.core.v1.PodCondition.status",
      "api.core.v1.PodIP.ip",
      "api.core.v1.ContainerStatus.name",
      "api.core.v1.ContainerStatus.ready",
      "api.core.v1.ContainerStatus.restartCount",
      "api.core.v1.ContainerStatus.image",
      "api.core.v1.ContainerStatus.imageID",
      "api.core.v1.ContainerStatus.started",
      "api.core.v1.ContainerStateTerminated.exitCode",
      "api.apps.v1.DeploymentSpec.replicas",
      "api.apps.v1.DeploymentSpec.revisionHistoryLimit",
      "api.apps.v1.DeploymentSpec.progressDeadlineSeconds",
      "api.apps.v1.DeploymentStatus.collisionCount",
      "api.batch.v1.JobSpec.parallelism",
      "api.batch.v1.JobSpec.completions",
      "api.batch.v1.JobSpec.activeDeadlineSeconds",
      "api.batch.v1.JobSpec.manualSelector",
      "api.batch.v1.JobSpec.backoffLimit",
      "api.batch.v1.JobSpec.ttlSecondsAfterFinished",
      "api.batch.v1.JobSpec.completionMode",
      "api.batch.v1.JobSpec.suspend",
      "api.batch.v1.JobSpec.backoffLimitPerIndex",
      "api.batch.v1.JobSpec.maxFailedIndexes",
      "api.batch.v1.JobSpec.podReplacementPolicy",
      "api.batch.v1.JobSpec.managedBy",
      "api.batch.v1.JobStatus.ready",
      "api.batch.v1.JobStatus.terminating",
      "api.batch.v1.JobStatus.failedIndexes",
      "api.batch.v1.CronJobSpec.schedule",
      "api.batch.v1.CronJobSpec.startingDeadlineSeconds",
      "api.batch.v1.CronJobSpec.suspend",
      "api.batch.v1.CronJobSpec.successfulJobsHistoryLimit",
      "api.batch.v1.CronJobSpec.failedJobsHistoryLimit",
      "api.batch.v1.CronJobSpec.timeZone",
      "api.autoscaling.v1.HorizontalPodAutoscalerSpec.minReplicas",
      "api.autoscaling.v1.HorizontalPodAutoscalerSpec.maxReplicas",
      "api.autoscaling.v1.HorizontalPodAutoscalerSpec.targetCPUUtilizationPercentage",
      "api.autoscaling.v1.CrossVersionObjectReference.kind",
      "api.autoscaling.v1.CrossVersionObjectReference.name",
      "api.autoscaling.v1.HorizontalPodAutoscalerStatus.observedGeneration",
      "api.autoscaling.v1.HorizontalPodAutoscalerStatus.currentReplicas",
      "api.autoscaling.v1.HorizontalPodAutoscalerStatus.desiredReplicas",
      "api.autoscaling.v1.HorizontalPodAutoscalerStatus.currentCPUUtilizationPercentage",
      "api.autoscaling.v2.HorizontalPodAutoscalerSpec.minReplicas",
      "api.autoscaling.v2.HorizontalPodAutoscalerSpec.maxReplicas",
      "api.autoscaling.v2.CrossVersionObjectReference.kind",
      "api.autoscaling.v2.CrossVersionObjectReference.name",
      "api.autoscaling.v2.MetricSpec.type",
      "api.autoscaling.v2.MetricIdentifier.name",
      "api.autoscaling.v2.ResourceMetricSource.name",
      "api.autoscaling.v2.ContainerResourceMetricSource.name",
      "api.autoscaling.v2.ContainerResourceMetricSource.container",
      "api.autoscaling.v2.MetricTarget.type",
      "api.autoscaling.v2.MetricTarget.averageUtilization",
      "api.autoscaling.v2.HPAScalingRules.stabilizationWindowSeconds",
      "api.autoscaling.v2.HPAScalingRules.selectPolicy",
      "api.autoscaling.v2.HPAScalingPolicy.type",
      "api.autoscaling.v2.HPAScalingPolicy.value",
      "api.autoscaling.v2.HPAScalingPolicy.periodSeconds",
      "api.autoscaling.v2.HorizontalPodAutoscalerStatus.observedGeneration",
      "api.autoscaling.v2.HorizontalPodAutoscalerStatus.desiredReplicas",
      "api.authentication.v1.TokenRequestSpec.expirationSeconds",
      "api.authentication.v1.TokenRequestStatus.token",
      "api.authorization.v1.SubjectAccessReviewStatus.allowed",
      "api.rbac.v1.Subject.kind",
      "api.rbac.v1.Subject.name",
      "api.rbac.v1.RoleRef.apiGroup",
      "api.rbac.v1.RoleRef.kind",
      "api.rbac.v1.RoleRef.name",
      "api.networking.v1.IngressSpec.ingressClassName",
      "api.networking.v1.IngressServiceBackend.name",
      "api.networking.v1.HTTPIngressPath.pathType",
      "api.core.v1.TypedLocalObjectReference.kind",
      "api.core.v1.TypedLocalObjectReference.name",
      "api.core.v1.TypedLocalObjectReference.apiGroup",
      "api.policy.v1.PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy",
      "api.policy.v1.PodDisruptionBudgetStatus.disruptionsAllowed",
      "api.policy.v1.PodDisruptionBudgetStatus.currentHealthy",
      "api.policy.v1.PodDisruptionBudgetStatus.desiredHealthy",
      "api.policy.v1.PodDisruptionBudgetStatus.expectedPods",
      "api.scheduling.v1.PriorityClass.value",
      "api.scheduling.v1.PriorityClass.preemptionPolicy",
  };
  return fields;
}

// Go structs embedded with `json:",inline"`: their fields appear in the parent object.
const std::unordered_set<std::string>& inlineFields() {
  static const std::unordered_set<std::string> fields = {
      "api.core.v1.Volume.volumeSource",
      "api.core.v1.Probe.handler",
      "api.core.v1.ConfigMapKeySelector.localObjectReference",
      "api.core.v1.SecretKeySelector.localObjectReference",
      "api.core.v1.ConfigMapEnvSource.localObjectReference",
      "api.core.v1.SecretEnvSource.localObjectReference",
      "api.core.v1.ConfigMapVolumeSource.localObjectReference",
      "api.core.v1.SecretProjection.localObjectReference",
      "api.core.v1.ConfigMapProjection.localObjectReference",
      "api.networking.v1.IngressRule.ingressRuleValue",
  };
  return fields;
}

std::string fieldKey(const FieldDescriptor* field) {
  std::string_view name = field->full_name();
  if (name.starts_with("k8s.io.")) name.remove_prefix(7);
  return std::string(name);
}

// RFC 3339 in UTC with whole seconds, as metav1.Time marshals.
Result<std::string> formatTime(int64_t seconds, int32_t nanos) {
  // Years 1..9999 only: what Go can format and what gmtime_r handles everywhere.
  if (seconds < -62135596800LL || seconds > 253402300799LL || nanos < 0 || nanos > 999999999) {
    return Status::BadRequest("protobuf body: timestamp out of range");
  }
  time_t t = static_cast<time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf, n) + "Z";
}

// A field we do not model is fine only if Go wrote it out of habit (zero / empty).
bool unknownFieldsAreEmpty(const UnknownFieldSet& set, int depth) {
  for (int i = 0; i < set.field_count(); ++i) {
    const auto& f = set.field(i);
    switch (f.type()) {
      case google::protobuf::UnknownField::TYPE_VARINT:
        if (f.varint() != 0) return false;
        break;
      case google::protobuf::UnknownField::TYPE_FIXED32:
        if (f.fixed32() != 0) return false;
        break;
      case google::protobuf::UnknownField::TYPE_FIXED64:
        if (f.fixed64() != 0) return false;
        break;
      case google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED: {
        const std::string& bytes = f.length_delimited();
        if (bytes.empty()) break;
        // An embedded struct full of zeros (e.g. an unmodelled status) is still empty.
        UnknownFieldSet nested;
        if (depth > 8 || !nested.ParseFromString(bytes) ||
            !unknownFieldsAreEmpty(nested, depth + 1)) {
          return false;
        }
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

class Converter {
 public:
  Result<json> convert(const Message& m, int depth);

 private:
  // The JSON of a message-typed value; null json means "unset" (zero Time).
  Result<json> convertValue(const Message& m, int depth);
  Result<json> convertScalar(const Message& m, const FieldDescriptor* f, int index);
};

Result<json> Converter::convertValue(const Message& m, int depth) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  const std::string& name = d->full_name();
  auto field = [&](const char* n) { return d->FindFieldByName(n); };
  if (name == std::string(kMeta) + "Time") {
    int64_t s = r->GetInt64(m, field("seconds"));
    int32_t ns = r->GetInt32(m, field("nanos"));
    if (s == 0 && ns == 0) return json();  // Go's zero time: null, i.e. unset
    auto t = formatTime(s, ns);
    if (!t.ok()) return t.status();
    return json(*t);
  }
  if (name == "k8s.io.apimachinery.pkg.api.resource.Quantity") {
    return json(r->GetString(m, field("string")));
  }
  if (name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString") {
    if (r->GetInt64(m, field("type")) == 1) return json(r->GetString(m, field("strVal")));
    return json(r->GetInt32(m, field("intVal")));
  }
  return convert(m, depth + 1);
}

Result<json> Converter::convertScalar(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  bool repeated = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string s = repeated ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() == FieldDescriptor::TYPE_BYTES) return json(base64::encode(s));
      // Protobuf strings are not checked for UTF-8 in proto2; JSON needs valid text.
      json j = s;
      try {
        (void)j.dump();
      } catch (const json::exception&) {
        return Status::BadRequest("protobuf body: field " + f->full_name() + " is not UTF-8");
      }
      return j;
    }
    case FieldDescriptor::CPPTYPE_INT32:
      return json(repeated ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return json(repeated ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return json(repeated ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return json(repeated ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return json(repeated ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f));
    default:
      return Status::Internal("protobuf field " + f->full_name() + " has an unsupported type");
  }
}

bool isZero(const json& j) {
  return (j.is_string() && j.get_ref<const std::string&>().empty()) ||
         (j.is_number_integer() && j.get<int64_t>() == 0) ||
         (j.is_number_unsigned() && j.get<uint64_t>() == 0) || (j.is_boolean() && !j.get<bool>());
}

Result<json> Converter::convert(const Message& m, int depth) {
  // Parsing already bounds nesting; this guards the recursion here independently.
  if (depth > 64) return Status::BadRequest("protobuf body: nesting too deep");
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  if (!unknownFieldsAreEmpty(r->GetUnknownFields(m), 0)) {
    return Status::UnsupportedMediaType(
        "protobuf body sets a field of " + d->full_name() +
        " that this server does not support in protobuf; send the object as JSON, e.g. "
        "`kubectl create ... --dry-run=client -o yaml | kubectl apply -f -`");
  }
  json out = json::object();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string& key = f->json_name();
    if (f->is_map()) {
      int n = r->FieldSize(m, f);
      if (n == 0) continue;
      json obj = json::object();
      for (int k = 0; k < n; ++k) {
        const Message& entry = r->GetRepeatedMessage(m, f, k);
        const Descriptor* ed = entry.GetDescriptor();
        auto mapKey = convertScalar(entry, ed->map_key(), -1);
        if (!mapKey.ok()) return mapKey.status();
        const FieldDescriptor* vf = ed->map_value();
        Result<json> value = vf->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                 ? convertValue(entry.GetReflection()->GetMessage(entry, vf), depth)
                                 : convertScalar(entry, vf, -1);
        if (!value.ok()) return value.status();
        obj[mapKey->get<std::string>()] = std::move(*value);
      }
      out[key] = std::move(obj);
    } else if (f->is_repeated()) {
      int n = r->FieldSize(m, f);
      if (n == 0) continue;
      json arr = json::array();
      for (int k = 0; k < n; ++k) {
        Result<json> item = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                ? convertValue(r->GetRepeatedMessage(m, f, k), depth)
                                : convertScalar(m, f, k);
        if (!item.ok()) return item.status();
        arr.push_back(std::move(*item));
      }
      out[key] = std::move(arr);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!r->HasField(m, f)) continue;
      auto value = convertValue(r->GetMessage(m, f), depth);
      if (!value.ok()) return value.status();
      if (value->is_null()) continue;
      if (inlineFields().contains(fieldKey(f)) && value->is_object()) {
        for (auto& [k, v] : value->items()) out[k] = v;
      } else {
        out[key] = std::move(*value);
      }
    } else {
      if (!r->HasField(m, f)) continue;
      auto value = convertScalar(m, f, -1);
      if (!value.ok()) return value.status();
      if (isZero(*value) && !keepZeroFields().contains(fieldKey(f))) continue;
      out[key] = std::move(*value);
    }
  }
  return out;
}

}  // namespace

Result<json> messageToJson(const Message& message) { return Converter().convert(message, 0); }

}  // namespace minik8s::api::protobuf
