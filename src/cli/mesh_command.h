// The service mesh from the command line (docs/mesh.md):
//   minik8s mesh services [-n NS] [-o json]   the registry: each service, virtual IP, ports,
//                                             endpoints (with their subsets' labels)
//   minik8s mesh-proxy                        the sidecar a meshed pod runs (UID 1337)
//   minik8s mesh-init                         the init container: the pod's iptables redirection
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addMeshCommands(CLI::App& app);

}  // namespace minik8s::cli
