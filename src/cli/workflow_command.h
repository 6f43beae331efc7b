// Workflows from the command line (docs/serverless.md, "Workflows"):
//   minik8s workflow run NAME [--data JSON|@file] [-n NS] [--name EXEC] [--wait [--timeout 10m]]
//       creates a WorkflowExecution of Workflow NAME with that input; --wait follows it to its end
//       and prints its output (exit 0) or its error and cause (exit 1)
//   minik8s workflow validate -f workflow.yaml
//       checks a Workflow's state machine as the engine will, each problem with its field path
// Workflows themselves are applied, listed and described with kubectl (kubectl get wf, wfx).
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addWorkflowCommands(CLI::App& app);

}  // namespace minik8s::cli
