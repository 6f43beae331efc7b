// The MeshRollout kind (mesh.minik8s.io/v1, a CRD the meshrollout controller installs): one
// progressive rollout of a meshed service to a new image, as Flagger's Canary is for Istio. The
// spec says what to roll out and how fast; the status holds everything the rollout needs to go
// on (mesh/rollout.h's RolloutState, the Deployments and versions it resolved), so a restarted
// controller resumes it. docs/mesh.md has the user's view. Pure; thread-safe.
#pragma once

#include <string>

#include "client/rest_client.h"
#include "mesh/rollout.h"

namespace minik8s::mesh {

extern const client::Resource kMeshRollouts;  // mesh.minik8s.io/v1 meshrollouts (namespaced)

// While a MeshRollout has it, deleting it first rolls the service back (the controller removes
// it once the rollout has ended).
inline constexpr char kMeshRolloutFinalizer[] = "mesh.minik8s.io/rollback";

// The CustomResourceDefinition: printer columns NAME SERVICE PHASE WEIGHT AGE (+ STAGE and
// REASON with -o wide), an OpenAPI schema that refuses bad specs with 422 and the field path,
// and the status subresource.
json meshRolloutCrd();
Status ensureMeshRolloutCrd(client::RestClient& rest);

// What a MeshRollout's spec asks for.
struct MeshRolloutSpec {
  std::string service, image, version, container;
  RolloutOptions options;  // stepPercent, interval, maxErrorRate, minRequests
};
// The spec read and checked (the schema's checks again, and the interval's syntax):
// BadRequest with the field path ("spec.interval: Invalid value: ...").
Result<MeshRolloutSpec> parseMeshRolloutSpec(const json& meshRollout);

// A MeshRollout object as `minik8s mesh rollout` creates it.
json meshRolloutObject(const std::string& ns, const std::string& name, const MeshRolloutSpec& spec,
                       const std::string& interval);

}  // namespace minik8s::mesh
