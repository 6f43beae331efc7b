// Patch application for the PATCH verb: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and
// Kubernetes strategic merge patch (what kubectl apply/edit/patch send by default).
//
// All functions are pure: they return a new document and never modify their arguments, so they
// are safe to call from any thread. Errors follow kube-apiserver: a malformed patch document is
// 400 BadRequest; a JSON patch operation that cannot be applied (missing path, failed test) is
// 422 Invalid with the operation's problem as the message.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::api {

// RFC 7386: objects merge recursively, null deletes a key, anything else replaces.
Result<json> applyMergePatch(const json& target, const json& patch);

// RFC 6902: an array of {op: add|remove|replace|move|copy|test, path, from?, value?} applied in
// order, all or nothing. JSON pointers use ~0/~1 escapes; "-" appends to an array on add.
Result<json> applyJsonPatch(const json& target, const json& patch);

// Kubernetes strategic merge patch for an object of the given kind ("Pod", "Deployment", ...):
// maps merge, null deletes, lists with a merge key (containers by name, ports by containerPort,
// conditions by type, ...) merge per element, metadata.finalizers is a set, other lists are
// replaced. Honors $patch (replace|delete|merge), $setElementOrder/<list>,
// $deleteFromPrimitiveList/<list> and $retainKeys. Unknown kinds (custom resources) replace
// lists as a merge patch would, except the ObjectMeta lists.
Result<json> applyStrategicMergePatch(const json& target, const json& patch,
                                      const std::string& kind);

}  // namespace minik8s::api
