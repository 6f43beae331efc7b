#include "controllers/namespace/namespace_controller.h"

#include <algorithm>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"

namespace minik8s::controllers {

namespace {

bool hasVerb(const json& resource, const char* verb) {
  const json verbs = resource.value("verbs", json::array());
  return verbs.is_array() && std::find(verbs.begin(), verbs.end(), json(verb)) != verbs.end();
}

bool hasFinalizer(const json& ns) {
  const json finalizers = valueAt(ns, "/spec/finalizers", json::array());
  return finalizers.is_array() && std::find(finalizers.begin(), finalizers.end(),
                                            json(kNamespaceFinalizer)) != finalizers.end();
}

}  // namespace

std::vector<client::Resource> deletableNamespacedResources(const json& resourceList,
                                                           const std::string& group,
                                                           const std::string& version) {
  std::vector<client::Resource> out;
  const json resources = resourceList.value("resources", json::array());
  if (!resources.is_array()) return out;
  for (const auto& r : resources) {
    if (!r.is_object() || !r.value("namespaced", false)) continue;
    const std::string name = r.value("name", "");
    if (name.empty() || name.find('/') != std::string::npos) continue;  // a subresource
    if (!hasVerb(r, "list") || !hasVerb(r, "delete")) continue;
    out.push_back(client::Resource{group, version, name, true});
  }
  return out;
}

NamespaceController::NamespaceController(client::RestClient& rest, client::Informer& namespaces,
                                         NamespaceControllerOptions options)
    : rest_(rest),
      namespaces_(namespaces),
      options_(options),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "namespace") {
  auto enqueue = [this](const json& ns) {
    if (namespaceTerminating(ns)) queue_.add(api::nameOf(ns));
  };
  namespaces_.addHandlers(
      {enqueue, [enqueue](const json&, const json& ns) { enqueue(ns); }, nullptr});
}

NamespaceController::~NamespaceController() { stop(); }

void NamespaceController::start(int workers) { workers_.start(workers); }
void NamespaceController::stop() { workers_.stop(); }

Result<std::vector<client::Resource>> NamespaceController::discoverResources() {
  std::vector<client::Resource> out;
  auto core = rest_.request("GET", "/api/v1");
  if (!core.ok()) return core.status();
  out = deletableNamespacedResources(*core, "", "v1");
  auto groups = rest_.request("GET", "/apis");
  if (!groups.ok()) return groups.status();
  for (const auto& g : groups->value("groups", json::array())) {
    const std::string group = g.value("name", "");
    const std::string version = valueAt(g, "/preferredVersion/version", std::string());
    if (group.empty() || version.empty()) continue;
    auto list = rest_.request("GET", "/apis/" + group + "/" + version);
    if (!list.ok()) {
      if (list.status().code() == 404) continue;  // a CRD's group removed meanwhile
      return list.status();
    }
    for (auto& r : deletableNamespacedResources(*list, group, version)) out.push_back(r);
  }
  return out;
}

Result<size_t> NamespaceController::deleteContent(const client::Resource& r,
                                                  const std::string& ns) {
  auto list = rest_.list(r, ns);
  if (!list.ok()) {
    // A resource gone since discovery, or one that cannot be listed here: nothing to delete.
    if (list.status().code() == 404 || list.status().code() == 405) return size_t{0};
    return list.status();
  }
  const json items = list->value("items", json::array());
  for (const auto& obj : items) {
    json options = json::object();
    if (r.group.empty() && r.plural == "pods") {
      const std::string node = valueAt(obj, "/spec/nodeName", std::string());
      if (!node.empty()) {
        auto n = rest_.get(client::resources::kNodes, "", node);
        if (!n.ok() && n.status().code() == 404) options["gracePeriodSeconds"] = 0;
      }
    }
    auto deleted = rest_.remove(r, ns, api::nameOf(obj), options);
    if (!deleted.ok() && deleted.status().code() != 404 && deleted.status().code() != 409) {
      return deleted.status();
    }
  }
  return items.size();
}

Status NamespaceController::sync(const std::string& name) {
  auto cached = namespaces_.get(name);
  if (!cached || !namespaceTerminating(*cached)) return Status::Ok();
  if (!hasFinalizer(*cached)) return Status::Ok();  // ours is done; others' finalizers remain
  auto resources = discoverResources();
  if (!resources.ok()) return resources.status();
  size_t remaining = 0;
  for (const auto& r : *resources) {
    auto left = deleteContent(r, name);
    if (!left.ok()) return left.status();
    remaining += *left;
  }
  if (remaining > 0) {
    queue_.addAfter(name, options_.recheck);
    return Status::Ok();
  }
  // Empty: remove our finalizer through /finalize, on the live object (its resourceVersion).
  auto live = rest_.get(client::resources::kNamespaces, "", name);
  if (!live.ok()) return live.status().code() == 404 ? Status::Ok() : live.status();
  json ns = *live;
  json kept = json::array();
  for (const auto& f : valueAt(ns, "/spec/finalizers", json::array())) {
    if (f != kNamespaceFinalizer) kept.push_back(f);
  }
  ns["spec"]["finalizers"] = kept;
  auto done = rest_.update(client::resources::kNamespaces, ns, "finalize");
  if (!done.ok() && done.status().code() != 404) return done.status();
  LOG_INFO("namespace: {} is empty, finalized", name);
  return Status::Ok();
}

}  // namespace minik8s::controllers
