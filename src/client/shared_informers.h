// SharedInformers: one informer per resource (namespace and selectors) for every component of a
// process, as client-go's SharedInformerFactory. `minik8s server` builds one and hands it to its
// scheduler, controller-manager and monitoring cache, so each pod is listed, watched, decoded
// and kept once instead of once per component; `minik8s scheduler` and `minik8s
// controller-manager` alone build their own.
//
// informer() gives a handle (client::Informer) with its own handlers: registered at the handle's
// start() (the objects already cached are replayed to them as adds), removed at its stop(). A
// component that stops (its Lease lost) stops its handles, and its handlers never run again;
// the shared list + watch starts with the first handle's start() and ends when its last handle is
// destroyed or at stop(). Thread-safe. Handles must not outlive the RestClient.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "client/informer.h"

namespace minik8s::client {

class SharedInformers {
 public:
  // Every shared informer lists and watches with `client` (it must read all they share).
  explicit SharedInformers(RestClient& client);
  ~SharedInformers();
  SharedInformers(const SharedInformers&) = delete;
  SharedInformers& operator=(const SharedInformers&) = delete;

  std::unique_ptr<Informer> informer(const Resource& resource, const std::string& ns = "",
                                     const ListParams& selectors = {});
  // Ends every shared watch (their caches stay readable); later handles get stopped informers.
  void stop();
  // How many shared informers have handles now (for tests and diagnostics).
  size_t size() const;

  // A handle from `shared` when there is one, else an informer of its own on `client`: for a
  // component that shares its process' informers where it is given them.
  static std::unique_ptr<Informer> informerOf(SharedInformers* shared, RestClient& client,
                                              const Resource& resource);

 private:
  RestClient& client_;
  mutable std::mutex mu_;
  // By path and selectors; a shared informer lives while a handle holds it.
  std::map<std::string, std::weak_ptr<SharedIndexInformer>> informers_;
  bool stopped_ = false;
};

}  // namespace minik8s::client
