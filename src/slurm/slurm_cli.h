// SlurmCli: what the submitter asks of a Slurm cluster (sbatch, scontrol show job, squeue,
// scancel), an interface so the submitter is tested against a fake. CommandSlurmCli runs
// Slurm's own client commands (slurm-client), which read SLURM_CONF and authenticate through
// munge, as on a cluster's login node. Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "slurm/slurm_job.h"

namespace minik8s::slurm {

class SlurmCli {
 public:
  virtual ~SlurmCli() = default;
  // sbatch SCRIPT: the job id. A refusal (unknown partition, a time limit over the partition's)
  // is BadRequest with Slurm's message; Unavailable when slurmctld cannot be reached.
  virtual Result<std::string> submit(const std::string& scriptPath) = 0;
  // The job as slurmctld knows it; NotFound once it has forgotten it (MinJobAge).
  virtual Result<SlurmJobInfo> show(const std::string& jobId) = 0;
  // The id of a job (any state slurmctld still knows) whose comment is `comment`, or nullopt.
  virtual Result<std::optional<std::string>> findByComment(const std::string& comment) = 0;
  virtual Status cancel(const std::string& jobId) = 0;
};

class CommandSlurmCli : public SlurmCli {
 public:
  Result<std::string> submit(const std::string& scriptPath) override;
  Result<SlurmJobInfo> show(const std::string& jobId) override;
  Result<std::optional<std::string>> findByComment(const std::string& comment) override;
  Status cancel(const std::string& jobId) override;
};

// Slurm's error text ("sbatch: error: invalid partition specified: x") as a Status: a
// connection failure is Unavailable, anything else BadRequest.
Status slurmError(const std::string& command, const std::string& output);

}  // namespace minik8s::slurm
