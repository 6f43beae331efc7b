#include "controllers/serviceaccount/serviceaccounts_controller.h"

#include <algorithm>

#include "common/logging.h"

namespace minik8s::controllers {

bool namespaceTerminating(const json& ns) {
  if (isTerminating(ns)) return true;
  const json status = ns.value("status", json::object());
  return status.is_object() && status.value("phase", "") == "Terminating";
}

ServiceAccountsController::ServiceAccountsController(client::RestClient& rest,
                                                     client::Informer& namespaces,
                                                     client::Informer& serviceAccounts,
                                                     std::vector<std::string> accounts)
    : rest_(rest),
      namespaces_(namespaces),
      serviceAccounts_(serviceAccounts),
      accounts_(std::move(accounts)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "serviceaccounts") {
  auto enqueueNamespace = [this](const json& ns) { queue_.add(client::objectKey(ns)); };
  namespaces_.addHandlers(
      {enqueueNamespace, [enqueueNamespace](const json&, const json& ns) { enqueueNamespace(ns); },
       nullptr});
  // Only a deleted account needs work: it is recreated.
  serviceAccounts_.addHandlers({nullptr, nullptr, [this](const json& sa) {
                                  const json meta = sa.value("metadata", json::object());
                                  const std::string name = meta.value("name", "");
                                  if (std::find(accounts_.begin(), accounts_.end(), name) !=
                                      accounts_.end()) {
                                    queue_.add(meta.value("namespace", ""));
                                  }
                                }});
}

ServiceAccountsController::~ServiceAccountsController() { stop(); }

void ServiceAccountsController::start(int workers) { workers_.start(workers); }
void ServiceAccountsController::stop() { workers_.stop(); }

Status ServiceAccountsController::sync(const std::string& namespaceName) {
  auto ns = namespaces_.get(namespaceName);
  if (!ns || namespaceTerminating(*ns)) return Status::Ok();
  for (const std::string& name : accounts_) {
    if (serviceAccounts_.get(namespaceName + "/" + name)) continue;
    json sa = {{"apiVersion", "v1"},
               {"kind", "ServiceAccount"},
               {"metadata", {{"name", name}, {"namespace", namespaceName}}}};
    auto created = rest_.create(client::resources::kServiceAccounts, namespaceName, sa);
    if (!created.ok()) {
      const int code = created.status().code();
      if (code == 409) continue;  // exists already: the cache is behind
      // A namespace that began terminating refuses new objects (403/404): nothing to do.
      if (code == 403 || code == 404) return Status::Ok();
      return created.status();
    }
    LOG_INFO("serviceaccounts: created {}/{}", namespaceName, name);
  }
  return Status::Ok();
}

}  // namespace minik8s::controllers
