#include "apiserver/custom_resources.h"

#include <set>

#include "api/custom_resource.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::apiserver {
namespace {

const api::ResourceInfo& crdResource(const api::Scheme& scheme) {
  static const api::ResourceInfo kMissing;
  const auto* r = scheme.byResource("apiextensions.k8s.io", "v1", "customresourcedefinitions");
  return r ? *r : kMissing;
}

std::string str(const json& obj, const char* pointer) {
  return obj.value(json::json_pointer(pointer), std::string());
}

// Sets condition `type` in status.conditions; the transition time moves only when the status
// changes.
void setCondition(json& status, const std::string& type, const std::string& value,
                  const std::string& reason, const std::string& message) {
  json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (auto& c : conditions) {
    if (c.value("type", "") != type) continue;
    if (c.value("status", "") != value) c["lastTransitionTime"] = formatRfc3339(Clock::now());
    c["status"] = value;
    c["reason"] = reason;
    c["message"] = message;
    return;
  }
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"lastTransitionTime", formatRfc3339(Clock::now())},
                        {"reason", reason},
                        {"message", message}});
}

// The resource objects of `crd` are stored as, whether or not that version is served.
Result<api::ResourceInfo> storageResourceOf(json crd) {
  std::string storage;
  for (auto& v : crd["spec"]["versions"]) {
    if (v.value("storage", false)) storage = v.value("name", "");
    v["served"] = true;
  }
  auto resources = api::resourcesOfCrd(crd);
  if (!resources.ok()) return resources.status();
  for (auto& r : *resources) {
    if (r.version == storage) return std::move(r);
  }
  return Status::Internal("the CustomResourceDefinition has no storage version");
}

}  // namespace

CustomResourceManager::CustomResourceManager(Registry& registry, api::Scheme& scheme,
                                             WatchCache& watchCache)
    : registry_(registry), scheme_(scheme), watchCache_(watchCache) {}

CustomResourceManager::~CustomResourceManager() { stop(); }

bool CustomResourceManager::isCrdResource(const api::ResourceInfo& r) {
  return r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions";
}

Status CustomResourceManager::start() {
  reconcile();
  thread_ = std::thread([this] { run(); });
  return Status::Ok();
}

void CustomResourceManager::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CustomResourceManager::run() {
  const std::string prefix = Registry::prefix(crdResource(scheme_), "");
  auto lastFull = std::chrono::steady_clock::now();
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    auto watcher = watchCache_.watch(prefix, watchCache_.latestRevision());
    if (!watcher.ok()) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
      continue;
    }
    // Changes made before the watch started are picked up by this reconcile.
    reconcile();
    std::vector<CachedEvent> events;
    while (true) {
      events.clear();
      Status s = (*watcher)->next(events, std::chrono::milliseconds(500));
      {
        std::lock_guard lock(mu_);
        if (stopping_) break;
      }
      bool pending;
      {
        std::lock_guard lock(reconcileMu_);
        pending = terminating_;
      }
      const auto now = std::chrono::steady_clock::now();
      if (!events.empty() || pending || now - lastFull > std::chrono::seconds(30)) {
        reconcile();
        lastFull = now;
      }
      if (!s.ok()) break;  // re-watch (expired or cache restarted)
    }
    (*watcher)->stop();
  }
}

void CustomResourceManager::reconcile() {
  std::lock_guard lock(reconcileMu_);
  terminating_ = reconcileLocked();
}

std::string CustomResourceManager::nameConflict(const json& crd) const {
  const std::string group = str(crd, "/spec/group");
  const std::string plural = str(crd, "/spec/names/plural");
  const std::string kind = str(crd, "/spec/names/kind");
  for (const auto& r : scheme_.resources()) {
    if (r.group != group) continue;
    const bool ours = r.custom && r.plural == plural;
    if (ours) continue;
    if (r.plural == plural) return "\"" + plural + "\" is already in use";
    if (r.kind == kind) return "\"" + kind + "\" is already in use";
  }
  return "";
}

void CustomResourceManager::writeStatus(const api::ResourceInfo& crdInfo, const json& crd,
                                        json status) {
  if (crd.value("status", json::object()) == status) return;
  const std::string name = str(crd, "/metadata/name");
  auto updated = registry_.guaranteedUpdate(
      crdInfo, "", name,
      [&](json current) -> Result<json> {
        current["status"] = status;
        return current;
      },
      "status");
  if (!updated.ok() && updated.status().code() != 404) {
    LOG_WARN("status of CustomResourceDefinition {}: {}", name, updated.status().toString());
  }
}

