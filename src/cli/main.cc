// minik8s: one binary for the control plane, the node agent and a local cluster.
#include <CLI/CLI.hpp>
#include <string>

#include "cli/addons.h"
#include "cli/agent_command.h"
#include "cli/cluster_command.h"
#include "cli/controller_manager_command.h"
#include "cli/image_command.h"
#include "cli/malloc_tuning.h"
#include "cli/mesh_command.h"
#include "cli/proxy_command.h"
#include "cli/scheduler_command.h"
#include "cli/server_command.h"
#include "cli/serverless_command.h"
#include "cli/slurm_command.h"
#include "cli/workflow_command.h"

#ifndef MINIK8S_VERSION
#define MINIK8S_VERSION "unknown"  // set by src/CMakeLists.txt from project(VERSION)
#endif

int main(int argc, char** argv) {
  minik8s::cli::tuneMalloc(argc, argv);
  CLI::App app{"minik8s: a small Kubernetes-compatible container orchestrator"};
  app.set_version_flag("--version", std::string("minik8s ") + MINIK8S_VERSION);
  app.require_subcommand(1);
  minik8s::cli::addServerCommand(app);
  minik8s::cli::addAgentCommand(app);
  minik8s::cli::addSchedulerCommand(app);
  minik8s::cli::addControllerManagerCommand(app);
  minik8s::cli::addImageCommand(app);
  minik8s::cli::addContainerdCommand(app);
  minik8s::cli::addClusterCommand(app);
  minik8s::cli::addProxyCommand(app);
  minik8s::cli::addAddonsCommand(app);
  minik8s::cli::addSlurmCommands(app);
  minik8s::cli::addServerlessCommands(app);
  minik8s::cli::addWorkflowCommands(app);
  minik8s::cli::addMeshCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
