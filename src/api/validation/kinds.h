// Internal to src/api/validation: the validators of each kind and the shared pieces (object
// metadata, label selectors, pod specs) they are built from. validation.cc dispatches to these.
// Each appends to a FieldErrors; none throws, whatever the JSON holds. Stateless functions.
#pragma once

#include <string>
#include <vector>

#include "api/validation/field_errors.h"
#include "api/validation/name_rules.h"
#include "common/status.h"

namespace minik8s::api::validation {

inline const json kNoObject = json::object();

// metadata.* of a create (and of an update: the same rules hold for the new object).
void validateObjectMeta(FieldErrors& errs, const json& obj, bool namespaced, NameRule nameRule);
// name, namespace and uid may not change.
void validateObjectMetaUpdate(FieldErrors& errs, const json& obj, const json& old);
void validateLabels(FieldErrors& errs, const json& labels, const std::string& path);
// A metav1.LabelSelector at `path`; returns false if it is malformed (error reported).
bool validateLabelSelector(FieldErrors& errs, const json& selector, const std::string& path);
// Whether `selector` (already validated) selects `labels`.
bool selectorMatches(const json& selector, const json& labels);
// A core/v1 NodeSelector (a PersistentVolume's nodeAffinity.required): at least one term; the
// operator, key and values of each matchExpressions and matchFields requirement.
void validateNodeSelector(FieldErrors& errs, const json& selector, const std::string& path);
// Reports "field is immutable" at `path` when the values differ.
void validateImmutable(FieldErrors& errs, const json* now, const json* before,
                       const std::string& path);

struct PodSpecOptions {
  // Job templates check restartPolicy themselves (OnFailure/Never, required).
  bool checkRestartPolicy = true;
};
void validatePodSpec(FieldErrors& errs, const json& spec, const std::string& path,
                     const PodSpecOptions& options = {});
// A pod template at `path` ("spec.template"): its metadata labels and its spec.
void validatePodTemplate(FieldErrors& errs, const json& tmpl, const std::string& path,
                         const PodSpecOptions& options = {});

// `old` is nullptr on create.
void validatePod(FieldErrors& errs, const json& obj, const json* old);
void validateCustomResourceDefinition(FieldErrors& errs, const json& obj, const json* old);
void validateMutatingWebhookConfiguration(FieldErrors& errs, const json& obj, const json* old);
void validateValidatingWebhookConfiguration(FieldErrors& errs, const json& obj, const json* old);
void validateService(FieldErrors& errs, const json& obj, const json* old);
void validateConfigMap(FieldErrors& errs, const json& obj, const json* old);
void validateSecret(FieldErrors& errs, const json& obj, const json* old);
void validateNamespace(FieldErrors& errs, const json& obj, const json* old);
void validateNode(FieldErrors& errs, const json& obj, const json* old);
void validateEvent(FieldErrors& errs, const json& obj, const json* old);
void validateEndpoints(FieldErrors& errs, const json& obj, const json* old);
void validateDeployment(FieldErrors& errs, const json& obj, const json* old);
void validateReplicaSet(FieldErrors& errs, const json& obj, const json* old);
void validateDaemonSet(FieldErrors& errs, const json& obj, const json* old);
void validateStatefulSet(FieldErrors& errs, const json& obj, const json* old);
void validateControllerRevision(FieldErrors& errs, const json& obj, const json* old);
void validateJob(FieldErrors& errs, const json& obj, const json* old);
void validateCronJob(FieldErrors& errs, const json& obj, const json* old);
void validateHorizontalPodAutoscaler(FieldErrors& errs, const json& obj, const json* old);
void validateLease(FieldErrors& errs, const json& obj, const json* old);
void validateEndpointSlice(FieldErrors& errs, const json& obj, const json* old);
void validateDns(FieldErrors& errs, const json& obj, const json* old);
void validateRole(FieldErrors& errs, const json& obj, const json* old);
void validateClusterRole(FieldErrors& errs, const json& obj, const json* old);
void validateRoleBinding(FieldErrors& errs, const json& obj, const json* old);
void validateClusterRoleBinding(FieldErrors& errs, const json& obj, const json* old);
void validateCertificateSigningRequest(FieldErrors& errs, const json& obj, const json* old);
void validatePersistentVolume(FieldErrors& errs, const json& obj, const json* old);
void validatePersistentVolumeClaim(FieldErrors& errs, const json& obj, const json* old);
void validateStorageClass(FieldErrors& errs, const json& obj, const json* old);
void validateCSIDriver(FieldErrors& errs, const json& obj, const json* old);
void validateResourceQuota(FieldErrors& errs, const json& obj, const json* old);
void validateLimitRange(FieldErrors& errs, const json& obj, const json* old);
void validateNetworkPolicy(FieldErrors& errs, const json& obj, const json* old);

// Small helpers shared by the kinds.
// obj[name] if obj is an object holding that key (null included as nullptr), else nullptr.
const json* member(const json& obj, std::string_view name);
// Whether obj[name] is missing or null (a wrong type is not absent: it was reported already).
inline bool absent(const json& obj, std::string_view name) {
  const json* v = member(obj, name);
  return !v || v->is_null();
}
// obj[name] if it is an object, else an empty object.
const json& objectAt(const json& obj, std::string_view name);
bool oneOf(const std::vector<std::string>& values, const std::string& value);
// The strings of the array obj[name]; items of another type are reported.
std::vector<std::string> stringItems(FieldErrors& errs, const json& obj, std::string_view name,
                                     const std::string& path);
// A string field that, when present, must be one of `supported`; "" too (Kubernetes' optional
// enums are pointers: an empty string is a value, not an absence).
void validateOptionalEnum(FieldErrors& errs, const json& obj, std::string_view name,
                          const std::string& path, const std::vector<std::string>& supported);
// Reports value < 0 as "must be greater than or equal to 0".
void validateNonnegative(FieldErrors& errs, std::optional<int64_t> value, const std::string& path);
// A port protocol (TCP/UDP/SCTP): required, else one of them.
void validateProtocol(FieldErrors& errs, const json& obj, const std::string& path);
// "10.0.0.0/8" or "2001:db8::/64" (host bits may be set, as Kubernetes' sloppy parser allows).
bool isValidCIDR(const std::string& cidr);
// A port given as number (1-65535) or IANA name.
void validatePortNumOrName(FieldErrors& errs, const json& value, const std::string& path);

}  // namespace minik8s::api::validation
