// validate(): dispatches to the validator of each kind.
#include "api/validation.h"

#include <string>

#include "api/custom_resource.h"
#include "api/validation/kinds.h"

namespace minik8s::api {

using validation::FieldErrors;

namespace {

using KindValidator = void (*)(FieldErrors&, const json&, const json*);

KindValidator validatorFor(const ResourceInfo& r) {
  struct Entry {
    const char* group;
    const char* kind;
    KindValidator validator;
  };
  static constexpr Entry kValidators[] = {
      {"", "Pod", validation::validatePod},
      {"", "Service", validation::validateService},
      {"", "ConfigMap", validation::validateConfigMap},
      {"", "Secret", validation::validateSecret},
      {"", "Namespace", validation::validateNamespace},
      {"", "Node", validation::validateNode},
      {"", "Event", validation::validateEvent},
      {"", "Endpoints", validation::validateEndpoints},
      {"", "PersistentVolume", validation::validatePersistentVolume},
      {"", "PersistentVolumeClaim", validation::validatePersistentVolumeClaim},
      {"", "ResourceQuota", validation::validateResourceQuota},
      {"", "LimitRange", validation::validateLimitRange},
      {"apps", "Deployment", validation::validateDeployment},
      {"apps", "ReplicaSet", validation::validateReplicaSet},
      {"apps", "DaemonSet", validation::validateDaemonSet},
      {"apps", "StatefulSet", validation::validateStatefulSet},
      {"apps", "ControllerRevision", validation::validateControllerRevision},
      {"batch", "Job", validation::validateJob},
      {"batch", "CronJob", validation::validateCronJob},
      {"autoscaling", "HorizontalPodAutoscaler", validation::validateHorizontalPodAutoscaler},
      {"storage.k8s.io", "StorageClass", validation::validateStorageClass},
      {"storage.k8s.io", "CSIDriver", validation::validateCSIDriver},
      {"coordination.k8s.io", "Lease", validation::validateLease},
      {"discovery.k8s.io", "EndpointSlice", validation::validateEndpointSlice},
      {"networking.k8s.io", "NetworkPolicy", validation::validateNetworkPolicy},
      {"minik8s.io", "Dns", validation::validateDns},
      {"apiextensions.k8s.io", "CustomResourceDefinition",
       validation::validateCustomResourceDefinition},
      {"admissionregistration.k8s.io", "MutatingWebhookConfiguration",
       validation::validateMutatingWebhookConfiguration},
      {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
       validation::validateValidatingWebhookConfiguration},
      {"rbac.authorization.k8s.io", "Role", validation::validateRole},
      {"rbac.authorization.k8s.io", "ClusterRole", validation::validateClusterRole},
      {"rbac.authorization.k8s.io", "RoleBinding", validation::validateRoleBinding},
      {"rbac.authorization.k8s.io", "ClusterRoleBinding", validation::validateClusterRoleBinding},
      {"certificates.k8s.io", "CertificateSigningRequest",
       validation::validateCertificateSigningRequest},
  };
  for (const auto& e : kValidators) {
    if (r.group == e.group && r.kind == e.kind) return e.validator;
  }
  return nullptr;
}

}  // namespace

std::vector<Cause> validate(const ResourceInfo& r, const json& obj, const json* old) {
  FieldErrors errs;
  if (!obj.is_object()) {
    errs.typeInvalid("", obj, "object");
    return errs.take();
  }
  if (old && !old->is_object()) old = &validation::kNoObject;
  if (r.custom) return r.custom->validate(obj, old, r.namespaced);
  try {
    if (KindValidator v = validatorFor(r)) {
      v(errs, obj, old);
    } else {
      // Kinds without rules of their own (ServiceAccount, ...): metadata only.
      validation::validateObjectMeta(errs, obj, r.namespaced, validation::nameIsDNSSubdomain);
      if (old) validation::validateObjectMetaUpdate(errs, obj, *old);
    }
  } catch (const std::exception& e) {
    // The validators check types before reading; this only guards against a missed case.
    std::vector<Cause> causes = errs.take();
    causes.push_back(Cause{"InternalError", "", std::string("Internal error: ") + e.what()});
    return causes;
  }
  return errs.take();
}

}  // namespace minik8s::api
