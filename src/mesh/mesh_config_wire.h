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

}  // namespace minik8s::mesh
