// Informer: list + watch of one resource into a local cache, with event handlers and indexes, as
// client-go's shared informer does.
//
// The list, the watch and the cache live in a SharedIndexInformer; an Informer is one consumer's
// handle on it, with that consumer's handlers. Built from a RestClient, an Informer has its own
// SharedIndexInformer (nobody else reads it); built by SharedInformers (shared_informers.h),
// several components of one process read one cache of each resource, and each decoded object is
// kept once.
//
// SharedIndexInformer::start() lists, fills the cache, calls onAdd for each object, then watches
// from the list's resourceVersion, resuming from the last seen version when a watch ends and
// re-listing (with synthetic add/update/delete callbacks for what changed) when the server answers
// 410 Expired or the connection fails. Handlers run on the informer's own thread, one event at a
// time, in order; they should only enqueue keys. Handlers registered once the cache holds objects
// first get an onAdd for each of them, on the registering thread, before any later event. Cached
// objects are immutable and shared: get()/list()/byIndex() return copies, the *Shared() readers
// return the cached objects themselves without copying. Cache reads are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/rest_client.h"

namespace minik8s::client {

struct EventHandlers {
  std::function<void(const json& obj)> onAdd;
  std::function<void(const json& oldObj, const json& newObj)> onUpdate;
  std::function<void(const json& obj)> onDelete;
};

// "namespace/name", or "name" for cluster-scoped objects.
std::string objectKey(const json& obj);
// The namespace ("" for cluster-scoped objects) and name of such a key.
std::pair<std::string, std::string> splitObjectKey(const std::string& key);

using IndexFunc = std::function<std::vector<std::string>(const json&)>;
// Objects by metadata.namespace, under the one name every consumer of a shared informer gives
// that index (one name means one function).
inline constexpr const char* kNamespaceIndex = "namespace";
IndexFunc namespaceIndex();
using SharedObject = std::shared_ptr<const json>;

// The list + watch, cache, indexes and handler registry of one resource (in one namespace, with
// one set of selectors). Thread-safe. Most code uses an Informer handle rather than this.
class SharedIndexInformer {
 public:
  SharedIndexInformer(RestClient& client, Resource resource, std::string ns = "",
                      ListParams selectors = {});
  ~SharedIndexInformer();
  SharedIndexInformer(const SharedIndexInformer&) = delete;
  SharedIndexInformer& operator=(const SharedIndexInformer&) = delete;

  // Starts the list + watch (once; not again after stop()).
  void start();
  // Ends the watch; the cache stays readable.
  void stop();
  bool waitForSync(std::chrono::milliseconds timeout);
  bool hasSynced() const { return synced_; }

  // Registers handlers: an onAdd for every object cached now, on the calling thread, then every
  // later event on the informer's thread. Returns the id removeHandlers() takes.
  uint64_t addHandlers(EventHandlers handlers);
  // None of these handlers runs any more, nor is running, once this returns. Never call it from a
  // handler of this informer.
  void removeHandlers(uint64_t id);
  // An index from objects to values (e.g. spec.nodeName), kept up to date with every event. An
  // index of that name already there stays: one name means one function for every consumer.
  void addIndex(const std::string& name, IndexFunc fn);

  SharedObject getShared(const std::string& key) const;
  std::vector<SharedObject> listShared() const;
  std::vector<SharedObject> byIndexShared(const std::string& name, const std::string& value) const;
  size_t size() const;
  std::string lastResourceVersion() const;

 private:
  struct Index {
    IndexFunc fn;
    std::map<std::string, std::set<std::string>> keys;  // value -> keys of the objects
  };
  void run();
  Status relist();
  void apply(const std::string& type, json obj);
  // With mu_ held: `obj` (under `key`) enters or leaves each index.
  void indexLocked(const std::string& key, const json& obj, bool add);
  void dispatchAdd(const json& obj);
  void dispatchUpdate(const json& oldObj, const json& newObj);
  void dispatchDelete(const json& obj);

  RestClient& client_;
  Resource resource_;
  std::string ns_;
  ListParams selectors_;

  // Held while the cache changes and its handlers run, and while handlers are added or removed:
  // handlers see events one at a time and in order, and a removed handler is not running.
  std::mutex dispatchMu_;
  std::map<uint64_t, EventHandlers> handlers_;
  uint64_t nextHandlerId_ = 1;

  mutable std::mutex mu_;  // the cache, the indexes, the resourceVersion
  std::condition_variable syncedCv_;
  std::map<std::string, SharedObject> cache_;
  std::map<std::string, Index> indexes_;
  std::string resourceVersion_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  WatchCanceller canceller_;
  std::thread thread_;
};

// One consumer's view of a SharedIndexInformer: its handlers are registered at start() and
// removed at stop() (or destruction), so a stopped component's handlers never run again while the
// shared cache lives on. addHandlers() and addIndex() come before start() (later ones take effect
// at once); start(), stop() and addHandlers() are called from one thread.
class Informer {
 public:
  // An informer of its own: start() starts its list + watch, stop() ends it.
  Informer(RestClient& client, Resource resource, std::string ns = "", ListParams selectors = {});
  // A handle on a shared informer (SharedInformers): start() starts the shared watch if it is
  // not running yet; stop() only removes this handle's handlers.
  explicit Informer(std::shared_ptr<SharedIndexInformer> shared);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void addHandlers(EventHandlers handlers);
  void addIndex(const std::string& name, IndexFunc fn);

  void start();
  void stop();
  bool waitForSync(std::chrono::milliseconds timeout);
  bool hasSynced() const { return informer_->hasSynced(); }

  std::optional<json> get(const std::string& key) const;
  std::vector<json> list() const;
  std::vector<json> byIndex(const std::string& name, const std::string& value) const;
  // The cached objects themselves (immutable, shared): no copy.
  SharedObject getShared(const std::string& key) const { return informer_->getShared(key); }
  std::vector<SharedObject> listShared() const { return informer_->listShared(); }
  std::vector<SharedObject> byIndexShared(const std::string& name, const std::string& value) const {
    return informer_->byIndexShared(name, value);
  }
  std::string lastResourceVersion() const { return informer_->lastResourceVersion(); }

 private:
  std::shared_ptr<SharedIndexInformer> informer_;
  const bool owned_;                    // this handle starts and stops the watch
  std::vector<EventHandlers> pending_;  // until start()
  std::vector<uint64_t> registered_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace minik8s::client
