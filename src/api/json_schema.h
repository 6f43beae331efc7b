// Structural OpenAPI v3 schemas, as CustomResourceDefinitions carry them (openAPIV3Schema).
//
// What kube-apiserver does with a custom resource's schema, on plain JSON values:
// - checkStructural(): the rules a CRD's schema must follow to be accepted (a type on every
//   node unless x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields says
//   otherwise, no $ref, properties and additionalProperties not both, supported types only);
// - prune(): drops fields the schema does not declare (unless x-kubernetes-preserve-unknown-fields)
//   and reports their paths, which strict field validation turns into errors or warnings;
// - applyDefaults(): fills `default` values of absent (or null, non-nullable) fields;
// - validate(): type, enum, bounds, lengths, pattern, required, item and property counts,
//   uniqueness, allOf/anyOf/oneOf/not, with Kubernetes' field paths and wording
//   ("spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10").
// x-kubernetes-validations (CEL rules) are accepted in a schema but not evaluated.
// Pure functions of their inputs: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::api::jsonschema {

// Problems of `schema` as a structural schema; `path` is where it sits in the CRD
// ("spec.versions[0].schema.openAPIV3Schema").
std::vector<Cause> checkStructural(const json& schema, const std::string& path);

// Removes from `value` every field `schema` does not declare. At the root (`isRoot`) apiVersion,
// kind and metadata are always kept. The removed fields' paths ("spec.foo", "spec.items[1].bar")
// are appended to `pruned` when it is not null.
void prune(json& value, const json& schema, bool isRoot, std::vector<std::string>* pruned);

// Sets `default` of every absent property (recursively, also inside array items and map values);
// a null value of a property that is not nullable is dropped first, then defaulted.
void applyDefaults(json& value, const json& schema);

// Every problem of `value` against `schema`; `path` is the value's field path ("" at the root).
std::vector<Cause> validate(const json& value, const json& schema, const std::string& path);

}  // namespace minik8s::api::jsonschema
