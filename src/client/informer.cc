#include "client/informer.h"

#include "common/logging.h"

namespace minik8s::client {

std::string objectKey(const json& obj) {
  std::string ns = obj.value("/metadata/namespace"_json_pointer, std::string());
  std::string name = obj.value("/metadata/name"_json_pointer, std::string());
  return ns.empty() ? name : ns + "/" + name;
}

std::pair<std::string, std::string> splitObjectKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

Informer::Informer(RestClient& client, Resource resource, std::string ns, ListParams selectors)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      selectors_(std::move(selectors)) {}

Informer::~Informer() { stop(); }

void Informer::addHandlers(EventHandlers handlers) { handlers_.push_back(std::move(handlers)); }

void Informer::addIndex(const std::string& name,
                        std::function<std::vector<std::string>(const json&)> fn) {
  indexFns_[name] = std::move(fn);
}

void Informer::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void Informer::stop() {
  stopping_ = true;
  canceller_.cancel();
  syncedCv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Informer::waitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return syncedCv_.wait_for(lock, timeout, [&] { return synced_.load() || stopping_.load(); }) &&
         synced_;
}

std::optional<json> Informer::get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<json> Informer::list() const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  out.reserve(cache_.size());
  for (const auto& [k, v] : cache_) out.push_back(v);
  return out;
}

std::vector<json> Informer::byIndex(const std::string& name, const std::string& value) const {
  auto fn = indexFns_.find(name);
  if (fn == indexFns_.end()) return {};
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (const auto& [k, v] : cache_) {
    for (const auto& iv : fn->second(v)) {
      if (iv == value) {
        out.push_back(v);
        break;
      }
    }
  }
  return out;
}

std::string Informer::lastResourceVersion() const {
  std::lock_guard lock(mu_);
  return resourceVersion_;
}

Status Informer::relist() {
  json items = json::array();
  std::string rv;
  ListParams p = selectors_;
  do {
    auto page = client_.list(resource_, ns_, p);
    if (!page.ok()) return page.status();
    for (auto& item : (*page)["items"]) items.push_back(std::move(item));
    rv = page->value("/metadata/resourceVersion"_json_pointer, std::string());
    p.continueToken = page->value("/metadata/continue"_json_pointer, std::string());
    p.limit = 500;
  } while (!p.continueToken.empty());
  std::map<std::string, json> fresh;
  for (auto& item : items) {
    item["apiVersion"] =
        resource_.group.empty() ? resource_.version : resource_.group + "/" + resource_.version;
    std::string key = objectKey(item);  // before the move: `a = b` evaluates b first
    fresh[key] = std::move(item);
  }
  std::map<std::string, json> old;
  {
    std::lock_guard lock(mu_);
    old.swap(cache_);
    cache_ = fresh;
    resourceVersion_ = rv;
  }
  for (const auto& [key, obj] : fresh) {
    auto it = old.find(key);
    for (auto& h : handlers_) {
      if (it == old.end()) {
        if (h.onAdd) h.onAdd(obj);
      } else if (it->second != obj) {
        if (h.onUpdate) h.onUpdate(it->second, obj);
      }
    }
  }
  for (const auto& [key, obj] : old) {
    if (fresh.count(key)) continue;
    for (auto& h : handlers_) {
      if (h.onDelete) h.onDelete(obj);
    }
  }
  return Status::Ok();
}

void Informer::apply(const std::string& type, const json& obj) {
  const std::string key = objectKey(obj);
  std::optional<json> old;
  {
    std::lock_guard lock(mu_);
    std::string rv = obj.value("/metadata/resourceVersion"_json_pointer, std::string());
    if (!rv.empty()) resourceVersion_ = rv;
    if (type == "BOOKMARK") return;
    auto it = cache_.find(key);
    if (it != cache_.end()) old = it->second;
    if (type == "DELETED") {
      cache_.erase(key);
    } else {
      cache_[key] = obj;
    }
  }
  for (auto& h : handlers_) {
    if (type == "DELETED") {
      if (h.onDelete) h.onDelete(obj);
    } else if (old) {
      if (h.onUpdate) h.onUpdate(*old, obj);
    } else if (h.onAdd) {
      h.onAdd(obj);
    }
  }
}

void Informer::run() {
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
        [&](const WatchEvent& ev) {
          if (stopping_) return false;
          apply(ev.type, ev.object);
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

}  // namespace minik8s::client
