#include "client/shared_informers.h"

#include <vector>

namespace minik8s::client {

SharedInformers::SharedInformers(RestClient& client) : client_(client) {}

SharedInformers::~SharedInformers() { stop(); }

std::unique_ptr<Informer> SharedInformers::informer(const Resource& resource, const std::string& ns,
                                                    const ListParams& selectors) {
  const std::string key =
      resource.path(ns) + "?" + selectors.labelSelector + "&" + selectors.fieldSelector;
  std::lock_guard lock(mu_);
  std::shared_ptr<SharedIndexInformer> shared = informers_[key].lock();
  if (!shared) {
    shared = std::make_shared<SharedIndexInformer>(client_, resource, ns, selectors);
    if (stopped_) shared->stop();
    informers_[key] = shared;
  }
  return std::make_unique<Informer>(std::move(shared));
}

std::unique_ptr<Informer> SharedInformers::informerOf(SharedInformers* shared,
                                                      RestClient& client,
                                                      const Resource& resource) {
  if (shared) return shared->informer(resource);
  return std::make_unique<Informer>(client, resource);
}

void SharedInformers::stop() {
  std::vector<std::shared_ptr<SharedIndexInformer>> live;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    for (auto& [key, weak] : informers_) {
      if (auto shared = weak.lock()) live.push_back(std::move(shared));
    }
  }
  for (auto& shared : live) shared->stop();
}

size_t SharedInformers::size() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [key, weak] : informers_) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace minik8s::client
