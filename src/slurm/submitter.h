// Submitter: the program in each SlurmJob's pod (`minik8s slurm-submitter`). It stages the job's
// sources and scripts in the Slurm cluster's shared directory, submits once with sbatch, follows
// the job (scontrol show job), copies the job's output to its own stdout (the pod's log) and the
// last lines to status.outputTail, and writes the end (phase, exit code, reason) to the status.
//
// Restart-safe: the Slurm job id is written to the status as soon as sbatch answers, and before
// submitting a restarted submitter looks for a job carrying the SlurmJob's uid in its comment
// (squeue --states=all), so a submitter killed at any point never submits twice. A SlurmJob being
// deleted (deletionTimestamp; the scancel finalizer holds it) is cancelled in Slurm, then the
// finalizer is removed.
//
// The API side (SlurmJobApi) and Slurm (SlurmCli) are interfaces; tests drive step() against
// fakes. One thread drives a Submitter.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <ostream>
#include <string>

#include "client/rest_client.h"
#include "common/status.h"
#include "slurm/slurm_cli.h"

namespace minik8s::slurm {

// The one SlurmJob a submitter serves.
class SlurmJobApi {
 public:
  virtual ~SlurmJobApi() = default;
  virtual Result<json> get() = 0;  // NotFound (404) once it is gone
  // A JSON merge patch of the status subresource: {"phase": ..., ...}.
  virtual Status patchStatus(const json& status) = 0;
  virtual Status removeFinalizer(const std::string& finalizer) = 0;
};

// SlurmJobApi over the API server.
std::unique_ptr<SlurmJobApi> restSlurmJobApi(client::RestClient& rest, std::string ns,
                                             std::string name);

// SlurmJobApi over one object read from a file (`minik8s slurm-submitter --file`: a SlurmJob run
// against a Slurm cluster with no minik8s cluster, e.g. from a login node or to test a job).
// Status patches are merged into the object in memory and, when statusFile is not empty, the
// whole object is written there as JSON after each one. No namespace: "default"; no uid: a new
// one (the sbatch comment a restarted submitter would adopt by).
std::unique_ptr<SlurmJobApi> fileSlurmJobApi(json slurmJob, std::string statusFile);

struct SubmitterOptions {
  std::string sharedDir;  // the Slurm cluster's shared directory, as the pod sees it
  std::string sourceDir;  // the source ConfigMap's mount, "" when the job has none
  std::string podName;    // recorded in status.submitter
  std::chrono::milliseconds pollInterval = std::chrono::milliseconds(500);
  std::chrono::milliseconds tailInterval = std::chrono::seconds(2);  // status.outputTail updates
  size_t tailLines = 20;
};

class Submitter {
 public:
  Submitter(SlurmJobApi& api, SlurmCli& slurm, SubmitterOptions options, std::ostream& output);

  // Steps every pollInterval until the job is over (OK), the object is gone, or `stop`.
  Status run(const std::atomic<bool>& stop);

  // One pass: true when there is nothing left to do. Errors worth a retry (slurmctld or the API
  // server unreachable) come back as a Status; run() logs them and tries again.
  Result<bool> step();

 private:
  Result<bool> submitOrAdopt(const json& obj, const std::string& uid, std::string& jobId);
  Status stage(const json& obj, const SlurmJobSpec& spec, const std::string& jobDir);
  Result<bool> follow(const json& obj, const std::string& jobId);
  Result<bool> cancelForDeletion(const json& obj);
  Status finish(const json& obj, const SlurmJobInfo& info, const std::string& phase);
  void copyNewOutput();
  json conditions(const json& obj, const std::string& type, const std::string& reason,
                  const std::string& message) const;

  SlurmJobApi& api_;
  SlurmCli& slurm_;
  SubmitterOptions options_;
  std::ostream& output_;
  std::string jobDir_;
  std::string outputFile_;
  uint64_t outputOffset_ = 0;
  std::string tail_;           // the last tailLines lines copied
  std::string tailPublished_;  // what status.outputTail says
  std::chrono::steady_clock::time_point tailPublishedAt_{};
  std::string phasePublished_;
};

// The last `lines` lines of `text`.
std::string lastLines(const std::string& text, size_t lines);

// Refuses archive member names that leave the directory (absolute, "..") — tar and zip listings.
Status checkArchiveMembers(const std::string& listing, const std::string& archive);

}  // namespace minik8s::slurm
