// `minik8s agent`: the node agent (kubelet core, its own containerd unless given a CRI socket,
// and the agent's HTTP server on port 10250).
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

// Adds the `agent` subcommand to `app`.
void addAgentCommand(CLI::App& app);

}  // namespace minik8s::cli
