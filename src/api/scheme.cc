// The scheme: the built-in resources (registered in api/resources/, names, verbs and
// subresources as Kubernetes 1.32 publishes them in discovery) plus an API server's CRDs.
#include "api/scheme.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "api/resource_type.h"

namespace minik8s::api {

const SubresourceInfo* ResourceInfo::subresource(const std::string& name) const {
  for (const auto& s : subresources) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Scheme::Scheme(std::vector<ResourceInfo> resources) {
  resources_.reserve(resources.size());
  for (auto& r : resources) resources_.push_back(std::make_shared<ResourceInfo>(std::move(r)));
  rebuildGroups();
}

void Scheme::rebuildGroups() {
  // Groups appear in the order of their first resource; versions in the order they are first
  // seen, so callers list the preferred version of a group first.
  groups_.clear();
  for (const auto& r : resources_) {
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const GroupInfo& gi) { return gi.name == r->group; });
    if (g == groups_.end()) {
      groups_.push_back(GroupInfo{r->group, {r->version}});
    } else if (std::find(g->versions.begin(), g->versions.end(), r->version) == g->versions.end()) {
      g->versions.push_back(r->version);
    }
  }
}

std::vector<ResourceInfo> Scheme::resources() const {
  std::shared_lock lock(mu_);
  std::vector<ResourceInfo> out;
  out.reserve(resources_.size());
  for (const auto& r : resources_) out.push_back(*r);
  return out;
}

std::vector<GroupInfo> Scheme::groups() const {
  std::shared_lock lock(mu_);
  return groups_;
}

uint64_t Scheme::generation() const {
  std::shared_lock lock(mu_);
  return generation_;
}

const ResourceInfo* Scheme::byResource(const std::string& group, const std::string& version,
                                       const std::string& plural) const {
  std::shared_lock lock(mu_);
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->plural == plural) return r.get();
  }
  return nullptr;
}

const ResourceInfo* Scheme::byKind(const std::string& group, const std::string& version,
                                   const std::string& kind) const {
  std::shared_lock lock(mu_);
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version && r->kind == kind) return r.get();
  }
  return nullptr;
}

void Scheme::setCustomResources(const std::string& group, const std::string& plural,
                                std::vector<ResourceInfo> resources) {
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<const ResourceInfo>> kept;
  bool changed = false;
  for (auto& r : resources_) {
    if (r->group == group && r->plural == plural && r->custom) {
      retired_.push_back(std::move(r));
      changed = true;
    } else {
      kept.push_back(std::move(r));
    }
  }
  resources_ = std::move(kept);
  for (auto& r : resources) {
    resources_.push_back(std::make_shared<ResourceInfo>(std::move(r)));
    changed = true;
  }
  if (!changed) return;
  ++generation_;
  rebuildGroups();
}

std::vector<const ResourceInfo*> Scheme::groupVersion(const std::string& group,
                                                      const std::string& version) const {
  std::shared_lock lock(mu_);
  std::vector<const ResourceInfo*> out;
  for (const auto& r : resources_) {
    if (r->group == group && r->version == version) out.push_back(r.get());
  }
  std::sort(out.begin(), out.end(),
            [](const ResourceInfo* a, const ResourceInfo* b) { return a->plural < b->plural; });
  return out;
}

namespace {

std::vector<ResourceInfo> builtinResources() {
  std::vector<ResourceInfo> out;
  for (const auto& t : builtinResourceTypes()) out.push_back(t.info);
  return out;
}

}  // namespace

const Scheme& Scheme::builtin() {
  static const Scheme scheme(builtinResources());
  return scheme;
}

std::pair<std::string, std::string> splitApiVersion(const std::string& apiVersion) {
  const size_t slash = apiVersion.find('/');
  if (slash == std::string::npos) return {"", apiVersion};
  return {apiVersion.substr(0, slash), apiVersion.substr(slash + 1)};
}

}  // namespace minik8s::api
