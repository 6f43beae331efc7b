#include "client/informer.h"

#include "common/json_compact.h"
#include "common/json_pointer.h"
#include "common/logging.h"

namespace minik8s::client {

IndexFunc namespaceIndex() {
  return [](const json& obj) {
    return std::vector<std::string>{valueAt(obj, "/metadata/namespace", std::string())};
  };
}

std::string objectKey(const json& obj) {
  std::string ns = valueAt(obj, "/metadata/namespace", std::string());
  std::string name = valueAt(obj, "/metadata/name", std::string());
  return ns.empty() ? name : ns + "/" + name;
}

std::pair<std::string, std::string> splitObjectKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// --- SharedIndexInformer ---

SharedIndexInformer::SharedIndexInformer(RestClient& client, Resource resource, std::string ns,
                                         ListParams selectors)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      selectors_(std::move(selectors)) {}

SharedIndexInformer::~SharedIndexInformer() { stop(); }

void SharedIndexInformer::start() {
  std::lock_guard lock(mu_);
  if (started_.exchange(true) || stopping_) return;
  thread_ = std::thread([this] { run(); });
}

void SharedIndexInformer::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  canceller_.cancel();
  syncedCv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool SharedIndexInformer::waitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return syncedCv_.wait_for(lock, timeout, [&] { return synced_.load() || stopping_.load(); }) &&
         synced_;
}

uint64_t SharedIndexInformer::addHandlers(EventHandlers handlers) {
  std::lock_guard dispatch(dispatchMu_);
  // No event is being applied: the snapshot and the handler's place in the list are consistent.
  if (handlers.onAdd) {
    for (const auto& obj : listShared()) handlers.onAdd(*obj);
  }
  const uint64_t id = nextHandlerId_++;
  handlers_.emplace(id, std::move(handlers));
  return id;
}

void SharedIndexInformer::removeHandlers(uint64_t id) {
  std::lock_guard dispatch(dispatchMu_);
  handlers_.erase(id);
}

void SharedIndexInformer::addIndex(const std::string& name, IndexFunc fn) {
  std::lock_guard lock(mu_);
  auto [it, added] = indexes_.try_emplace(name);
  if (!added) return;
  it->second.fn = std::move(fn);
  for (const auto& [key, obj] : cache_) {
    for (auto& value : it->second.fn(*obj)) it->second.keys[std::move(value)].insert(key);
  }
}

