// Informer: list + watch of one resource into a local cache, with event handlers, as client-go's
// shared informer does.
//
// start() lists, fills the cache, calls onAdd for each object, then watches from the list's
// resourceVersion, resuming from the last seen version when a watch ends and re-listing (with
// synthetic add/update/delete callbacks for what changed) when the server answers 410 Expired or
// the connection fails. Handlers run on the informer's own thread, one event at a time; they
// should only enqueue keys. Cache reads (get/list/byIndex) are thread-safe and return copies.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <utility>

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

class Informer {
 public:
  Informer(RestClient& client, Resource resource, std::string ns = "", ListParams selectors = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void addHandlers(EventHandlers handlers);  // before start()
  // An index from objects to values (e.g. spec.nodeName); before start().
  void addIndex(const std::string& name, std::function<std::vector<std::string>(const json&)> fn);

  void start();
  void stop();
  bool waitForSync(std::chrono::milliseconds timeout);
  bool hasSynced() const { return synced_; }

  std::optional<json> get(const std::string& key) const;
  std::vector<json> list() const;
  std::vector<json> byIndex(const std::string& name, const std::string& value) const;
  std::string lastResourceVersion() const;

 private:
  void run();
  Status relist();
  void apply(const std::string& type, const json& obj);

  RestClient& client_;
  Resource resource_;
  std::string ns_;
  ListParams selectors_;
  std::vector<EventHandlers> handlers_;
  std::map<std::string, std::function<std::vector<std::string>(const json&)>> indexFns_;

  mutable std::mutex mu_;
  std::condition_variable syncedCv_;
  std::map<std::string, json> cache_;
  std::string resourceVersion_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> stopping_{false};
  WatchCanceller canceller_;
  std::thread thread_;
};

}  // namespace minik8s::client
