#include "apiserver/admission/admission_chain.h"

#include <algorithm>
#include <functional>

#include "apiserver/admission/pod_security_admission.h"
#include "apiserver/admission/sidecar_injection.h"
#include "apiserver/admission/storage_admission.h"
#include "apiserver/admission/webhook_admission.h"
#include "apiserver/auth/node_restriction.h"
#include "apiserver/auth/service_account_admission.h"

namespace minik8s::apiserver::admission {
namespace {

using Factory = std::function<std::shared_ptr<auth::AdmissionPlugin>(Registry&)>;

struct Entry {
  PluginInfo info;
  Factory make;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {{"MeshSidecarInjection", true},
       [](Registry& r) { return std::make_shared<SidecarInjection>(r); }},
      {{"ServiceAccount", true},
       [](Registry& r) { return std::make_shared<auth::ServiceAccountAdmission>(r); }},
      {{"DefaultStorageClass", true},
       [](Registry& r) { return std::make_shared<DefaultStorageClass>(r); }},
      {{"StorageObjectInUseProtection", true},
       [](Registry&) { return std::make_shared<StorageObjectInUseProtection>(); }},
      {{"MutatingAdmissionWebhook", true},
       [](Registry& r) {
         return std::make_shared<WebhookAdmission>(r, WebhookAdmission::Kind::kMutating);
       }},
      {{"NodeRestriction", false},
       [](Registry& r) { return std::make_shared<auth::NodeRestriction>(&r); }},
      {{"PodSecurity", false}, [](Registry& r) { return std::make_shared<PodSecurity>(r); }},
      {{"ValidatingAdmissionWebhook", false},
       [](Registry& r) {
         return std::make_shared<WebhookAdmission>(r, WebhookAdmission::Kind::kValidating);
       }},
  };
  return kEntries;
}

}  // namespace

std::vector<PluginInfo> admissionPlugins() {
  std::vector<PluginInfo> out;
  for (const auto& e : entries()) out.push_back(e.info);
  return out;
}

std::vector<std::string> defaultAdmissionPlugins() {
  std::vector<std::string> out;
  for (const auto& e : entries()) out.push_back(e.info.name);
  return out;
}

std::vector<std::string> selectAdmissionPlugins(const std::vector<std::string>& enable,
                                                const std::vector<std::string>& disable) {
  std::vector<std::string> out = defaultAdmissionPlugins();
  for (const auto& name : enable) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const std::string& name) {
                             return std::find(disable.begin(), disable.end(), name) !=
                                    disable.end();
                           }),
            out.end());
  return out;
}

Result<std::vector<std::shared_ptr<auth::AdmissionPlugin>>> buildAdmissionChain(
    const std::vector<std::string>& enabled, Registry& registry) {
  for (const auto& name : enabled) {
    const bool known = std::any_of(entries().begin(), entries().end(),
                                   [&](const Entry& e) { return e.info.name == name; });
    if (!known) {
      std::string names;
      for (const auto& e : entries()) names += (names.empty() ? "" : ", ") + e.info.name;
      return Status::BadRequest("unknown admission plugin \"" + name + "\" (known: " + names + ")");
    }
  }
  std::vector<std::shared_ptr<auth::AdmissionPlugin>> chain;
  for (const auto& e : entries()) {
    if (std::find(enabled.begin(), enabled.end(), e.info.name) != enabled.end()) {
      chain.push_back(e.make(registry));
    }
  }
  return chain;
}

}  // namespace minik8s::apiserver::admission
