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
// webhook can always be removed. Configurations and namespaces are read through the
// AdmissionLister (admission_lister.h: this server's writes are seen at once, another server's
// once the watch delivers them).
//
// clientConfig.url is supported; clientConfig.service is not reachable from the API server (pod
// and service networks live in the nodes' namespaces) and counts as a call failure with a
// message saying so. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

class WebhookAdmission : public ListerBackedPlugin {
 public:
  enum class Kind { kMutating, kValidating };
  WebhookAdmission(Registry& registry, Kind kind,
                   std::shared_ptr<AdmissionLister> lister = nullptr);

  Status admit(auth::AdmissionRequest& request) override;

  // The configuration resource this plugin reads ("mutatingwebhookconfigurations", ...).
  const char* resource() const;

 private:
  // This plugin's configurations, sorted by name.
  std::vector<AdmissionLister::Object> configurations();
  Status callWebhook(const json& webhook, auth::AdmissionRequest& request);
  bool matches(const json& webhook, const auth::AdmissionRequest& request);

  Registry& registry_;
  Kind kind_;
};

}  // namespace minik8s::apiserver::admission
