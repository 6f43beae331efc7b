// `minik8s server`: the control plane (API server; scheduler and controllers join later).
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

// Adds the `server` subcommand to `app`.
void addServerCommand(CLI::App& app);

}  // namespace minik8s::cli
