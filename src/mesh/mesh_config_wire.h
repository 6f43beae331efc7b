// The whole MeshConfig as JSON, as the discovery server streams it to the sidecars
// (mesh/discovery_server.h): every field a sidecar routes with (services, ports, endpoints with
// their pods' labels, routes with their matches, subsets, traffic policies, pods by IP,
// PeerAuthentications), so that meshConfigFromWire(meshConfigToWire(c)) routes exactly as `c`.
// meshConfigToJson() (mesh_config.h) stays the shorter view a user reads.
//
// Pure functions; a decoded config is immutable like a built one.
#pragma once

#include <memory>

#include "common/status.h"
#include "common/yaml_json.h"
#include "mesh/mesh_config.h"

namespace minik8s::mesh {

json meshConfigToWire(const MeshConfig& config);

// BadRequest naming the field (e.g. "config.services[2].ports[0].port: want an integer") when
// `wire` is not what meshConfigToWire() writes; regexes are compiled again.
Result<std::shared_ptr<const MeshConfig>> meshConfigFromWire(const json& wire);

// What changed from `from` to `to`: the services and pods added or changed (whole), the keys of
// those removed, the changed entries of the two indexes (null: removed), the PeerAuthentications
// (whole). applyMeshConfigDelta(from, delta) gives a config whose wire form equals `to`'s;
// Conflict when `base` is not the version the delta was made from.
json meshConfigDeltaToWire(const MeshConfig& from, const MeshConfig& to);
Result<std::shared_ptr<const MeshConfig>> applyMeshConfigDelta(const MeshConfig& base,
                                                               const json& delta);

}  // namespace minik8s::mesh
