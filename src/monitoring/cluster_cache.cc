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

bool ClusterCache::ensureSynced(std::chrono::milliseconds timeout) const {
  std::call_once(started_, [this] {
    for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->start();
  });
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_})
    if (!i->waitForSync(timeout)) return false;
  return true;
}

void ClusterCache::stop() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->stop();
}

Result<json> ClusterCache::object(const std::string& group, const std::string& version,
                                  const std::string& resource, const std::string& ns,
                                  const std::string& name) const {
  return client_.get(client::Resource{group, version, resource, !ns.empty()}, ns, name);
}

}  // namespace minik8s::monitoring
