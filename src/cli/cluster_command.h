// `minik8s cluster up|down|status|add-node|remove-node`: a whole cluster on one machine. The
// server and the cluster registry run in the host namespace on the underlay gateway address;
// each node is a network namespace with its own containerd and agent (network/node_namespace.h).
// The layout and the PIDs live in <data-dir>/cluster.json so `down` ends exactly what `up`
// started.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addClusterCommand(CLI::App& app);

}  // namespace minik8s::cli
