// Scheme: the registry of every API resource minik8s serves.
//
// For each resource it knows the group/version/kind, plural and singular names, scope, verbs,
// short names, categories and subresources: what discovery publishes, what the router resolves a
// URL against, and what storage keys are derived from. Scheme::builtin() holds the Kubernetes
// kinds minik8s implements plus minik8s.io/v1 Dns and never changes. An API server keeps its own
// copy and adds and removes the resources of CustomResourceDefinitions at run time
// (setCustomResources). Thread-safe: a `const ResourceInfo*` handed out stays valid for the life
// of the scheme, even after its resource is replaced or removed (replaced entries are retired,
// not freed; CRD changes are rare and small).
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

namespace minik8s::api {

class CustomResource;  // api/custom_resource.h

struct SubresourceInfo {
  std::string name;  // "status", "scale", "binding", "log", "exec", "eviction", ...
  std::string group, version,
      kind;  // response kind, e.g. autoscaling/v1 Scale; same as parent for status
  std::vector<std::string> verbs;
};

struct ResourceInfo {
  std::string group;     // "" for the core group
  std::string version;   // "v1", "v2"
  std::string kind;      // "Deployment"
  std::string listKind;  // "DeploymentList"
  std::string plural;    // "deployments"
  std::string singular;  // "deployment"
  bool namespaced = true;
  std::vector<std::string> verbs;  // create delete deletecollection get list patch update watch
  std::vector<std::string> shortNames;
  std::vector<std::string> categories;
  std::vector<SubresourceInfo> subresources;
  // The version objects of this resource are stored as (same group and plural), e.g. "v2" for
  // both autoscaling/v1 and autoscaling/v2 HPAs; other versions are converted with
  // convertToVersion() (api/conversion.h). Equal to `version` for single-version kinds.
  std::string storageVersion;
  // Set on the resources of a CustomResourceDefinition: the version's schema, printer columns and
  // scale paths, which replace the built-in defaulting, validation, strict decoding and printing.
  std::shared_ptr<const CustomResource> custom;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "deployments.apps", "pods": how kubectl names the resource in messages.
  std::string qualifiedResource() const { return group.empty() ? plural : plural + "." + group; }
  const SubresourceInfo* subresource(const std::string& name) const;
  bool hasStatus() const { return subresource("status") != nullptr; }
};

struct GroupInfo {
  std::string name;                   // "" for core
  std::vector<std::string> versions;  // preferred first
};

// "apps/v1" -> {"apps", "v1"}; "v1" -> {"", "v1"} (the core group).
std::pair<std::string, std::string> splitApiVersion(const std::string& apiVersion);

class Scheme {
 public:
  explicit Scheme(std::vector<ResourceInfo> resources);
  static const Scheme& builtin();

  // Copies: the set may change while a caller walks it.
  std::vector<ResourceInfo> resources() const;
  // Groups in discovery order (core first), each with its versions, preferred first.
  std::vector<GroupInfo> groups() const;
  const ResourceInfo* byResource(const std::string& group, const std::string& version,
                                 const std::string& plural) const;
  const ResourceInfo* byKind(const std::string& group, const std::string& version,
                             const std::string& kind) const;
  // All resources of one group/version, in a stable order.
  std::vector<const ResourceInfo*> groupVersion(const std::string& group,
                                                const std::string& version) const;

  // Replaces every resource of `group` named `plural` (all versions) by `resources`; an empty
  // vector removes them. Used for CustomResourceDefinitions only.
  void setCustomResources(const std::string& group, const std::string& plural,
                          std::vector<ResourceInfo> resources);
  // Bumped by every setCustomResources() that changed something: callers cache documents
  // derived from the scheme (OpenAPI) per generation.
  uint64_t generation() const;

 private:
  void rebuildGroups();  // under mu_ (exclusive)

  mutable std::shared_mutex mu_;
  std::vector<std::shared_ptr<const ResourceInfo>> resources_;
  std::vector<std::shared_ptr<const ResourceInfo>> retired_;
  std::vector<GroupInfo> groups_;
  uint64_t generation_ = 0;
};

}  // namespace minik8s::api
