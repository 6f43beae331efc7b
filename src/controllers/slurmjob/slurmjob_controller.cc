#include "controllers/slurmjob/slurmjob_controller.h"

#include "api/object_meta.h"
#include "common/base64.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/job/job_util.h"
#include "slurm/slurm_job.h"

namespace minik8s::controllers {

using api::nameOf;
using api::namespaceOf;
using api::stringAt;
using api::uidOf;

namespace {

using client::resources::kJobs;
const client::Resource kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
const client::Resource kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
constexpr char kSubmitter[] = "slurm-submitter";
constexpr char kCredentialsMount[] = "/etc/minik8s/slurm";
constexpr char kSourceMount[] = "/source";

std::string submitterJobName(const std::string& name) { return name + "-submitter"; }

Status ignoreExists(const Result<json>& r) {
  return r.ok() || r.status().code() == 409 ? Status() : r.status();
}

}  // namespace

json submitterJob(const json& sj, const std::string& sharedDir, const std::string& image) {
  const std::string name = nameOf(sj);
  auto spec = slurm::parseSlurmJobSpec(sj);
  const std::string secret =
      spec.ok() ? spec->credentialsSecret : std::string(slurm::kDefaultCredentialsSecret);
  const std::string source = spec.ok() ? spec->sourceConfigMap : "";
  json labels = {{slurm::kJobNameLabel, name}};
  json args = {"slurm-submitter", "--namespace",     namespaceOf(sj), "--name", name,
               "--credentials",   kCredentialsMount, "--shared-dir",  sharedDir};
  json mounts = {{{"name", "credentials"}, {"mountPath", kCredentialsMount}, {"readOnly", true}},
                 {{"name", "shared"}, {"mountPath", sharedDir}}};
  json volumes = {
      {{"name", "credentials"}, {"secret", {{"secretName", secret}, {"defaultMode", 0400}}}},
      {{"name", "shared"}, {"hostPath", {{"path", sharedDir}, {"type", "Directory"}}}}};
  if (!source.empty()) {
    args.push_back("--source-dir");
    args.push_back(kSourceMount);
    mounts.push_back({{"name", "source"}, {"mountPath", kSourceMount}, {"readOnly", true}});
    volumes.push_back({{"name", "source"}, {"configMap", {{"name", source}}}});
  }
  json container = {
      {"name", "submitter"},
      {"image", image},
      {"imagePullPolicy", "IfNotPresent"},
      {"args", args},
      {"env",
       {{{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}}},
      {"volumeMounts", mounts},
      {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}}}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", submitterJobName(name)},
            {"namespace", namespaceOf(sj)},
            {"labels", labels},
            {"ownerReferences", json::array({makeControllerRef(sj)})}}},
          {"spec",
           {{"backoffLimit", 4},
            {"template",
             {{"metadata", {{"labels", labels}}},
              {"spec",
               {{"restartPolicy", "OnFailure"},
                {"serviceAccountName", kSubmitter},
                {"terminationGracePeriodSeconds", 5},
                {"containers", json::array({container})},
                {"volumes", volumes}}}}}}}};
}

SlurmJobController::SlurmJobController(client::RestClient& rest, client::Informer& slurmJobs,
                                       client::Informer& jobs, SlurmJobControllerOptions options)
    : rest_(rest),
      slurmJobs_(slurmJobs),
      jobs_(jobs),
      options_(std::move(options)),
      queue_(*options_.clock),
      workers_(
          queue_, [this](const std::string& k) { return sync(k); }, "slurmjob") {
  auto enqueue = [this](const json& sj) { queue_.add(client::objectKey(sj)); };
  slurmJobs_.addHandlers(
      {enqueue, [enqueue](const json&, const json& sj) { enqueue(sj); }, enqueue});
  auto enqueueOwner = [this](const json& job) {
    std::string owner = api::labelValue(job, slurm::kJobNameLabel);
    if (!owner.empty()) queue_.add(namespaceOf(job) + "/" + owner);
  };
  jobs_.addHandlers({enqueueOwner, [enqueueOwner](const json&, const json& j) { enqueueOwner(j); },
                     enqueueOwner});
}

