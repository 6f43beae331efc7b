// OpenAPI v3 documents of the API, built from the scheme and the type schemas.
//
// GET /openapi/v3 returns openapiV3Index(): one entry per served group/version ("api/v1",
// "apis/apps/v1", ...) with a serverRelativeURL carrying a hash of that document, so clients
// cache it until it changes. GET /openapi/v3/<path> returns openapiV3Document(): the resource
// paths (collection, item, namespaced and all-namespaces lists, JSON subresources such as status
// and scale) with their operations, and components.schemas holding every definition those paths
// reach. PATCH operations carry x-kubernetes-group-version-kind and the fieldValidation, dryRun,
// fieldManager and force query parameters, and deliberately no requestBody: kubectl then skips
// client-side validation (it sends fieldValidation=Strict and the server checks) and computes
// apply patches from its compiled-in types. Pure functions of the scheme: thread-safe; callers may
// cache the results since the builtin scheme never changes.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::api {

// {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=<HASH>"},...}}.
json openapiV3Index(const Scheme& scheme);

// The document of one group/version, `path` as in the index ("api/v1", "apis/apps/v1"; a leading
// '/' or a trailing "?query" are ignored). NotFound for a path the scheme does not serve.
Result<json> openapiV3Document(const Scheme& scheme, const std::string& path);

// Stable hash of a document (upper-case hex SHA-512 of its compact JSON), as used in the index.
std::string openapiDocumentHash(const json& document);

}  // namespace minik8s::api
