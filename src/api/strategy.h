// Per-kind rules the registry applies on create and update, as Kubernetes' REST strategies do:
// which fields the server owns, what a create resets, what a subresource may change.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::apiserver::strategy {

// Resets what a client may not set on create (status of most kinds, pod phase Pending, ...).
void prepareForCreate(const api::ResourceInfo& r, json& obj);

// Turns the client's `obj` into the object to store, given the stored `old`:
// - main resource: status comes from `old`; generation bumps when the spec changed;
// - "status": only status (and conditions) change; everything else is `old`'s.
void prepareForUpdate(const api::ResourceInfo& r, json& obj, const json& old,
                      const std::string& subresource);

// The pod QoS class from its containers' requests and limits.
std::string podQosClass(const json& pod);

}  // namespace minik8s::apiserver::strategy
