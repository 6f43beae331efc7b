#include "monitoring/cluster_cache.h"

#include "api/object_meta.h"

namespace minik8s::monitoring {

ClusterCache::ClusterCache(const client::ClientConfig& config)
    : client_(config),
      nodes_(client_, client::resources::kNodes),
      pods_(client_, client::resources::kPods),
      services_(client_, client::resources::kServices),
      endpoints_(client_, client::resources::kEndpoints) {
  pods_.addIndex("namespace",
                 [](const json& pod) { return std::vector<std::string>{api::namespaceOf(pod)}; });
}

ClusterCache::~ClusterCache() { stop(); }

void ClusterCache::start() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->start();
}

void ClusterCache::stop() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->stop();
}

Result<json> ClusterCache::object(const std::string& group, const std::string& version,
                                  const std::string& resource, const std::string& ns,
                                  const std::string& name) const {
  return client_.get(client::Resource{group, version, resource, !ns.empty()}, ns, name);
}

bool ClusterCache::synced() const {
  for (const auto* i : {&nodes_, &pods_, &services_, &endpoints_})
    if (!i->hasSynced()) return false;
  return true;
}

}  // namespace minik8s::monitoring
