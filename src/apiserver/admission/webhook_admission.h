// WebhookAdmission: the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins.
//
// For each write it finds the webhooks of every MutatingWebhookConfiguration (or
// ValidatingWebhookConfiguration) whose rules (operations, apiGroups, apiVersions, resources
// with subresources, scope), namespaceSelector and objectSelector match, and POSTs each an
// admission.k8s.io/v1 AdmissionReview over HTTPS, trusting the webhook's caBundle. A response
// that is not allowed refuses the write with the webhook's status ("admission webhook
// \"name\" denied the request: ..."); a mutating webhook's JSONPatch is applied to the object.
// A webhook that cannot be reached, times out or answers badly fails the write (failurePolicy
// Fail, the default) or is skipped (Ignore). Webhooks with side effects are not called on dry
// runs. Writes of the webhook configurations themselves never go to webhooks, so a broken
// webhook can always be removed. Configurations are read through the registry and cached until
// one is written (resourceWritten) or for at most a second (written through another server).
//
// clientConfig.url is supported; clientConfig.service is not reachable from the API server (pod
// and service networks live in the nodes' namespaces) and counts as a call failure with a
// message saying so. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

class WebhookAdmission : public auth::AdmissionPlugin {
 public:
  enum class Kind { kMutating, kValidating };
  WebhookAdmission(Registry& registry, Kind kind);

  Status admit(auth::AdmissionRequest& request) override;
  void resourceWritten(const api::ResourceInfo& r) override;

  // The configuration resource this plugin reads ("mutatingwebhookconfigurations", ...).
  const char* resource() const;

 private:
  std::vector<json> configurations();
  Status callWebhook(const json& webhook, auth::AdmissionRequest& request);
  bool matches(const json& webhook, const auth::AdmissionRequest& request);

  Registry& registry_;
  Kind kind_;
  std::mutex mu_;
  std::vector<json> cached_;
  std::chrono::steady_clock::time_point cachedAt_{};
  bool cacheValid_ = false;
};

}  // namespace minik8s::apiserver::admission
