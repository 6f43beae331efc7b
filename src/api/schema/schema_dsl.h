// A compact text notation for the type schemas, turned into OpenAPI v3 definitions.
//
//   package io.k8s.api.apps.v1
//   Deployment @apps/v1 +list: Deployment enables declarative updates for Pods and ReplicaSets.
//     spec DeploymentSpec: Desired behavior of the Deployment.
//     replicas int32: Number of desired pods.
//     selector! LabelSelector: ...            (! = required)
//
// A definition line starts at column 0: name, optional @group/version (top-level kind: adds the
// GVK extension, apiVersion, kind and metadata), +list (also defines <Name>List), +preserve
// (unknown fields kept), then ": description". Field lines are indented: name, type, ": text".
// Types: string boolean int32 int64 number date-time byte int-or-string quantity object(free
// form) []T map[T] or a definition name, short (looked up in the current package, then meta/v1,
// then core/v1) or fully qualified. Pure functions; no shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace minik8s::api::schema {

// Adds the definitions of `text` to `defs`. Short type names are resolved by resolveRefs() once
// every block is in, since definitions refer to each other across packages.
void parseSchemaText(std::string_view text, json& defs);

// Rewrites the short $ref names left by parseSchemaText() to "#/components/schemas/<full>".
// Returns the names that could not be resolved (empty when all is well).
std::vector<std::string> resolveRefs(json& defs);

}  // namespace minik8s::api::schema
