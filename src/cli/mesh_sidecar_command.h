// The commands the mesh-proxy image runs (images/mesh-proxy), in both binaries: `minik8s` and
// the sidecar's own `minik8s-mesh-proxy` (cli/mesh_proxy_main.cc), which links only the mesh,
// client and common rooms so that every meshed pod's sidecar stays small (docs/mesh.md).
//   mesh-proxy           the sidecar a meshed pod runs (UID 1337)
//   mesh-proxy-metrics   the local sidecar's /metrics on stdout (what `mesh rollout` execs)
//   mesh-init            the init container: the pod's iptables redirection
//   mesh-discovery       the mesh control plane (istiod's Deployment runs the same image)
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addMeshSidecarCommands(CLI::App& app);

}  // namespace minik8s::cli
