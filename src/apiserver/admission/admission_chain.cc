#include "apiserver/admission/admission_chain.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>

#include "apiserver/admission/limit_ranger.h"
#include "apiserver/admission/pod_security_admission.h"
#include "apiserver/admission/resource_quota_admission.h"
#include "apiserver/admission/sidecar_injection.h"
#include "apiserver/admission/storage_admission.h"
#include "apiserver/admission/webhook_admission.h"
#include "apiserver/admission_lister.h"
#include "apiserver/auth/node_restriction.h"
#include "apiserver/auth/service_account_admission.h"
#include "common/file_util.h"
#include "common/yaml_json.h"

namespace minik8s::apiserver::admission {
namespace {

// The lister is the chain's one AdmissionLister, shared by the plugins that read through one.
using Lister = std::shared_ptr<AdmissionLister>;
using Factory = std::function<std::shared_ptr<auth::AdmissionPlugin>(Registry&, const Lister&)>;
// For plugins that take a configuration (null when none is given).
using ConfiguredFactory = std::function<Result<std::shared_ptr<auth::AdmissionPlugin>>(
    Registry&, const json&, const Lister&)>;

struct Entry {
  PluginInfo info;
  Factory make;
  ConfiguredFactory configured = nullptr;
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {{"MeshSidecarInjection", true},
       nullptr,
       [](Registry& r, const json& config,
          const Lister& lister) -> Result<std::shared_ptr<auth::AdmissionPlugin>> {
         auto plugin = SidecarInjection::fromConfig(r, config, lister);
         if (!plugin.ok()) return plugin.status();
         return std::shared_ptr<auth::AdmissionPlugin>(std::move(plugin.value()));
       }},
      {{"ServiceAccount", true},
       [](Registry& r, const Lister& lister) {
         return std::make_shared<auth::ServiceAccountAdmission>(r, std::chrono::seconds(2), nullptr,
                                                                lister);
       }},
      {{"DefaultStorageClass", true},
       [](Registry& r, const Lister&) { return std::make_shared<DefaultStorageClass>(r); }},
      {{"StorageObjectInUseProtection", true},
       [](Registry&, const Lister&) { return std::make_shared<StorageObjectInUseProtection>(); }},
      {{"MutatingAdmissionWebhook", true},
       [](Registry& r, const Lister& lister) {
         return std::make_shared<WebhookAdmission>(r, WebhookAdmission::Kind::kMutating, lister);
       }},
      {{"LimitRanger", true},
       [](Registry& r, const Lister& lister) { return std::make_shared<LimitRanger>(r, lister); }},
      {{"NodeRestriction", false},
       [](Registry& r, const Lister&) { return std::make_shared<auth::NodeRestriction>(&r); }},
      {{"PodSecurity", false},
       nullptr,
       [](Registry& r, const json& config,
          const Lister& lister) -> Result<std::shared_ptr<auth::AdmissionPlugin>> {
         auto parsed = PodSecurityConfiguration::fromJson(config);
         if (!parsed.ok()) return parsed.status();
         return std::shared_ptr<auth::AdmissionPlugin>(
             std::make_shared<PodSecurity>(r, std::move(parsed.value()), lister));
       }},
      {{"ValidatingAdmissionWebhook", false},
       [](Registry& r, const Lister& lister) {
         return std::make_shared<WebhookAdmission>(r, WebhookAdmission::Kind::kValidating, lister);
       }},
      {{"ResourceQuota", false},
       [](Registry& r, const Lister& lister) {
         return std::make_shared<ResourceQuotaAdmission>(
             r, [] { return std::chrono::system_clock::now(); }, lister);
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
    const std::vector<std::string>& enabled, Registry& registry,
    const AdmissionPluginConfigs& configs, std::shared_ptr<AdmissionLister> lister) {
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
  if (!lister) lister = std::make_shared<AdmissionLister>(registry);
  for (const auto& e : entries()) {
    if (std::find(enabled.begin(), enabled.end(), e.info.name) == enabled.end()) continue;
    if (!e.configured) {
      chain.push_back(e.make(registry, lister));
      continue;
    }
    auto config = configs.find(e.info.name);
    auto plugin = e.configured(registry, config == configs.end() ? json() : config->second, lister);
    if (!plugin.ok()) {
      return Status::BadRequest("admission plugin " + e.info.name + ": " +
                                plugin.status().message());
    }
    chain.push_back(std::move(plugin.value()));
  }
  return chain;
}

Result<AdmissionPluginConfigs> readAdmissionConfiguration(const std::string& path) {
  auto text = readFile(path);
  if (!text.ok()) return text.status();
  auto doc = parseYaml(*text);
  if (!doc.ok()) return Status::BadRequest(path + ": " + doc.status().message());
  if (!doc->is_object() || doc->value("kind", "") != "AdmissionConfiguration") {
    return Status::BadRequest(path + ": expected kind AdmissionConfiguration");
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  AdmissionPluginConfigs out;
  const json plugins = doc->value("plugins", json::array());
  if (!plugins.is_array()) return Status::BadRequest(path + ": plugins must be a list");
  for (const auto& p : plugins) {
    const std::string name = p.is_object() ? p.value("name", "") : "";
    if (name.empty()) return Status::BadRequest(path + ": every plugin needs a name");
    if (p.contains("configuration")) {
      out[name] = p["configuration"];
    } else if (p.contains("path") && p["path"].is_string()) {
      std::filesystem::path file = p["path"].get<std::string>();
      if (file.is_relative()) file = std::filesystem::path(dir) / file;
      auto configText = readFile(file.string());
      if (!configText.ok()) return configText.status();
      auto config = parseYaml(*configText);
      if (!config.ok()) return Status::BadRequest(file.string() + ": " + config.status().message());
      out[name] = std::move(config.value());
    }
  }
  return out;
}

}  // namespace minik8s::apiserver::admission
