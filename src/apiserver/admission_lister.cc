#include "apiserver/admission_lister.h"

#include <algorithm>

#include "apiserver/watch_cache.h"
#include "common/logging.h"

namespace minik8s::apiserver {

namespace {

// group, plural: what the admission plugins read on every write.
constexpr std::pair<const char*, const char*> kKeptResources[] = {
    {"", "namespaces"},
    {"", "serviceaccounts"},
    {"", "limitranges"},
    {"", "resourcequotas"},
    {"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
    {"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
};

std::string keptName(const std::string& group, const std::string& plural) {
  return group + "/" + plural;
}

bool hasPrefix(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

AdmissionLister::AdmissionLister(Registry& registry) : registry_(registry) {
  for (const auto& [group, plural] : kKeptResources) {
    const auto* info = registry_.scheme().byResource(group, "v1", plural);
    if (info == nullptr) continue;
    auto k = std::make_unique<Kept>();
    k->prefix = Registry::prefix(*info, "");
    kept_.emplace(keptName(group, plural), std::move(k));
  }
}

AdmissionLister::~AdmissionLister() {
  std::lock_guard lock(mu_);
  if (watcher_) watcher_->stop();
}

void AdmissionLister::start(WatchCache& watchCache) {
  WatchCache* none = nullptr;
  if (!watchCache_.compare_exchange_strong(none, &watchCache)) return;
  std::lock_guard lock(mu_);
  if (!watcher_) sync();  // else on the first read
}

AdmissionLister::Kept* AdmissionLister::kept(const api::ResourceInfo& r) {
  auto it = kept_.find(keptName(r.group, r.plural));
  return it == kept_.end() ? nullptr : it->second.get();
}

void AdmissionLister::resourceWritten(const api::ResourceInfo& r) {
  if (Kept* k = kept(r)) k->written = true;
}

Result<AdmissionLister::Object> AdmissionLister::get(const api::ResourceInfo& r,
                                                     const std::string& ns,
                                                     const std::string& name) {
  if (Kept* k = kept(r)) {
    std::lock_guard lock(mu_);
    if (ready(*k)) {
      auto it = objects_.find(Registry::key(r, ns, name));
      if (it != objects_.end()) return it->second.object;
    }
  }
  // Not in memory: created a moment ago, not kept, or absent.
  auto got = registry_.get(r, ns, name);
  if (!got.ok()) return got.status();
  return Object(std::make_shared<const json>(std::move(got.value())));
}

Result<std::vector<AdmissionLister::Object>> AdmissionLister::list(const api::ResourceInfo& r,
                                                                   const std::string& ns) {
  std::vector<Object> out;
  if (Kept* k = kept(r)) {
    std::lock_guard lock(mu_);
    if (ready(*k)) {
      const std::string prefix = Registry::prefix(r, ns);
      for (auto it = objects_.lower_bound(prefix);
           it != objects_.end() && hasPrefix(it->first, prefix); ++it) {
        out.push_back(it->second.object);
      }
      return out;
    }
  }
  auto page = registry_.list(r, ns, ListOptions{});
  if (!page.ok()) return page.status();
  out.reserve(page->items.size());
  for (auto& item : page->items) out.push_back(std::make_shared<const json>(std::move(item)));
  return out;
}

void AdmissionLister::observe(const api::ResourceInfo& r, const json& stored) {
  if (kept(r) == nullptr) return;
  const std::string rv = stored.value("/metadata/resourceVersion"_json_pointer, std::string());
  const int64_t revision = std::strtoll(rv.c_str(), nullptr, 10);
  const std::string key =
      Registry::key(r, stored.value("/metadata/namespace"_json_pointer, std::string()),
                    stored.value("/metadata/name"_json_pointer, std::string()));
  std::lock_guard lock(mu_);
  // Once the watch has passed `revision` memory is at least as new (and an object deleted since
  // must not come back).
  if (!watcher_ || revision <= seen_) return;
  apply(key, revision, std::make_shared<const json>(stored));
}

bool AdmissionLister::ready(Kept& k) {
  WatchCache* watchCache = watchCache_.load();
  if (watchCache == nullptr) return false;
  if (k.written.exchange(false)) {
    // This server's write is at or below the store's revision now.
    auto rev = registry_.store().currentRevision();
    if (!rev.ok()) {
      k.written = true;
      return false;
    }
    k.fence = std::max(k.fence, *rev);
  }
  if (!watcher_ && !sync()) return false;
  if (!drain()) return false;
  if (k.fence > 0) {
    if (seen_ < k.fence && k.syncedAt < k.fence) return false;
    k.fence = 0;
  }
  return true;
}

bool AdmissionLister::sync() {
  WatchCache* watchCache = watchCache_.load();
  auto& store = registry_.store();
  auto rev = store.currentRevision();
  if (!rev.ok()) return false;
  // Watch first, then list: an event after `rev` is either in a list or in the watcher.
  auto watcher = watchCache->watch("/registry/", *rev);
  if (!watcher.ok()) {
    LOG_WARN("admission lister: cannot watch: {}", watcher.status().toString());
    return false;
  }
  objects_.clear();
  for (auto& [name, k] : kept_) {
    auto listed = store.list(k->prefix);
    if (!listed.ok()) {
      LOG_WARN("admission lister: cannot list {}: {}", name, listed.status().toString());
      (*watcher)->stop();
      objects_.clear();
      return false;
    }
    for (const auto& kv : listed->items) {
      auto obj = decodeStored(kv);
      if (obj.ok()) {
        objects_[kv.key] = {kv.modRevision, std::make_shared<const json>(std::move(obj.value()))};
      }
    }
    k->syncedAt = listed->revision;
  }
  watcher_ = std::move(watcher.value());
  seen_ = *rev;
  return true;
}

bool AdmissionLister::drain() {
  std::vector<CachedEvent> events;
  Status s = watcher_->next(events, std::chrono::milliseconds(0));
  for (const auto& ev : events) {
    seen_ = std::max(seen_, ev.revision);
    apply(ev.key, ev.revision, ev.type == CachedEvent::Type::kDeleted ? nullptr : ev.object);
  }
  if (s.ok()) return true;
  watcher_->stop();
  watcher_.reset();
  objects_.clear();
  if (s.code() == 503) {  // the server is shutting down: read the registry from now on
    watchCache_ = nullptr;
    return false;
  }
  LOG_INFO("admission lister: watch ended ({}): listing again", s.message());
  return sync();
}

void AdmissionLister::apply(const std::string& key, int64_t revision, Object object) {
  const Kept* k = nullptr;
  for (const auto& [name, candidate] : kept_) {
    if (hasPrefix(key, candidate->prefix)) k = candidate.get();
  }
  if (k == nullptr || revision <= k->syncedAt) return;  // not kept, or already in the list
  auto it = objects_.find(key);
  if (it != objects_.end() && it->second.revision >= revision) return;  // older than memory
  if (object) {
    objects_[key] = {revision, std::move(object)};
  } else if (it != objects_.end()) {
    objects_.erase(it);
  }
}

}  // namespace minik8s::apiserver
