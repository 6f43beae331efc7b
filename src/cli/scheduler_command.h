// `minik8s scheduler`: the scheduler as its own process, talking to an API server over HTTP.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

// Adds the `scheduler` subcommand (--server URL, --scheduler-policy, --log-level) to `app`.
void addSchedulerCommand(CLI::App& app);

}  // namespace minik8s::cli
