// DiscoveryService: serves Prometheus' HTTP service discovery documents (service_discovery.h)
// from the ClusterCache's informers, so a node that joins or a pod that goes is in the next
// document Prometheus fetches, without a list per request.
//
//   GET <prefix>/<role>[?namespace=a&namespace=b]  ->  200 application/json target groups
//
// The API server mounts it on a non-resource path (ApiServerOptions::nonResourceHandlers), so a
// caller needs RBAC's `get` on that URL, as for /metrics. 503 until the caches have synced.
// serve() is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "common/http.h"
#include "monitoring/cluster_cache.h"

namespace minik8s::monitoring {

class DiscoveryService {
 public:
  // `prefix`: the path the documents live under ("/monitoring/sd").
  DiscoveryService(std::shared_ptr<const ClusterCache> cache, std::string prefix)
      : cache_(std::move(cache)), prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }
  void serve(const http::Request& req, http::ResponseWriter& w) const;

 private:
  std::shared_ptr<const ClusterCache> cache_;
  std::string prefix_;
};

}  // namespace minik8s::monitoring
