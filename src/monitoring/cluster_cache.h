// ClusterCache: informer caches of the objects monitoring reads (nodes, pods, services,
// endpoints), shared by the service discovery and the custom metrics API so each object is
// watched once. It owns its API client, so holders of a shared_ptr keep everything alive. The
// informers start on first use (ensureSynced), so a server whose cluster has no Prometheus keeps
// no copy of every pod; in `minik8s server` they are handles on the server's SharedInformers,
// whose pods and nodes its scheduler and controllers keep anyway. ensureSynced() and the readers
// are thread-safe and return copies.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/shared_informers.h"

namespace minik8s::monitoring {

// What the custom metrics API reads of the cluster (a fake in tests).
class ObjectSource {
 public:
  virtual ~ObjectSource() = default;
  // Starts watching if need be; true once the caches are complete (waits up to `timeout`).
  virtual bool ensureSynced(std::chrono::milliseconds timeout) const = 0;
  virtual std::vector<json> podsIn(const std::string& ns) const = 0;
  // One object by resource ("apps", "v1", "deployments"), from the API server.
  virtual Result<json> object(const std::string& group, const std::string& version,
                              const std::string& resource, const std::string& ns,
                              const std::string& name) const = 0;
};

class ClusterCache : public ObjectSource {
 public:
  // Reads objects with a client of `config`; watches with it too, or reads `informers` (which
  // must outlive its start, or be stopped before they go) when given.
  explicit ClusterCache(const client::ClientConfig& config,
                        client::SharedInformers* informers = nullptr);
  ~ClusterCache();
  ClusterCache(const ClusterCache&) = delete;
  ClusterCache& operator=(const ClusterCache&) = delete;

  // Starts the informers the first time; true once they have synced (waits up to `timeout`).
  bool ensureSynced(std::chrono::milliseconds timeout) const override;
  void stop();

  std::vector<json> nodes() const { return nodes_->list(); }
  std::vector<json> pods() const { return pods_->list(); }
  std::vector<json> podsIn(const std::string& ns) const override {
    return pods_->byIndex("namespace", ns);
  }
  Result<json> object(const std::string& group, const std::string& version,
                      const std::string& resource, const std::string& ns,
                      const std::string& name) const override;
  std::vector<json> services() const { return services_->list(); }
  std::vector<json> endpoints() const { return endpoints_->list(); }
  std::optional<json> service(const std::string& ns, const std::string& name) const {
    return services_->get(ns + "/" + name);
  }

 private:
  mutable client::RestClient client_;                      // thread-safe
  std::unique_ptr<client::SharedInformers> ownInformers_;  // without the server's
  std::unique_ptr<client::Informer> nodes_, pods_, services_, endpoints_;
  mutable std::once_flag started_;
};

}  // namespace minik8s::monitoring
