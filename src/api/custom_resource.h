// Custom resources: what a CustomResourceDefinition (apiextensions.k8s.io/v1) makes the API
// server serve.
//
// resourcesOfCrd() turns an accepted CRD into one ResourceInfo per served version (names, scope,
// verbs, short names, categories, status and scale subresources, the storage version), each
// carrying a CustomResource: the version's structural schema and printer columns, which take the
// place of the built-in defaulting, validation, strict decoding and table printing for objects of
// that resource (api::applyDefaults, api::validate, api::checkAgainstSchema and api::tableCells
// dispatch to it). defaultCustomResourceDefinition() fills a CRD's defaults as Kubernetes does
// (listKind, singular, conversion None, served/storage flags left as given). Immutable after
// construction: thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/jsonpath.h"
#include "api/scheme.h"
#include "api/table.h"
#include "common/status.h"

namespace minik8s::api {

// The finalizer that keeps a CRD until its objects are deleted.
inline constexpr const char* kCrdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io";

class CustomResource {
 public:
  struct Column {
    TableColumn column;
    JsonPath path;
  };

  // From one entry of spec.versions of a defaulted, valid CRD.
  static Result<std::shared_ptr<const CustomResource>> fromVersion(const json& crd,
                                                                   const json& version);

  // The version's openAPIV3Schema.
  const json& schema() const { return schema_; }

  // Drops undeclared fields, then fills defaults (what the server does to every object it
  // decodes for this resource).
  void pruneAndDefault(json& obj) const;
  // The fields pruneAndDefault() would drop, as strict field validation reports them.
  std::vector<std::string> unknownFields(const json& obj) const;
  // Object metadata rules plus the schema; `old` is the stored object on update.
  std::vector<Cause> validate(const json& obj, const json* old, bool namespaced) const;

  std::vector<TableColumn> columns() const;
  json cells(const json& obj, std::chrono::system_clock::time_point now) const;

  // The scale subresource: JSON pointers of the replica counts and the selector's path.
  bool hasScale() const { return hasScale_; }
  const std::string& specReplicasPointer() const { return specReplicas_; }
  const std::string& statusReplicasPointer() const { return statusReplicas_; }
  // The label selector (a string, as in Scale.status.selector), "" when not declared or absent.
  std::string labelSelector(const json& obj) const;

 private:
  json schema_;
  std::vector<Column> columns_;
  bool hasScale_ = false;
  std::string specReplicas_, statusReplicas_;
  std::string labelSelectorPath_;
};

// Fills the defaults of a CustomResourceDefinition in place.
void defaultCustomResourceDefinition(json& crd);

// The resources a valid CRD serves, one per served version, with `custom` set. Empty when no
// version is served.
Result<std::vector<ResourceInfo>> resourcesOfCrd(const json& crd);

}  // namespace minik8s::api
