// minik8s: one binary for the control plane, the node agent and a local cluster.
#include <CLI/CLI.hpp>

#include "cli/server_command.h"

int main(int argc, char** argv) {
  CLI::App app{"minik8s: a small Kubernetes-compatible container orchestrator"};
  app.require_subcommand(1);
  minik8s::cli::addServerCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
