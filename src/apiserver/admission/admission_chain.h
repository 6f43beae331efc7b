// The admission chain: every admission plugin minik8s has, by the name Kubernetes gives it, in
// the one fixed order writes pass through them (mutating plugins first, then validating ones):
//
//   MeshSidecarInjection          mutating    the mesh's sidecar in meshed pods (docs/mesh.md)
//   ServiceAccount                mutating    default service account, token volume (auth/)
//   DefaultStorageClass           mutating    claims without a class get the default one
//   StorageObjectInUseProtection  mutating    pvc-/pv-protection finalizers on create
//   MutatingAdmissionWebhook      mutating    users' MutatingWebhookConfigurations
//   LimitRanger                   mutating    LimitRange defaults, then its min/max checks
//   NodeRestriction               validating  what a node may change (auth/)
//   PodSecurity                   validating  Pod Security Standards by namespace labels
//   ValidatingAdmissionWebhook    validating  users' ValidatingWebhookConfigurations
//   ResourceQuota                 validating  ResourceQuota checks; charges status.used
//
// A new plugin is one entry in admission_chain.cc (name, mutating or not, factory). The order
// does not depend on the order of --enable-admission-plugins, as in kube-apiserver.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apiserver/admission_lister.h"
#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::admission {

struct PluginInfo {
  std::string name;
  bool mutating = false;
};

// Every plugin, in chain order.
std::vector<PluginInfo> admissionPlugins();
// The plugins on by default (all of them).
std::vector<std::string> defaultAdmissionPlugins();

// Plugin name -> its configuration object (PodSecurity's PodSecurityConfiguration), as an
// AdmissionConfiguration gives them; plugins without one get their defaults.
using AdmissionPluginConfigs = std::map<std::string, json>;

// The chain of `enabled` plugins (names as above; an unknown name is InvalidArgument-style
// BadRequest naming the known ones), in chain order. The plugins read objects through `registry`,
// those read on every write through one AdmissionLister they share (admission_lister.h): `lister`
// when given (the server also checks namespaces on create through it), else one of their own.
// A configuration a plugin cannot use is BadRequest naming the plugin.
Result<std::vector<std::shared_ptr<auth::AdmissionPlugin>>> buildAdmissionChain(
    const std::vector<std::string>& enabled, Registry& registry,
    const AdmissionPluginConfigs& configs = {}, std::shared_ptr<AdmissionLister> lister = nullptr);

// kube-apiserver's --admission-control-config-file: an AdmissionConfiguration
// (apiserver.config.k8s.io/v1, YAML or JSON) whose plugins[] each give a `configuration` object
// or a `path` to a file holding one (relative paths from the file's directory).
Result<AdmissionPluginConfigs> readAdmissionConfiguration(const std::string& path);

// `defaults` plus `enable` minus `disable` (kube-apiserver's --enable/--disable-admission-plugins).
std::vector<std::string> selectAdmissionPlugins(const std::vector<std::string>& enable,
                                                const std::vector<std::string>& disable);

}  // namespace minik8s::apiserver::admission
