// `minik8s mesh rollout SERVICE --image IMAGE [...]`: creates a MeshRollout (mesh.minik8s.io/v1,
// driven by the meshrollout controller of the control plane), then follows its status, one
// line per step, and exits 0 when it is Promoted, 1 when it RolledBack or Failed; --no-wait
// returns once it is created. docs/mesh.md, "Rolling upgrades".
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addMeshRolloutCommand(CLI::App& mesh);

}  // namespace minik8s::cli