void SharedIndexInformer::indexLocked(const std::string& key, const json& obj, bool add) {
  for (auto& [name, index] : indexes_) {
    for (auto& value : index.fn(obj)) {
      if (add) {
        index.keys[std::move(value)].insert(key);
        continue;
      }
      auto it = index.keys.find(value);
      if (it == index.keys.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.keys.erase(it);
    }
  }
}

SharedObject SharedIndexInformer::getShared(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

std::vector<SharedObject> SharedIndexInformer::listShared() const {
  std::lock_guard lock(mu_);
  std::vector<SharedObject> out;
  out.reserve(cache_.size());
  for (const auto& [k, v] : cache_) out.push_back(v);
  return out;
}

std::vector<SharedObject> SharedIndexInformer::byIndexShared(const std::string& name,
                                                             const std::string& value) const {
  std::lock_guard lock(mu_);
  std::vector<SharedObject> out;
  auto index = indexes_.find(name);
  if (index == indexes_.end()) return out;
  auto keys = index->second.keys.find(value);
  if (keys == index->second.keys.end()) return out;
  out.reserve(keys->second.size());
  for (const auto& key : keys->second) {
    if (auto it = cache_.find(key); it != cache_.end()) out.push_back(it->second);
  }
  return out;
}

size_t SharedIndexInformer::size() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

std::string SharedIndexInformer::lastResourceVersion() const {
  std::lock_guard lock(mu_);
  return resourceVersion_;
}

void SharedIndexInformer::dispatchAdd(const json& obj) {
  for (auto& [id, h] : handlers_) {
    if (h.onAdd) h.onAdd(obj);
  }
}

void SharedIndexInformer::dispatchUpdate(const json& oldObj, const json& newObj) {
  for (auto& [id, h] : handlers_) {
    if (h.onUpdate) h.onUpdate(oldObj, newObj);
  }
}

void SharedIndexInformer::dispatchDelete(const json& obj) {
  for (auto& [id, h] : handlers_) {
    if (h.onDelete) h.onDelete(obj);
  }
}

Status SharedIndexInformer::relist() {
  std::map<std::string, SharedObject> fresh;
  std::string rv;
  ListParams p = selectors_;
  const std::string apiVersion =
      resource_.group.empty() ? resource_.version : resource_.group + "/" + resource_.version;
  do {
    auto page = client_.list(resource_, ns_, p);
    if (!page.ok()) return page.status();
    for (auto& item : (*page)["items"]) {
      item["apiVersion"] = apiVersion;
      std::string key = objectKey(item);
      shrinkToFit(item);
      fresh[std::move(key)] = std::make_shared<const json>(std::move(item));
    }
    rv = valueAt(*page, "/metadata/resourceVersion", std::string());
    p.continueToken = valueAt(*page, "/metadata/continue", std::string());
    p.limit = 500;
  } while (!p.continueToken.empty());
  std::lock_guard dispatch(dispatchMu_);
  std::map<std::string, SharedObject> old;
  {
    std::lock_guard lock(mu_);
    old.swap(cache_);
    cache_ = fresh;
    resourceVersion_ = rv;
    for (auto& [name, index] : indexes_) index.keys.clear();
    for (const auto& [key, obj] : cache_) indexLocked(key, *obj, true);
  }
  for (const auto& [key, obj] : fresh) {
    auto it = old.find(key);
    if (it == old.end()) {
      dispatchAdd(*obj);
    } else if (*it->second != *obj) {
      dispatchUpdate(*it->second, *obj);
    }
  }
  for (const auto& [key, obj] : old) {
    if (!fresh.count(key)) dispatchDelete(*obj);
  }
  return Status::Ok();
}

void SharedIndexInformer::apply(const std::string& type, json event) {
  std::lock_guard dispatch(dispatchMu_);
  SharedObject old, obj;
  {
    std::lock_guard lock(mu_);
    std::string rv = valueAt(event, "/metadata/resourceVersion", std::string());
    if (!rv.empty()) resourceVersion_ = rv;
    if (type == "BOOKMARK") return;
    const std::string key = objectKey(event);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      old = it->second;
      indexLocked(key, *old, false);
      if (type == "DELETED") cache_.erase(it);
    }
    if (type != "DELETED") {
      shrinkToFit(event);  // kept until the next version: without the parser's spare room
      obj = std::make_shared<const json>(std::move(event));  // read below only for a DELETED
      cache_[key] = obj;
      indexLocked(key, *obj, true);
    }
  }
  if (type == "DELETED") {
    dispatchDelete(event);  // its last state, as the watch tells it
  } else if (old) {
    dispatchUpdate(*old, *obj);
  } else {
    dispatchAdd(*obj);
  }
}

void SharedIndexInformer::run() {
  bool needList = true;
  auto backoff = std::chrono::milliseconds(100);
  while (!stopping_) {
    if (needList) {
      Status s = relist();
      if (!s.ok()) {
        LOG_DEBUG("informer {}: list failed: {}", resource_.plural, s.toString());
        std::this_thread::sleep_for(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
        continue;
      }
      needList = false;
      backoff = std::chrono::milliseconds(100);
      if (!synced_.exchange(true)) {
        std::lock_guard lock(mu_);
        syncedCv_.notify_all();
      }
    }
    ListParams p = selectors_;
    p.resourceVersion = lastResourceVersion();
    Status s = client_.watch(
        resource_, ns_, p, 300,
        [&](WatchEvent& ev) {
          if (stopping_) return false;
          apply(ev.type, std::move(ev.object));
          return true;
        },
        &canceller_);
    if (stopping_) break;
    if (!s.ok()) {
      // 410: our version is gone; anything else: the server may have restarted. Either way a
      // relist repairs the cache (level-triggered consumers see the differences).
      LOG_DEBUG("informer {}: watch ended: {}", resource_.plural, s.toString());
      if (s.code() != 410) std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
      needList = s.code() == 410;
    }
  }
}

// --- Informer ---

Informer::Informer(RestClient& client, Resource resource, std::string ns, ListParams selectors)
    : informer_(std::make_shared<SharedIndexInformer>(client, std::move(resource), std::move(ns),
                                                      std::move(selectors))),
      owned_(true) {}

Informer::Informer(std::shared_ptr<SharedIndexInformer> shared)
    : informer_(std::move(shared)), owned_(false) {}

Informer::~Informer() { stop(); }

void Informer::addHandlers(EventHandlers handlers) {
  if (started_ && !stopped_) {
    registered_.push_back(informer_->addHandlers(std::move(handlers)));
  } else {
    pending_.push_back(std::move(handlers));
  }
}

void Informer::addIndex(const std::string& name, IndexFunc fn) {
  informer_->addIndex(name, std::move(fn));
}

void Informer::start() {
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& h : pending_) registered_.push_back(informer_->addHandlers(std::move(h)));
  pending_.clear();
  informer_->start();
}

void Informer::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (owned_) informer_->stop();  // no handler runs after the watch thread ended
  for (uint64_t id : registered_) informer_->removeHandlers(id);
  registered_.clear();
}

bool Informer::waitForSync(std::chrono::milliseconds timeout) {
  return informer_->waitForSync(timeout);
}

std::optional<json> Informer::get(const std::string& key) const {
  if (auto obj = informer_->getShared(key)) return *obj;
  return std::nullopt;
}

std::vector<json> Informer::list() const {
  std::vector<json> out;
  for (const auto& obj : informer_->listShared()) out.push_back(*obj);
  return out;
}

std::vector<json> Informer::byIndex(const std::string& name, const std::string& value) const {
  std::vector<json> out;
  for (const auto& obj : informer_->byIndexShared(name, value)) out.push_back(*obj);
  return out;
}

}  // namespace minik8s::client
