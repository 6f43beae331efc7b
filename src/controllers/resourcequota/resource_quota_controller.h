// ResourceQuotaController: keeps every core/v1 ResourceQuota's status current, as
// kube-controller-manager's resourcequota controller does: status.hard = spec.hard and
// status.used = what the namespace's objects use of each hard resource (api/resource_quota.h:
// pods that are not terminal, their requests and limits, services, node ports, claims and their
// storage, object counts count/<resource>.<group>), counting only objects the quota's scopes
// select.
//
// A quota is recomputed when it is created or its spec changes, when an object it may count is
// deleted or a pod turns terminal (the "monitored" informers; admission charges creates, this
// gives back), and every resyncPeriod. Objects of monitored resources are counted from their
// informer caches, any other counted resource (count/deployments.apps, count/crontabs.stable.
// example.com: custom resources at their group's preferred version) from a LIST. Status is
// written with the quota's resourceVersion: a conflict with the ResourceQuota admission plugin's
// charge is retried with back-off. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct QuotaMonitor {
  client::Resource resource;
  client::Informer* informer = nullptr;
};

struct ResourceQuotaControllerOptions {
  int workers = 1;
  std::chrono::milliseconds resyncPeriod{std::chrono::minutes(5)};  // --resource-quota-sync-period
  NowFn now = [] { return WallClock::now(); };  // pods past their deletion deadline
};

// The resourcequotas resource.
extern const client::Resource kResourceQuotas;

class ResourceQuotaController {
 public:
  // Adds handlers to `quotas` and the monitors' informers: construct before they start.
  ResourceQuotaController(client::RestClient& rest, client::Informer& quotas,
                          std::vector<QuotaMonitor> monitors,
                          ResourceQuotaControllerOptions options = {});
  ~ResourceQuotaController();
  ResourceQuotaController(const ResourceQuotaController&) = delete;
  ResourceQuotaController& operator=(const ResourceQuotaController&) = delete;

  void start();
  void stop();
  // Recomputes the quota "namespace/name" and writes its status when it changed.
  Status sync(const std::string& key);

 private:
  void enqueueNamespace(const std::string& ns);
  Result<std::vector<json>> objectsOf(const std::string& group, const std::string& resource,
                                      const std::string& ns);

  client::RestClient& rest_;
  client::Informer& quotas_;
  std::vector<QuotaMonitor> monitors_;
  ResourceQuotaControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
