// SlurmJobController: gives each SlurmJob (slurm.minik8s.io/v1) a submitter of its own, a
// batch/v1 Job "<name>-submitter" whose pod runs `minik8s slurm-submitter` (src/slurm/
// submitter.h) with the Slurm credentials Secret, the cluster's shared directory and the job's
// sources mounted. The submitter does the Slurm side and writes the status; the controller:
//   - adds the scancel finalizer, so that a delete reaches Slurm before the object goes, and
//     removes it itself when nothing runs in Slurm any more (final phase, or no submitter left);
//   - creates the namespace's ServiceAccount, Role and RoleBinding slurm-submitter (the pod may
//     read and patch SlurmJobs and their status, nothing else);
//   - says Pending with the reason while the credentials Secret is missing;
//   - marks the SlurmJob Failed when its submitter Job fails (backoff limit);
//   - deletes a submitter Job whose SlurmJob is gone (the garbage collector does not follow
//     owner references to custom resources).
// sync(key) is level-triggered and idempotent. Thread-safe: workers sync one key at a time.
#pragma once

#include <string>

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct SlurmJobControllerOptions {
  int workers = 2;
  const client::Clock* clock = &client::RealClock::instance();
  client::EventRecorder* events = nullptr;  // source slurmjob-controller
  // The submitter's image; the registry of every cluster has it (images/slurm-submitter).
  std::string submitterImage = "minik8s/slurm-submitter:latest";
};

class SlurmJobController {
 public:
  // Registers handlers on the informers: construct before they start.
  SlurmJobController(client::RestClient& rest, client::Informer& slurmJobs, client::Informer& jobs,
                     SlurmJobControllerOptions options = {});
  ~SlurmJobController();
  void start();
  void stop();

  Status sync(const std::string& key);

 private:
  Status syncDeleted(const std::string& ns, const std::string& name);
  Status ensureSubmitterRbac(const std::string& ns);
  Status patchStatus(const json& sj, const json& status);
  void recordEvent(const json& sj, const std::string& type, const std::string& reason,
                   const std::string& message);

  client::RestClient& rest_;
  client::Informer& slurmJobs_;
  client::Informer& jobs_;
  SlurmJobControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

// The submitter Job of a SlurmJob: pod template, volumes (credentials Secret, `sharedDir` as a
// hostPath at the same path, the sources' ConfigMap), owner reference. Pure; for tests.
json submitterJob(const json& slurmJob, const std::string& sharedDir, const std::string& image);

}  // namespace minik8s::controllers
