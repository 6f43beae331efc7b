// Installing a CustomResourceDefinition a component brings along (as operators do: the SlurmJob
// and Function kinds are installed by their controllers when the controller manager starts).
// Thread-safe (no shared state).
#pragma once

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::client {

// Creates `crd` (apiextensions.k8s.io/v1) or, when one of that name exists with another spec,
// updates its spec. A concurrent create or update by another server is not an error. The
// server's error otherwise.
Status ensureCustomResourceDefinition(RestClient& rest, const json& crd);

}  // namespace minik8s::client
