#include "apiserver/admission_lister.h"

#include <algorithm>

#include "apiserver/watch_cache.h"
#include "common/json_pointer.h"
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
  for (auto& [name, k] : kept_) {
    std::lock_guard lock(k->mu);
    if (k->watcher) k->watcher->stop();
  }
}

void AdmissionLister::start(WatchCache& watchCache) {
  WatchCache* none = nullptr;
  if (!watchCache_.compare_exchange_strong(none, &watchCache)) return;
  for (auto& [name, k] : kept_) {
    std::lock_guard lock(k->mu);
    if (!k->watcher) sync(*k);  // else on its first read
  }
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
    std::lock_guard lock(k->mu);
    if (ready(*k)) {
      auto it = k->objects.find(Registry::key(r, ns, name));
      if (it != k->objects.end()) return it->second.object;
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
    std::lock_guard lock(k->mu);
    if (ready(*k)) {
      const std::string prefix = Registry::prefix(r, ns);
      for (auto it = k->objects.lower_bound(prefix);
           it != k->objects.end() && hasPrefix(it->first, prefix); ++it) {
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
  Kept* k = kept(r);
  if (k == nullptr) return;
  const std::string rv = valueAt(stored, "/metadata/resourceVersion", std::string());
  const int64_t revision = std::strtoll(rv.c_str(), nullptr, 10);
  const std::string key = Registry::key(r, valueAt(stored, "/metadata/namespace", std::string()),
                                        valueAt(stored, "/metadata/name", std::string()));
  std::lock_guard lock(k->mu);
  // Once memory has passed `revision` it is at least as new (and an object deleted since must
  // not come back).
  if (!k->watcher || revision <= k->seen) return;
  apply(*k, key, revision, std::make_shared<const json>(stored));
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
  if (!k.watcher && !sync(k)) return false;
  if (!drain(k)) return false;
  if (k.fence > 0 && k.syncedAt < k.fence) {
    // Every event up to the watch cache's latest revision is in the watcher's queue by now.
    if (watchCache->latestRevision() < k.fence || !drain(k)) return false;
  }
  k.fence = 0;
  return true;
}

bool AdmissionLister::sync(Kept& k) {
  WatchCache* watchCache = watchCache_.load();
  if (watchCache == nullptr) return false;
  auto& store = registry_.store();
  auto rev = store.currentRevision();
  if (!rev.ok()) return false;
  // Watch first, then list: an event after `rev` is either in the list or in the watcher.
  auto watcher = watchCache->watch(k.prefix, *rev);
  if (!watcher.ok()) {
    LOG_WARN("admission lister: cannot watch {}: {}", k.prefix, watcher.status().toString());
    return false;
  }
  auto listed = store.list(k.prefix);
  if (!listed.ok()) {
    LOG_WARN("admission lister: cannot list {}: {}", k.prefix, listed.status().toString());
    (*watcher)->stop();
    return false;
  }
  k.objects.clear();
  for (const auto& kv : listed->items) {
    auto obj = decodeStored(kv);
    if (obj.ok()) {
      k.objects[kv.key] = {kv.modRevision, std::make_shared<const json>(std::move(obj.value()))};
    }
  }
  k.syncedAt = k.seen = listed->revision;
  k.watcher = std::move(watcher.value());
  return true;
}

bool AdmissionLister::drain(Kept& k) {
  std::vector<CachedEvent> events;
  Status s = k.watcher->next(events, std::chrono::milliseconds(0));
  for (const auto& ev : events) {
    apply(k, ev.key, ev.revision,
          ev.type == CachedEvent::Type::kDeleted ? nullptr
                                                 : std::make_shared<const json>(eventObject(ev)));
  }
  if (s.ok()) return true;
  k.watcher->stop();
  k.watcher.reset();
  k.objects.clear();
  if (s.code() == 503) {  // the server is shutting down: read the registry from now on
    watchCache_ = nullptr;
    return false;
  }
  LOG_INFO("admission lister: watch of {} ended ({}): listing again", k.prefix, s.message());
  return sync(k);
}

void AdmissionLister::apply(Kept& k, const std::string& key, int64_t revision, Object object) {
  if (revision <= k.syncedAt) return;  // already in the list
  k.seen = std::max(k.seen, revision);
  auto it = k.objects.find(key);
  if (it != k.objects.end() && it->second.revision >= revision) return;  // older than memory
  if (object) {
    k.objects[key] = {revision, std::move(object)};
  } else if (it != k.objects.end()) {
    k.objects.erase(it);
  }
}

}  // namespace minik8s::apiserver
