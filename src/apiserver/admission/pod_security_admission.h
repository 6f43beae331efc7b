// PodSecurity (validating): Kubernetes' built-in Pod Security admission. A namespace's labels
// pod-security.kubernetes.io/{enforce,audit,warn}[-version] choose a Pod Security Standard
// level (privileged, baseline, restricted; pod_security_policy.h) per mode:
//
//   - pods (create, and updates that change an image or add an ephemeral container): enforce
//     refuses with 403 `pods "web" is forbidden: violates PodSecurity "restricted:latest": ...`;
//     warn adds `would violate PodSecurity "baseline:latest": ...` warnings (kubectl prints them
//     as `Warning: ...`); audit is written to the server's log (minik8s has no audit log);
//   - the pod templates of Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
//     ReplicationControllers and PodTemplates: warn and audit only, never enforce (the pods the
//     controllers create are refused instead);
//   - namespaces: labels with a bad level or version are refused (422 on the label); tightening
//     enforce warns about the namespace's existing pods that would violate it.
//
// Unlabelled namespaces are privileged:latest for every mode, so nothing changes for them, and
// nothing is exempt (Kubernetes' defaults). A PodSecurityConfiguration (the PodSecurity entry of
// the server's --admission-control-config-file, as in kube-apiserver) may set other defaults and
// exempt usernames, namespaces and runtime classes. Counts pod_security_evaluations_total,
// pod_security_exemptions_total and pod_security_errors_total as Kubernetes does. Namespaces
// are read through the AdmissionLister, a namespace's pods through the registry. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apiserver/admission/pod_security_policy.h"
#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

// pod-security.admission.config.k8s.io/v1 PodSecurityConfiguration.
struct PodSecurityConfiguration {
  podsecurity::Policy defaults;  // privileged:latest for every mode
  std::vector<std::string> exemptUsernames, exemptNamespaces, exemptRuntimeClasses;

  // From its JSON (or YAML) object: {defaults: {enforce, enforce-version, audit, audit-version,
  // warn, warn-version}, exemptions: {usernames, namespaces, runtimeClasses}}. A bad level or
  // version is BadRequest naming the field.
  static Result<PodSecurityConfiguration> fromJson(const json& config);
};

class PodSecurity : public ListerBackedPlugin {
 public:
  explicit PodSecurity(Registry& registry, PodSecurityConfiguration config = {},
                       std::shared_ptr<AdmissionLister> lister = nullptr)
      : ListerBackedPlugin(registry, std::move(lister)),
        registry_(registry),
        config_(std::move(config)) {}
  Status admit(auth::AdmissionRequest& request) override;

  // The warnings a namespace update gets when its enforce level becomes `enforce`: which of the
  // namespace's pods would violate it (Kubernetes' wording; at most 3000 pods, about a second).
  std::vector<std::string> evaluatePodsInNamespace(const std::string& ns,
                                                   const podsecurity::LevelVersion& enforce);

 private:
  Status admitNamespace(auth::AdmissionRequest& request);
  Status admitPod(auth::AdmissionRequest& request);
  Status admitTemplate(auth::AdmissionRequest& request, const json& podMetadata,
                       const json& podSpec);
  // The checks of the namespace's policy on one pod or template; `enforce` only for pods;
  // `badLabels` when the policy comes from labels with errors (counted as an error).
  Status evaluate(auth::AdmissionRequest& request, const podsecurity::Policy& policy,
                  const json& podMetadata, const json& podSpec, bool enforce, bool badLabels);
  // The namespace's labels (null when it has none); nullopt when there is no such namespace.
  Result<std::optional<json>> namespaceLabels(const std::string& ns);
  bool exempt(const auth::AdmissionRequest& request, const std::string& ns) const;
  // The warning a labelled exempt namespace gets ("" when its labels change nothing).
  std::string exemptNamespaceWarning(const std::string& ns, const podsecurity::Policy& policy,
                                     const json& labels) const;

  Registry& registry_;
  const PodSecurityConfiguration config_;
};

}  // namespace minik8s::apiserver::admission
