#include "monitoring/cluster_cache.h"

#include "api/object_meta.h"

namespace minik8s::monitoring {

ClusterCache::ClusterCache(const client::ClientConfig& config, client::SharedInformers* informers)
    : client_(config) {
  if (!informers) {
    ownInformers_ = std::make_unique<client::SharedInformers>(client_);
    informers = ownInformers_.get();
  }
  nodes_ = informers->informer(client::resources::kNodes);
  pods_ = informers->informer(client::resources::kPods);
  services_ = informers->informer(client::resources::kServices);
  endpoints_ = informers->informer(client::resources::kEndpoints);
  pods_->addIndex(client::kNamespaceIndex, client::namespaceIndex());
}

ClusterCache::~ClusterCache() { stop(); }

bool ClusterCache::ensureSynced(std::chrono::milliseconds timeout) const {
  std::call_once(started_, [this] {
    for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) (*i)->start();
  });
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_})
    if (!(*i)->waitForSync(timeout)) return false;
  return true;
}

void ClusterCache::stop() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) (*i)->stop();
  if (ownInformers_) ownInformers_->stop();
}

Result<json> ClusterCache::object(const std::string& group, const std::string& version,
                                  const std::string& resource, const std::string& ns,
                                  const std::string& name) const {
  return client_.get(client::Resource{group, version, resource, !ns.empty()}, ns, name);
}

}  // namespace minik8s::monitoring
