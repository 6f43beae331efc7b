#include "controllers/resourcequota/resource_quota_controller.h"

#include <map>
#include <set>

#include "api/object_meta.h"
#include "api/resource_quota.h"
#include "api/scheme.h"
#include "common/logging.h"

namespace minik8s::controllers {

const client::Resource kResourceQuotas{"", "v1", "resourcequotas", true};

namespace {

using api::member;
using api::namespaceOf;

// Canonical form of a quantity map, for comparing what is stored with what is computed.
json canonical(const json& list) { return api::toJson(api::parseResourceList(list)); }

// The quota's status lags its spec, or misses a used entry: it needs a sync.
bool statusStale(const json& quota) {
  const json& hard = member(member(quota, "spec"), "hard");
  const json& status = member(quota, "status");
  if (canonical(hard) != canonical(member(status, "hard"))) return true;
  const json& used = member(status, "used");
  if (hard.is_object()) {
    for (const auto& [k, v] : hard.items()) {
      if (!used.is_object() || !used.contains(k)) return true;
    }
  }
  return false;
}

// A pod that stops counting (terminal, or past its deletion deadline) frees quota.
bool podStoppedCounting(const json& oldPod, const json& newPod, WallClock::time_point now) {
  return api::podCountsForQuota(oldPod, now) && !api::podCountsForQuota(newPod, now);
}

}  // namespace

ResourceQuotaController::ResourceQuotaController(client::RestClient& rest, client::Informer& quotas,
                                                 std::vector<QuotaMonitor> monitors,
                                                 ResourceQuotaControllerOptions options)
    : rest_(rest),
      quotas_(quotas),
      monitors_(std::move(monitors)),
      options_(std::move(options)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "resourcequota") {
  quotas_.addHandlers({[this](const json& q) { queue_.add(client::objectKey(q)); },
                       [this](const json&, const json& q) {
                         if (statusStale(q)) queue_.add(client::objectKey(q));
                       },
                       nullptr});
  for (auto& m : monitors_) {
    if (!m.informer) continue;
    const bool pods = m.resource.group.empty() && m.resource.plural == "pods";
    client::EventHandlers h;
    h.onDelete = [this](const json& obj) { enqueueNamespace(namespaceOf(obj)); };
    if (pods) {
      h.onUpdate = [this](const json& oldPod, const json& newPod) {
        if (podStoppedCounting(oldPod, newPod, options_.now())) {
          enqueueNamespace(namespaceOf(newPod));
        }
      };
    } else if (m.resource.group.empty() &&
               (m.resource.plural == "services" || m.resource.plural == "persistentvolumeclaims")) {
      // A service's type or a claim's request can change either way.
      h.onUpdate = [this](const json&, const json& obj) { enqueueNamespace(namespaceOf(obj)); };
    }
    m.informer->addHandlers(std::move(h));
  }
}

ResourceQuotaController::~ResourceQuotaController() { stop(); }

void ResourceQuotaController::start() { workers_.start(options_.workers); }
void ResourceQuotaController::stop() { workers_.stop(); }

void ResourceQuotaController::enqueueNamespace(const std::string& ns) {
  for (const auto& q : quotas_.list()) {
    if (namespaceOf(q) == ns) queue_.add(client::objectKey(q));
  }
}

Result<std::vector<json>> ResourceQuotaController::objectsOf(const std::string& group,
                                                             const std::string& resource,
                                                             const std::string& ns) {
  std::vector<json> out;
  for (const auto& m : monitors_) {
    if (m.informer && m.resource.group == group && m.resource.plural == resource) {
      for (auto& obj : m.informer->list()) {
        if (namespaceOf(obj) == ns) out.push_back(std::move(obj));
      }
      return out;
    }
  }
  // Not monitored: list it, at the group's preferred version.
  const auto& scheme = api::Scheme::builtin();
  for (const auto& g : scheme.groups()) {
    if (g.name != group) continue;
    for (const auto& v : g.versions) {
      const auto* info = scheme.byResource(group, v, resource);
      if (!info || !info->namespaced) continue;
      auto list = rest_.list(client::Resource{group, v, resource, true}, ns);
      if (!list.ok()) return list.status();
      for (auto& item : member(*list, "items")) out.push_back(std::move(item));
      return out;
    }
  }
  // A custom resource: its group's preferred version, from discovery.
  if (group.empty()) return out;
  auto discovered = rest_.request("GET", "/apis/" + group);
  if (!discovered.ok()) {
    if (discovered.status().code() == 404) return out;  // no such group: nothing to count
    return discovered.status();
  }
  const json& preferred = member(member(*discovered, "preferredVersion"), "version");
  if (!preferred.is_string()) return out;
  auto list = rest_.list(client::Resource{group, preferred.get<std::string>(), resource, true}, ns);
  if (!list.ok()) {
    if (list.status().code() == 404) return out;  // not a resource of the group (yet)
    return list.status();
  }
  for (auto& item : member(*list, "items")) out.push_back(std::move(item));
  return out;
}

Status ResourceQuotaController::sync(const std::string& key) {
  auto quota = quotas_.get(key);
  if (!quota) return Status::Ok();
  const std::string ns = namespaceOf(*quota);
  const api::ResourceList hard = api::parseResourceList(member(member(*quota, "spec"), "hard"));
  const std::vector<std::string> names = api::listNames(hard);

  // Every (group, resource) some hard name charges.
  std::set<std::pair<std::string, std::string>> counted;
  for (const auto& name : names) {
    if (auto [group, resource] = api::countedResource(name); !resource.empty()) {
      counted.emplace(group, resource);
    }
    for (const char* core : {"pods", "services", "persistentvolumeclaims", "configmaps", "secrets",
                             "replicationcontrollers", "resourcequotas"}) {
      if (api::quotaTracks("", core, name)) counted.emplace("", core);
    }
  }
  api::ResourceList used;
  for (const auto& name : names) used[name] = api::Quantity();
  const auto now = options_.now();
  for (const auto& [group, resource] : counted) {
    auto objects = objectsOf(group, resource, ns);
    if (!objects.ok()) return objects.status();
    for (const auto& obj : *objects) {
      if (!api::quotaScopesMatch(*quota, group, resource, obj)) continue;
      used = api::addLists(used, api::maskList(api::objectUsage(group, resource, obj, now), names));
    }
  }

  const json& status = member(*quota, "status");
  const json newHard = api::toJson(hard);
  const json newUsed = api::toJson(used);
  if (options_.resyncPeriod.count() > 0) queue_.addAfter(key, options_.resyncPeriod);
  if (canonical(member(status, "hard")) == newHard &&
      canonical(member(status, "used")) == newUsed) {
    return Status::Ok();
  }
  json updated = *quota;
  updated["status"] = {{"hard", newHard}, {"used", newUsed}};
  auto written = rest_.update(kResourceQuotas, updated, "status");
  if (!written.ok()) {
    if (written.status().code() == 404) return Status::Ok();  // deleted meanwhile
    return written.status();  // 409: admission charged it meanwhile; retried with back-off
  }
  LOG_DEBUG("resourcequota: {} used {}", key, newUsed.dump());
  return Status::Ok();
}

}  // namespace minik8s::controllers
