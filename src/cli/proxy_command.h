// `minik8s proxy`: the node's service proxy (and, with --dns-listen, its cluster DNS) on their own,
// in the current network namespace, as the agent runs them. For tests and debugging; the agent
// starts both itself.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

// Adds the hidden `proxy` subcommand (--server, --node-name, --node-ip, --cluster-cidr,
// --dns-listen, --dns-port, --dns-data-dir, --cleanup, --log-level) to `app`.
void addProxyCommand(CLI::App& app);

}  // namespace minik8s::cli
