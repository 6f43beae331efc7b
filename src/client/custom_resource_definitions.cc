#include "client/custom_resource_definitions.h"

#include "common/json_pointer.h"

namespace minik8s::client {

Status ensureCustomResourceDefinition(RestClient& rest, const json& crd) {
  const Resource crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  const std::string name = valueAt(crd, "/metadata/name", std::string());
  if (name.empty()) return Status::BadRequest("CustomResourceDefinition without metadata.name");
  auto current = rest.get(crds, "", name);
  if (!current.ok()) {
    if (current.status().code() != 404) return current.status();
    auto created = rest.create(crds, "", crd);
    if (created.ok() || created.status().code() == 409) return {};
    return created.status();
  }
  if (current->value("spec", json::object()) == crd.value("spec", json::object())) return {};
  json updated = *current;
  updated["spec"] = crd.value("spec", json::object());
  auto result = rest.update(crds, updated);
  // 409: another API server's controller manager updated it first.
  return result.ok() || result.status().code() == 409 ? Status() : result.status();
}

}  // namespace minik8s::client
