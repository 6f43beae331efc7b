#include "controllers/serviceaccount/root_ca_publisher.h"

#include "common/logging.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"

namespace minik8s::controllers {
namespace {

constexpr const char* kDescription =
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters.";

bool isRootCa(const json& cm) {
  const json meta = cm.value("metadata", json::object());
  return meta.is_object() && meta.value("name", "") == kRootCaConfigMapName;
}

}  // namespace

RootCaPublisher::RootCaPublisher(client::RestClient& rest, client::Informer& namespaces,
                                 client::Informer& configMaps, std::string caPem)
    : rest_(rest),
      namespaces_(namespaces),
      configMaps_(configMaps),
      caPem_(std::move(caPem)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "root-ca-publisher") {
  auto enqueueNamespace = [this](const json& ns) { queue_.add(client::objectKey(ns)); };
  namespaces_.addHandlers(
      {enqueueNamespace, [enqueueNamespace](const json&, const json& ns) { enqueueNamespace(ns); },
       nullptr});
  auto enqueueConfigMap = [this](const json& cm) {
    if (isRootCa(cm)) queue_.add(cm["metadata"].value("namespace", ""));
  };
  configMaps_.addHandlers(
      {nullptr, [enqueueConfigMap](const json&, const json& cm) { enqueueConfigMap(cm); },
       enqueueConfigMap});
}

RootCaPublisher::~RootCaPublisher() { stop(); }

void RootCaPublisher::start(int workers) { workers_.start(workers); }
void RootCaPublisher::stop() { workers_.stop(); }

Status RootCaPublisher::sync(const std::string& namespaceName) {
  auto ns = namespaces_.get(namespaceName);
  if (!ns || namespaceTerminating(*ns)) return Status::Ok();
  const json wantData = {{"ca.crt", caPem_}};
  auto cm = configMaps_.get(namespaceName + "/" + kRootCaConfigMapName);
  if (!cm) {
    json obj = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata",
                 {{"name", kRootCaConfigMapName},
                  {"namespace", namespaceName},
                  {"annotations", {{"kubernetes.io/description", kDescription}}}}},
                {"data", wantData}};
    auto created = rest_.create(client::resources::kConfigMaps, namespaceName, obj);
    if (created.ok()) {
      LOG_INFO("root-ca-publisher: created {}/{}", namespaceName, kRootCaConfigMapName);
      return Status::Ok();
    }
    const int code = created.status().code();
    if (code == 403 || code == 404) return Status::Ok();  // namespace going away
    return created.status();  // 409: the cache is behind; retried with back-off
  }
  if (cm->value("data", json::object()) == wantData && !cm->contains("binaryData")) {
    return Status::Ok();
  }
  json repaired = *cm;
  repaired["data"] = wantData;
  repaired.erase("binaryData");
  auto updated = rest_.update(client::resources::kConfigMaps, repaired);
  if (!updated.ok()) {
    if (updated.status().code() == 404) return Status::Ok();  // deleted: its event requeues
    return updated.status();  // 409 conflict: retried from a fresher cache
  }
  LOG_INFO("root-ca-publisher: repaired {}/{}", namespaceName, kRootCaConfigMapName);
  return Status::Ok();
}

}  // namespace minik8s::controllers