SlurmJobController::~SlurmJobController() { stop(); }
void SlurmJobController::start() { workers_.start(options_.workers); }
void SlurmJobController::stop() { workers_.stop(); }

void SlurmJobController::recordEvent(const json& sj, const std::string& type,
                                     const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  json involved = sj;
  involved["kind"] = "SlurmJob";
  involved["apiVersion"] = std::string(slurm::kGroup) + "/v1";
  options_.events->record(involved, type, reason, message);
}

Status SlurmJobController::patchStatus(const json& sj, const json& status) {
  auto r = rest_.patch(slurm::kSlurmJobs, namespaceOf(sj), nameOf(sj), {{"status", status}},
                       "merge", "status");
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

Status SlurmJobController::syncDeleted(const std::string& ns, const std::string& name) {
  auto job = jobs_.get(ns + "/" + submitterJobName(name));
  if (!job || api::labelValue(*job, slurm::kJobNameLabel) != name) return {};
  LOG_INFO("slurmjob controller: SlurmJob {}/{} is gone: deleting its submitter Job", ns, name);
  auto r = rest_.remove(kJobs, ns, nameOf(*job), {{"propagationPolicy", "Background"}});
  return r.ok() || r.status().code() == 404 ? Status() : r.status();
}

Status SlurmJobController::ensureSubmitterRbac(const std::string& ns) {
  const auto& res = client::resources::kServiceAccounts;
  Status s = ignoreExists(rest_.create(
      res, ns,
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", kSubmitter}}}}));
  if (!s.ok()) return s;
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "Role"},
               {"metadata", {{"name", kSubmitter}}},
               {"rules",
                {{{"apiGroups", {slurm::kGroup}},
                  {"resources", {"slurmjobs", "slurmjobs/status"}},
                  {"verbs", {"get", "list", "watch", "patch", "update"}}}}}};
  s = ignoreExists(rest_.create(kRoles, ns, role));
  if (!s.ok()) return s;
  json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", kSubmitter}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", kSubmitter}}},
      {"subjects", {{{"kind", "ServiceAccount"}, {"name", kSubmitter}, {"namespace", ns}}}}};
  return ignoreExists(rest_.create(kRoleBindings, ns, binding));
}

