// SlurmJob (slurm.minik8s.io/v1): a user's program, its build and run commands and the sbatch
// settings, run on a Slurm cluster by a submitter pod. This header holds what the controller,
// the submitter and the CLI share: the CustomResourceDefinition that serves the kind (OpenAPI
// schema, printer columns, validation), the spec as read from an object, the batch script
// written from it, and how Slurm's job states map to the object's phase. Pure functions; thread-
// safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::slurm {

extern const client::Resource kSlurmJobs;  // slurm.minik8s.io/v1 slurmjobs (namespaced)
inline constexpr const char* kGroup = "slurm.minik8s.io";
// Kept on every SlurmJob until its Slurm job is known to be over (or was never submitted), so a
// delete cancels it first (scancel), as a Kubernetes finalizer does.
inline constexpr const char* kCancelFinalizer = "slurm.minik8s.io/scancel";
// Labels of the Job and pod that submit one SlurmJob.
inline constexpr const char* kJobNameLabel = "slurm.minik8s.io/job-name";
// The Secret a SlurmJob names when it names none (spec.credentialsSecret).
inline constexpr const char* kDefaultCredentialsSecret = "slurm";

// The apiextensions.k8s.io/v1 CustomResourceDefinition of the kind.
json slurmJobCrd();

// Makes sure the CRD exists and matches slurmJobCrd() (created or updated). Unavailable or the
// server's error when it cannot.
Status ensureSlurmJobCrd(client::RestClient& rest);

// What an sbatch script says (spec.slurm); empty/zero fields are left to Slurm's defaults.
struct SbatchOptions {
  std::string partition;
  int nodes = 0;
  int ntasks = 0;
  int cpusPerTask = 0;
  int gpus = 0;
  std::string gres;    // "gpu:1", "gpu:h100:2"
  std::string memory;  // --mem: "512M", "4G"
  std::string time;    // --time: "10", "00:10:00", "1-00:00:00"
  std::string jobName;
  std::string output;  // relative to the job directory unless absolute; "" = output.log
  std::string error;   // "" = merged into the output
  std::vector<std::string> extraOptions;  // "--exclusive", "--constraint=a100"
};

struct SlurmJobSpec {
  SbatchOptions slurm;
  std::string sourceConfigMap;  // spec.source.configMap ("" = no sources)
  std::string build;            // shell, run in the sources' directory before `run`
  std::string run;              // shell, the program
  std::string credentialsSecret = kDefaultCredentialsSecret;
};

// Reads spec from a SlurmJob; BadRequest naming the field (the CRD's schema validated the
// shape already, this catches what a schema cannot say: a newline in an #SBATCH value).
Result<SlurmJobSpec> parseSlurmJobSpec(const json& slurmJob);

// Where one job's files live under the shared directory: <shared>/minik8s/<ns>/<name>-<uid>.
std::string jobDirectory(const std::string& sharedDir, const std::string& ns,
                         const std::string& name, const std::string& uid);

// The Slurm job name when spec.slurm.jobName is empty: "<ns>.<name>".
std::string defaultJobName(const std::string& ns, const std::string& name);

// The comment given to sbatch; a restarted submitter finds its job by it and never submits
// twice.
std::string jobComment(const std::string& uid);

// The path of the job's output file (spec.slurm.output resolved against the job directory).
std::string outputPath(const SbatchOptions& o, const std::string& jobDir);

// The batch script: #SBATCH lines from the options (job name, comment, chdir, output), then the
// build (output to build.log, its exit code to build.rc; a failed build ends the job with
// exit code kBuildFailedExit), then the run. The commands themselves are in build.sh and run.sh
// in the job directory, so no quoting of user text happens here.
std::string batchScript(const SbatchOptions& o, const std::string& jobDir,
                        const std::string& jobName, const std::string& comment, bool hasBuild);
inline constexpr int kBuildFailedExit = 97;

// One job as `scontrol show job -o ID` prints it.
struct SlurmJobInfo {
  std::string id;
  std::string state;      // JobState: PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, ...
  std::string reason;     // Reason: None, Priority, Resources, NonZeroExitCode, ...
  int exitCode = 0;       // ExitCode=N:S -> N
  int exitSignal = 0;     // -> S
  std::string startTime;  // as Slurm prints them (2026-11-26T05:01:02), "" when Unknown/None
  std::string endTime;
  std::string comment;
  std::string nodeList;
};

// Parses one line of `scontrol show job -o` (Key=Value pairs); nullopt without a JobId.
std::optional<SlurmJobInfo> parseScontrolJobLine(const std::string& line);

// The object's phase for a Slurm state: Submitted (pending in the queue), Running, Succeeded,
// Failed, Cancelled.
std::string phaseForSlurmState(const std::string& state);
bool isFinalPhase(const std::string& phase);

// Slurm's local time format to RFC 3339 UTC, "" for Unknown/None/unparseable.
std::string slurmTimeToRfc3339(const std::string& t);

}  // namespace minik8s::slurm
