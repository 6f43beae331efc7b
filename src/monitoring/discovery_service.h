// DiscoveryService: serves Prometheus' HTTP service discovery documents (service_discovery.h)
// from informer caches of nodes, pods, services and endpoints, so a node that joins or a pod
// that goes is in the next document Prometheus fetches, without a list per request.
//
//   GET <prefix>/<role>[?namespace=a&namespace=b]  ->  200 application/json target groups
//
// The API server mounts it on a non-resource path (ApiServerOptions::nonResourceHandlers), so a
// caller needs RBAC's `get` on that URL, as for /metrics. 503 until the caches have synced.
// It owns its API client, so a handler holding a shared_ptr keeps everything it reads alive.
// start() and stop() from one thread; serve() is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "client/informer.h"
#include "common/http.h"

namespace minik8s::monitoring {

class DiscoveryService {
 public:
  // `prefix`: the path the documents live under ("/monitoring/sd").
  DiscoveryService(const client::ClientConfig& config, std::string prefix);
  ~DiscoveryService();
  DiscoveryService(const DiscoveryService&) = delete;
  DiscoveryService& operator=(const DiscoveryService&) = delete;

  void start();
  void stop();

  const std::string& prefix() const { return prefix_; }
  void serve(const http::Request& req, http::ResponseWriter& w) const;

 private:
  std::string prefix_;
  client::RestClient client_;
  client::Informer nodes_, pods_, services_, endpoints_;
};

}  // namespace minik8s::monitoring
