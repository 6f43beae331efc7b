// The rules the API server's registry applies on create and update, as Kubernetes' REST
// strategies do: which fields the server owns, what a create resets, what a subresource may
// change. The generic steps live here; a kind's own steps are hooks of its ResourceType entry
// (api/resource_type.h). Pure functions; thread-safe.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api::strategy {

// Resets what a client may not set on create (status of most kinds, pod phase Pending, ...).
void prepareForCreate(const ResourceInfo& r, json& obj);

// Turns the client's `obj` into the object to store, given the stored `old`:
// - main resource: status comes from `old`; generation bumps when the spec changed;
// - "status": only status (and conditions) change; everything else is `old`'s;
// - "binding" (pods): only spec.nodeName and status change, in one write as upstream's binding.
void prepareForUpdate(const ResourceInfo& r, json& obj, const json& old,
                      const std::string& subresource);

// Removes `metadata.creationTimestamp: null` anywhere below `node` (kubectl sends it in pod
// templates; Kubernetes drops it when it decodes into its types).
void dropNullTimestamps(json& node);

// The pod QoS class from its containers' requests and limits.
std::string podQosClass(const json& pod);

}  // namespace minik8s::api::strategy
