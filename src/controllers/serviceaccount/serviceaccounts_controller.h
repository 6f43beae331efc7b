// ServiceAccountsController: a "default" ServiceAccount in every active namespace, created when
// the namespace appears and again whenever it is deleted, as kube-controller-manager's
// serviceaccount-controller does. Keyed by namespace; fed by the namespaces and serviceaccounts
// informers (all namespaces). Terminating namespaces are left alone. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

class ServiceAccountsController {
 public:
  // Registers handlers on both informers: construct before they start. `accounts`: the names
  // every namespace gets.
  ServiceAccountsController(client::RestClient& rest, client::Informer& namespaces,
                            client::Informer& serviceAccounts,
                            std::vector<std::string> accounts = {"default"});
  ~ServiceAccountsController();

  void start(int workers = 1);
  void stop();
  Status sync(const std::string& namespaceName);

 private:
  client::RestClient& rest_;
  client::Informer& namespaces_;
  client::Informer& serviceAccounts_;
  std::vector<std::string> accounts_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

// True when the namespace object is being deleted (deletionTimestamp or phase Terminating).
bool namespaceTerminating(const json& ns);

}  // namespace minik8s::controllers