bool CustomResourceManager::cleanUp(const json& crd, const api::ResourceInfo& crdInfo) {
  const std::string name = str(crd, "/metadata/name");
  auto storage = storageResourceOf(crd);
  size_t remaining = 0;
  if (storage.ok()) {
    auto page = registry_.list(*storage, "", {});
    if (!page.ok()) {
      LOG_WARN("listing objects of CustomResourceDefinition {}: {}", name,
               page.status().toString());
      return true;
    }
    for (const auto& obj : page->items) {
      if (obj["metadata"].contains("deletionTimestamp")) {
        ++remaining;
        continue;
      }
      auto deleted = registry_.remove(*storage, str(obj, "/metadata/namespace"),
                                      str(obj, "/metadata/name"), {});
      if (deleted.ok() && !deleted->deleted) ++remaining;
      if (!deleted.ok() && deleted.status().code() != 404) ++remaining;
    }
  }
  json status = crd.value("status", json::object());
  if (remaining > 0) {
    setCondition(status, "Terminating", "True", "InstanceDeletionInProgress",
                 "CustomResource deletion is in progress");
    writeStatus(crdInfo, crd, std::move(status));
    return true;
  }
  auto released = registry_.guaranteedUpdate(crdInfo, "", name, [](json current) -> Result<json> {
    json& finalizers = current["metadata"]["finalizers"];
    json kept = json::array();
    if (finalizers.is_array()) {
      for (const auto& f : finalizers) {
        if (f != api::kCrdCleanupFinalizer) kept.push_back(f);
      }
    }
    if (kept.empty()) {
      current["metadata"].erase("finalizers");
    } else {
      finalizers = kept;
    }
    return current;
  });
  if (!released.ok() && released.status().code() != 404) {
    LOG_WARN("releasing CustomResourceDefinition {}: {}", name, released.status().toString());
    return true;
  }
  return false;
}

bool CustomResourceManager::reconcileLocked() {
  const api::ResourceInfo& crdInfo = crdResource(scheme_);
  if (crdInfo.plural.empty()) return false;
  auto page = registry_.list(crdInfo, "", {});
  if (!page.ok()) {
    LOG_WARN("listing CustomResourceDefinitions: {}", page.status().toString());
    return true;  // try again soon
  }
  bool pending = false;
  std::set<std::string> present;
  for (const auto& crd : page->items) {
    const std::string name = str(crd, "/metadata/name");
    const std::string group = str(crd, "/spec/group");
    const std::string plural = str(crd, "/spec/names/plural");
    if (crd["metadata"].contains("deletionTimestamp")) {
      const bool finalizing = [&] {
        for (const auto& f : crd["metadata"].value("finalizers", json::array())) {
          if (f == api::kCrdCleanupFinalizer) return true;
        }
        return false;
      }();
      if (finalizing && cleanUp(crd, crdInfo)) {
        present.insert(name);  // keep serving until its objects are gone
        pending = true;
      }
      continue;
    }
    present.insert(name);
    json status = crd.value("status", json::object());
    if (std::string conflict = nameConflict(crd); !conflict.empty()) {
      setCondition(status, "NamesAccepted", "False", "NameConflict", conflict);
      setCondition(status, "Established", "False", "NotAccepted", "not all names are accepted");
      writeStatus(crdInfo, crd, std::move(status));
      if (installed_.count(name)) {
        scheme_.setCustomResources(group, plural, {});
        installed_.erase(name);
      }
      continue;
    }
    const std::string version = str(crd, "/metadata/uid") + "/" +
                                std::to_string(crd["metadata"].value("generation", int64_t{0}));
    auto it = installed_.find(name);
    if (it == installed_.end() || it->second.version != version) {
      auto resources = api::resourcesOfCrd(crd);
      if (!resources.ok()) {
        LOG_WARN("CustomResourceDefinition {}: {}", name, resources.status().toString());
        continue;
      }
      scheme_.setCustomResources(group, plural, std::move(resources.value()));
      installed_[name] = {group, plural, version};
      LOG_INFO("serving CustomResourceDefinition {}", name);
    }
    status["acceptedNames"] = crd["spec"]["names"];
    setCondition(status, "NamesAccepted", "True", "NoConflicts", "no conflicts found");
    setCondition(status, "Established", "True", "InitialNamesAccepted",
                 "the initial names have been accepted");
    json stored = status.value("storedVersions", json::array());
    for (const auto& v : crd["spec"]["versions"]) {
      if (!v.value("storage", false)) continue;
      if (std::find(stored.begin(), stored.end(), v["name"]) == stored.end()) {
        stored.push_back(v["name"]);
      }
    }
    status["storedVersions"] = stored;
    writeStatus(crdInfo, crd, std::move(status));
  }
  for (auto it = installed_.begin(); it != installed_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    scheme_.setCustomResources(it->second.group, it->second.plural, {});
    LOG_INFO("no longer serving CustomResourceDefinition {}", it->first);
    it = installed_.erase(it);
  }
  return pending;
}

}  // namespace minik8s::apiserver