Status SlurmJobController::sync(const std::string& key) {
  const auto [ns, name] = client::splitObjectKey(key);
  auto cached = slurmJobs_.get(key);
  if (!cached) return syncDeleted(ns, name);
  const json& sj = *cached;
  const std::string phase = stringAt(sj, "/status/phase");
  auto job = jobs_.get(ns + "/" + submitterJobName(name));
  if (job) {
    auto ref = controllerRef(*job);
    if (!ref || ref->value("uid", "") != uidOf(sj)) job.reset();  // an older SlurmJob's
  }

  if (isTerminating(sj)) {
    if (!hasFinalizer(sj, slurm::kCancelFinalizer)) return syncDeleted(ns, name);
    // The submitter cancels a running job and removes the finalizer; with nothing in Slurm or
    // no submitter left to do it, the controller lets the object go.
    const bool nothingRuns = slurm::isFinalPhase(phase) ||
                             (stringAt(sj, "/status/jobId").empty() && !job) ||
                             (job && job::isJobFinished(*job));
    if (!nothingRuns) return {};
    json kept = json::array();
    for (const auto& f : valueAt(sj, "/metadata/finalizers", json::array())) {
      if (f != slurm::kCancelFinalizer) kept.push_back(f);
    }
    auto r = rest_.patch(
        slurm::kSlurmJobs, ns, name,
        {{"metadata",
          {{"finalizers", kept}, {"resourceVersion", stringAt(sj, "/metadata/resourceVersion")}}}});
    return r.ok() || r.status().code() == 404 ? Status() : r.status();
  }

  if (!hasFinalizer(sj, slurm::kCancelFinalizer)) {
    json finalizers = valueAt(sj, "/metadata/finalizers", json::array());
    finalizers.push_back(slurm::kCancelFinalizer);
    auto r = rest_.patch(slurm::kSlurmJobs, ns, name,
                         {{"metadata",
                           {{"finalizers", finalizers},
                            {"resourceVersion", stringAt(sj, "/metadata/resourceVersion")}}}});
    return r.ok() || r.status().code() == 404 ? Status() : r.status();  // the update requeues
  }
  if (slurm::isFinalPhase(phase)) return {};

  auto spec = slurm::parseSlurmJobSpec(sj);
  if (!spec.ok()) {
    return patchStatus(sj, {{"phase", "Failed"},
                            {"reason", "InvalidSpec"},
                            {"message", spec.status().message()},
                            {"completionTime", formatRfc3339(Clock::now())}});
  }

  if (job) {
    if (const json* failed = job::trueCondition(*job, "Failed")) {
      std::string message = "the submitter Job " + nameOf(*job) +
                            " failed: " + failed->value("message", failed->value("reason", ""));
      recordEvent(sj, "Warning", "SubmitterFailed", message);
      return patchStatus(sj, {{"phase", "Failed"},
                              {"reason", "SubmitterFailed"},
                              {"message", message},
                              {"completionTime", formatRfc3339(Clock::now())}});
    }
    return {};
  }

  // No submitter yet: the credentials first (the pod could not start without them).
  auto secret = rest_.get(client::resources::kSecrets, ns, spec->credentialsSecret);
  if (!secret.ok()) {
    if (secret.status().code() != 404) return secret.status();
    std::string message = "Secret " + spec->credentialsSecret +
                          " (munge.key, slurm.conf, shared-dir) not found in namespace " + ns +
                          "; scripts/slurm.sh up prints how to create it";
    if (stringAt(sj, "/status/reason") != "CredentialsMissing") {
      recordEvent(sj, "Warning", "CredentialsMissing", message);
      Status s = patchStatus(
          sj, {{"phase", "Pending"}, {"reason", "CredentialsMissing"}, {"message", message}});
      if (!s.ok()) return s;
    }
    queue_.addAfter(key, std::chrono::seconds(5));
    return {};
  }
  auto sharedB64 = valueAt(*secret, "/data/shared-dir", std::string());
  auto shared = base64::decode(sharedB64);
  if (!shared.ok() || shared->empty() || (*shared)[0] != '/') {
    std::string message = "Secret " + spec->credentialsSecret +
                          ": data[shared-dir] must be the absolute path of the Slurm cluster's "
                          "shared directory";
    return patchStatus(
        sj, {{"phase", "Failed"}, {"reason", "InvalidCredentials"}, {"message", message}});
  }
  std::string sharedDir = *shared;
  while (sharedDir.size() > 1 && (sharedDir.back() == '\n' || sharedDir.back() == '/')) {
    sharedDir.pop_back();
  }

  Status s = ensureSubmitterRbac(ns);
  if (!s.ok()) return s;
  auto created = rest_.create(kJobs, ns, submitterJob(sj, sharedDir, options_.submitterImage));
  if (!created.ok() && created.status().code() != 409) return created.status();
  if (created.ok()) {
    recordEvent(sj, "Normal", "SubmitterCreated",
                "created Job " + submitterJobName(name) + " to submit and follow the job");
  }
  if (phase.empty() || stringAt(sj, "/status/reason") == "CredentialsMissing") {
    return patchStatus(sj, {{"phase", "Pending"},
                            {"reason", "SubmitterStarting"},
                            {"message", "waiting for the submitter pod to run sbatch"}});
  }
  return {};
}

}  // namespace minik8s::controllers
