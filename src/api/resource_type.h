// ResourceType: the one registration of a built-in resource, as Kubernetes keeps
// pkg/registry/<group>/<resource>.
//
// An entry wires together what the server knows of a resource: its names, scope, verbs and
// subresources (ResourceInfo), its defaulting, its validation, its Table printer and its strategy
// (what a create resets, what an update keeps). Each group registers its kinds in one file of
// api/resources/ (`core.cc`, `apps.cc`, ...); the scheme (Scheme::builtin), applyDefaults(),
// validate(), the Table printers (api/table.h) and the create/update strategy (api/strategy.h)
// all read these entries, so adding a built-in kind is its own functions plus one entry. The
// kind's schema is found by its definition name (api/schema). Immutable after the first call;
// thread-safe.
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "api/scheme.h"
#include "api/table.h"
#include "api/validation/field_errors.h"
#include "common/status.h"

namespace minik8s::api {

struct ResourceType {
  ResourceInfo info;

  // Fills unset fields (api/defaults.h); nullptr: the kind has no defaults.
  void (*defaults)(json& obj) = nullptr;

  // The kind's validation (api/validation.h); `old` is nullptr on create. nullptr: metadata only.
  void (*validate)(validation::FieldErrors& errs, const json& obj, const json* old) = nullptr;

  // Server-side Table columns and one row's cells, aligned (api/table.h). No cells: Name and Age.
  std::vector<TableColumn> columns;
  json (*cells)(const json& obj, const json& meta,
                std::chrono::system_clock::time_point now) = nullptr;

  // Strategy (api/strategy.h). prepareForCreate replaces the generic create preparation (null
  // timestamps dropped from spec, status reset when the resource has a status subresource);
  // prepareForUpdate runs before the generic update steps of a main-resource write.
  void (*prepareForCreate)(json& obj) = nullptr;
  void (*prepareForUpdate)(json& obj, const json& old) = nullptr;
};

// Every built-in resource, in discovery order (core first, then the groups as kubectl lists them).
const std::vector<ResourceType>& builtinResourceTypes();

// The entry of group/version/kind, or nullptr (custom resources have none).
const ResourceType* builtinResourceType(std::string_view group, std::string_view version,
                                        std::string_view kind);
inline const ResourceType* builtinResourceType(const ResourceInfo& r) {
  return builtinResourceType(r.group, r.version, r.kind);
}

}  // namespace minik8s::api
