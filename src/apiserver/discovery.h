// Discovery documents generated from the scheme: legacy (/api, /apis, /api/v1, /apis/g/v) and
// aggregated (apidiscovery.k8s.io/v2, chosen by the Accept header), as kubectl 1.32 reads them.
// Pure functions; thread-safe.
#pragma once

#include "api/scheme.h"
#include "common/status.h"

namespace minik8s::apiserver {

json legacyApiVersions(const std::string& serverAddress);  // GET /api
json legacyApiGroupList(const api::Scheme& scheme);         // GET /apis
Result<json> legacyApiGroup(const api::Scheme& scheme, const std::string& group);
Result<json> legacyResourceList(const api::Scheme& scheme, const std::string& group,
                                const std::string& version);
// Aggregated discovery: core (`legacy` true, for /api) or every named group (for /apis).
json aggregatedDiscovery(const api::Scheme& scheme, bool legacy);

// True when the Accept header asks for aggregated discovery v2 (or v2beta1).
bool wantsAggregatedDiscovery(const std::string& accept);
std::string aggregatedContentType(const std::string& accept);

}  // namespace minik8s::apiserver
