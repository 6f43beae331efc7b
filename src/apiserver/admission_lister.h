// AdmissionLister: the objects admission plugins read on every write (Namespaces,
// ServiceAccounts, LimitRanges, ResourceQuotas, Mutating/ValidatingWebhookConfigurations), kept in
// memory from the server's watch cache, as kube-apiserver's plugins read informer listers instead
// of the store. One lister is shared by the plugins of a chain (buildAdmissionChain).
//
// Before start() every read goes to the registry (plugins built alone, unit tests). After it, each
// kept resource is listed once and then followed through a WatchCache watcher of its prefix; the
// events that arrived are applied at the start of each read (the lister has no thread), so a read
// is as fresh as the watch cache. How stale an answer can be:
//   - get(): an object not in memory is read from the registry (a namespace or service account
//     created a moment ago, here or through another server, is still found); one in memory may
//     miss another server's change for as long as the watch cache lags the store (milliseconds).
//   - list() answers from memory: a LimitRange or webhook configuration another server created a
//     moment ago may be missed for that long, as with kube-apiserver's listers. ResourceQuota does
//     not lose units to this: its charges are resourceVersion-checked writes, and a conflict or a
//     refusal reads the quotas again from the registry (resource_quota_admission.h).
//   - Namespaces are read for their labels (PodSecurity, MeshSidecarInjection, webhook
//     namespaceSelectors) and, through Registry::setNamespaceReader, for a create's check that its
//     namespace exists and is not Terminating (kube-apiserver's NamespaceLifecycle reads its
//     informer the same way): a label or a Terminating phase written through another server
//     applies that much later, and the namespace controller deletes what was created in the
//     window, as in Kubernetes. A namespace deleted through this server is fenced as below, and
//     one not in memory is read from the store, so a namespace created a moment ago is found.
//   - This server's own writes are never missed: resourceWritten(r), which the server calls after
//     every write it served and before answering, makes the next read of r take the store's
//     current revision and read the registry until the watch cache has delivered that revision.
// Other resources are always read from the registry. Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver {

class WatchCache;
class Watcher;

class AdmissionLister {
 public:
  // An object as stored (storage version, with its resourceVersion); shared, never changed.
  using Object = std::shared_ptr<const json>;

  explicit AdmissionLister(Registry& registry);
  ~AdmissionLister();
  AdmissionLister(const AdmissionLister&) = delete;
  AdmissionLister& operator=(const AdmissionLister&) = delete;

  // Follows the store through `watchCache` from now on (the first call wins; the watch cache must
  // outlive the lister's use of it: a watcher ended by its shutdown turns the lister back to
  // reading the registry).
  void start(WatchCache& watchCache);

  // The object (NotFound when it does not exist).
  Result<Object> get(const api::ResourceInfo& r, const std::string& ns, const std::string& name);
  // The objects of `r` in `ns` ("" = all namespaces, or a cluster-scoped resource), sorted by
  // key as Registry::list sorts them.
  Result<std::vector<Object>> list(const api::ResourceInfo& r, const std::string& ns);

  // This server wrote objects of `r` (AdmissionPlugin::resourceWritten).
  void resourceWritten(const api::ResourceInfo& r);
  // A write the caller made itself through the registry (a quota's charge): `stored` (with its
  // resourceVersion) replaces an older copy in memory.
  void observe(const api::ResourceInfo& r, const json& stored);

  Registry& registry() { return registry_; }

 private:
  struct Entry {
    int64_t revision = 0;
    Object object;
  };
  // One kept resource, with its own watcher of its prefix (so the watch queues only its events)
  // and its own lock.
  struct Kept {
    std::string prefix;  // store prefix of the resource, "/registry/core/namespaces/"
    std::mutex mu;
    std::shared_ptr<Watcher> watcher;      // null until listed, or after the watch failed
    std::map<std::string, Entry> objects;  // store key -> object
    int64_t syncedAt = 0;  // the revision it was listed at: older events are in the list
    int64_t seen = 0;      // the latest revision in memory (listed or applied)
    std::atomic<bool> written{false};  // resourceWritten since the last read
    int64_t fence = 0;  // read the registry until the watch cache has delivered this revision
  };

  Kept* kept(const api::ResourceInfo& r);
  // Under k.mu: applies what the watch delivered; false when `k` must be read from the registry.
  bool ready(Kept& k);
  bool sync(Kept& k);   // under k.mu: lists the resource and watches from there
  bool drain(Kept& k);  // under k.mu: applies the events its watcher holds
  static void apply(Kept& k, const std::string& key, int64_t revision, Object object);

  Registry& registry_;
  std::map<std::string, std::unique_ptr<Kept>> kept_;  // by "group/plural"; fixed at construction
  std::atomic<WatchCache*> watchCache_{nullptr};
};

// An admission plugin that reads through an AdmissionLister: gives the lister the server's watch
// cache when the server starts and tells it about the server's writes. Without a lister given,
// the plugin has its own.
class ListerBackedPlugin : public auth::AdmissionPlugin {
 public:
  ListerBackedPlugin(Registry& registry, std::shared_ptr<AdmissionLister> lister)
      : lister_(lister ? std::move(lister) : std::make_shared<AdmissionLister>(registry)) {}
  void serverStarted(WatchCache& watchCache) override { lister_->start(watchCache); }
  void resourceWritten(const api::ResourceInfo& r) override { lister_->resourceWritten(r); }

 protected:
  std::shared_ptr<AdmissionLister> lister_;
};

}  // namespace minik8s::apiserver
