// ServiceAccountAdmission: the mutating admission plugin Kubernetes calls "ServiceAccount".
//
// On pod CREATE it defaults spec.serviceAccountName (and the deprecated spec.serviceAccount) to
// "default", refuses the pod (403) when that service account does not exist, and, unless
// automountServiceAccountToken is false on the pod (or unset on the pod and false on the
// account), adds the projected volume "kube-api-access-<suffix>" (a bound token, the cluster CA
// from ConfigMap kube-root-ca.crt and the namespace) mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that has
// nothing mounted there. Other requests pass untouched. The service account is read through the
// AdmissionLister (one not in memory yet, such as a new namespace's "default", from the
// registry). Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::auth {

inline constexpr const char* kServiceAccountMountPath =
    "/var/run/secrets/kubernetes.io/serviceaccount";
inline constexpr const char* kApiAccessVolumePrefix = "kube-api-access-";
inline constexpr const char* kRootCaConfigMap = "kube-root-ca.crt";
// The token lifetime the volume asks for: Kubernetes' 3607 s, which tells the API server the
// token came from this plugin.
inline constexpr int64_t kApiAccessTokenExpirationSeconds = 3607;

// The projected volume the plugin adds (exposed for the kubelet's tests and documentation).
json apiAccessVolume(const std::string& name);

class ServiceAccountAdmission : public ListerBackedPlugin {
 public:
  // `waitForDefault`: how long to wait for the "default" account of a new namespace (the
  // ServiceAccounts controller creates it moments after the namespace). `suffix` makes the
  // 5-character volume-name suffix (tests make it deterministic).
  explicit ServiceAccountAdmission(
      Registry& registry, std::chrono::milliseconds waitForDefault = std::chrono::seconds(2),
      std::function<std::string()> suffix = nullptr,
      std::shared_ptr<AdmissionLister> lister = nullptr);

  Status admit(AdmissionRequest& request) override;

 private:
  Registry& registry_;
  std::chrono::milliseconds waitForDefault_;
  std::function<std::string()> suffix_;
};

}  // namespace minik8s::apiserver::auth
