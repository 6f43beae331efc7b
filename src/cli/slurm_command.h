// Slurm jobs from the command line:
//   minik8s job submit FILE.yaml [--source DIR|ZIP] [-n NS]   a SlurmJob, its sources uploaded
//   minik8s job output NAME [-n NS]                           the job's whole output
//   minik8s slurm-submitter ...                               what a SlurmJob's pod runs
// The submitter starts a private munged with the credentials Secret's key, points the Slurm
// commands at the Secret's slurm.conf and runs slurm::Submitter until the job is over.
#pragma once

#include <CLI/CLI.hpp>

namespace minik8s::cli {

void addSlurmCommands(CLI::App& app);

}  // namespace minik8s::cli
