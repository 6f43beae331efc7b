// The controller manager's flags (kube-controller-manager's names), shared by `minik8s
// controller-manager` and `minik8s server`, which runs the controllers in process.
#pragma once

#include <CLI/CLI.hpp>

#include "controllers/manager/controller_manager.h"

namespace minik8s::cli {

void addControllerFlags(CLI::App* cmd, controllers::ControllerDurationFlags& durations);

}  // namespace minik8s::cli
