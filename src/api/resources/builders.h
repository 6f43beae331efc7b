// Internal to src/api/resources: the pieces every group's registration file builds its entries
// from (resource names and verbs, the status and scale subresources, Table columns and ages).
#pragma once

#include <string>
#include <vector>

#include "api/printers/print_format.h"
#include "api/resource_type.h"

namespace minik8s::api::resources {

using printers::array;
using printers::boolean;
using printers::containerImages;
using printers::containerNames;
using printers::integer;
using printers::labelSelectorString;
using printers::labelsString;
using printers::object;
using printers::parseTime;
using printers::since;
using printers::str;
using printers::TimePoint;

inline const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                                   "list",   "patch",  "update",           "watch"};
inline const std::vector<std::string> kStatusVerbs = {"get", "patch", "update"};

// A namespaced resource of `group/version` with every verb, stored in its own version; callers
// adjust the rest.
inline ResourceInfo resource(std::string group, std::string version, std::string kind,
                             std::string plural, std::string singular) {
  ResourceInfo r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.listKind = kind + "List";
  r.kind = std::move(kind);
  r.plural = std::move(plural);
  r.singular = std::move(singular);
  r.verbs = kAllVerbs;
  r.storageVersion = r.version;
  return r;
}

inline SubresourceInfo statusOf(const ResourceInfo& r) {
  return SubresourceInfo{"status", r.group, r.version, r.kind, kStatusVerbs};
}

inline SubresourceInfo scaleSubresource() {
  return SubresourceInfo{"scale", "autoscaling", "v1", "Scale", kStatusVerbs};
}

// ---- Table columns and cells

inline constexpr char kNameDoc[] = "Name must be unique within a namespace.";
inline constexpr char kAgeDoc[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

inline TableColumn nameColumn() { return {"Name", "string", "name", kNameDoc, 0}; }
inline TableColumn ageColumn() { return {"Age", "string", "", kAgeDoc, 0}; }
inline TableColumn col(std::string name, std::string description, std::string type = "string",
                       int priority = 0) {
  return {std::move(name), std::move(type), "", std::move(description), priority};
}
// A priority-1 column: only with `kubectl get -o wide`.
inline TableColumn wide(std::string name, std::string description) {
  return col(std::move(name), std::move(description), "string", 1);
}
inline TableColumn containersColumn() {
  return wide("Containers", "Names of each container in the template.");
}
inline TableColumn imagesColumn() {
  return wide("Images", "Images referenced by each container in the template.");
}

inline std::string age(const json& meta, TimePoint now) {
  return printers::since(meta.value("creationTimestamp", json()), now);
}

inline std::string orNone(std::string s) { return s.empty() ? "<none>" : s; }

// "a,b,c + 2 more..." as upstream lists at most `max` entries.
inline std::string listWithMore(const std::vector<std::string>& items, size_t total, size_t max) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max; ++i) out += (i ? "," : "") + items[i];
  if (total > max) out += " + " + std::to_string(total - max) + " more...";
  return out;
}

// The registrations of each group, appended in discovery order by builtinResourceTypes().
void addCoreResources(std::vector<ResourceType>& out);
void addAppsResources(std::vector<ResourceType>& out);
void addAutoscalingResources(std::vector<ResourceType>& out);
void addBatchResources(std::vector<ResourceType>& out);
void addNetworkingResources(std::vector<ResourceType>& out);  // coordination, discovery too
void addRbacResources(std::vector<ResourceType>& out);        // and the access reviews
void addCertificatesResources(std::vector<ResourceType>& out);
void addStorageResources(std::vector<ResourceType>& out);
void addExtensionResources(std::vector<ResourceType>& out);  // webhooks, CRDs, minik8s.io Dns

}  // namespace minik8s::api::resources
