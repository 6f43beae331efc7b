// `minik8s controller-manager --server URL`: the workload controllers (ReplicaSet, Deployment,
// garbage collector) as a process of their own, talking to an API server over HTTP.
// `minik8s server` runs the same controllers::ControllerManager in-process.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

// Adds the `controller-manager` subcommand to `app`.
void addControllerManagerCommand(CLI::App& app);

}  // namespace minik8s::cli
