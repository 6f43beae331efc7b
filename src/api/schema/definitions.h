// Type schemas of every kind minik8s serves, as OpenAPI v3 definitions.
//
// schemaDefinitions() maps a definition name ("io.k8s.api.core.v1.PodSpec") to its schema: type,
// description, properties, items, additionalProperties, format, required, $ref
// ("#/components/schemas/<name>", wrapped in allOf when the field has its own description, as
// Kubernetes publishes it), x-kubernetes-int-or-string (plus a $ref to IntOrString, whose oneOf
// makes `kubectl explain` print <IntOrString>; Quantity likewise),
// x-kubernetes-preserve-unknown-fields and, on top-level kinds, x-kubernetes-group-version-kind
// (array form). The OpenAPI documents, strict decoding and `kubectl explain` all read these. Built
// once on first use, immutable afterwards: safe to share between threads.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

// Every definition by name.
const json& schemaDefinitions();

// The definition of a resource's kind: "io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.Pod",
// "io.minik8s.v1.Dns" (groups outside k8s.io are reversed, as Kubernetes names CRD schemas).
std::string definitionName(const ResourceInfo& resource);
std::string definitionName(const std::string& group, const std::string& version,
                           const std::string& kind);

// The prefix of every $ref in the definitions.
inline constexpr const char* kSchemaRefPrefix = "#/components/schemas/";
// Quantities ("100m", "1Gi") are strings on the wire but numbers are accepted too.
inline constexpr const char* kQuantityDefinition = "io.k8s.apimachinery.pkg.api.resource.Quantity";
// Fields that take a number or a name/percentage ("http", "25%") refer to this definition and
// carry x-kubernetes-int-or-string themselves.
inline constexpr const char* kIntOrStringDefinition =
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

}  // namespace minik8s::api
