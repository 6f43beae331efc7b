#include "slurm/submitter.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/command.h"
#include "common/file_util.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/random.h"
#include "common/strings.h"
#include "common/time_util.h"

namespace minik8s::slurm {

namespace fs = std::filesystem;

namespace {

class RestSlurmJobApi : public SlurmJobApi {
 public:
  RestSlurmJobApi(client::RestClient& rest, std::string ns, std::string name)
      : rest_(rest), ns_(std::move(ns)), name_(std::move(name)) {}

  Result<json> get() override { return rest_.get(kSlurmJobs, ns_, name_); }

  Status patchStatus(const json& status) override {
    auto r = rest_.patch(kSlurmJobs, ns_, name_, {{"status", status}}, "merge", "status");
    return r.ok() ? Status() : r.status();
  }

  Status removeFinalizer(const std::string& finalizer) override {
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto obj = rest_.get(kSlurmJobs, ns_, name_);
      if (!obj.ok()) return obj.status().code() == 404 ? Status() : obj.status();
      json kept = json::array();
      bool had = false;
      for (const auto& f : valueAt(*obj, "/metadata/finalizers", json::array())) {
        if (f == finalizer) {
          had = true;
        } else {
          kept.push_back(f);
        }
      }
      if (!had) return {};
      // The resourceVersion makes the patch conditional: a concurrent change is a 409, retried.
      json patch = {{"metadata",
                     {{"finalizers", kept},
                      {"resourceVersion", (*obj)["metadata"].value("resourceVersion", "")}}}};
      auto r = rest_.patch(kSlurmJobs, ns_, name_, patch, "merge");
      if (r.ok() || r.status().code() == 404) return {};
      if (r.status().code() != 409) return r.status();
    }
    return Status::ConflictMessage("cannot remove finalizer " + finalizer + ": conflicts");
  }

 private:
  client::RestClient& rest_;
  std::string ns_, name_;
};

std::string nowRfc3339() { return formatRfc3339(Clock::now()); }

Status writeText(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::Internal("cannot write " + path);
  ::chmod(path.c_str(), mode);
  return {};
}

std::string str(const json& obj, const char* pointer) {
  return obj.value(json::json_pointer(pointer), std::string());
}

class FileSlurmJobApi : public SlurmJobApi {
 public:
  FileSlurmJobApi(json obj, std::string statusFile)
      : obj_(std::move(obj)), statusFile_(std::move(statusFile)) {}

  Result<json> get() override { return obj_; }

  Status patchStatus(const json& status) override {
    if (!obj_.contains("status") || !obj_["status"].is_object()) obj_["status"] = json::object();
    obj_["status"].merge_patch(status);
    if (statusFile_.empty()) return {};
    // Whole or not at all: a reader never sees half a status.
    const std::string tmp = statusFile_ + ".tmp";
    Status s = writeText(tmp, obj_.dump(2) + "\n", 0644);
    if (!s.ok()) return s;
    if (::rename(tmp.c_str(), statusFile_.c_str()) != 0) {
      return Status::Internal("cannot write " + statusFile_);
    }
    return {};
  }

  Status removeFinalizer(const std::string&) override { return {}; }

 private:
  json obj_;
  std::string statusFile_;
};

}  // namespace

std::unique_ptr<SlurmJobApi> restSlurmJobApi(client::RestClient& rest, std::string ns,
                                             std::string name) {
  return std::make_unique<RestSlurmJobApi>(rest, std::move(ns), std::move(name));
}

std::unique_ptr<SlurmJobApi> fileSlurmJobApi(json slurmJob, std::string statusFile) {
  json& meta = slurmJob["metadata"];
  if (!meta.is_object()) meta = json::object();
  if (meta.value("namespace", "").empty()) meta["namespace"] = "default";
  if (meta.value("uid", "").empty()) meta["uid"] = newUid();
  return std::make_unique<FileSlurmJobApi>(std::move(slurmJob), std::move(statusFile));
}

std::string lastLines(const std::string& text, size_t lines) {
  if (lines == 0) return "";
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;  // a final newline does not start a line
  size_t pos = end;
  size_t seen = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++seen == lines) break;
    --pos;
  }
  return text.substr(pos);
}

Status checkArchiveMembers(const std::string& listing, const std::string& archive) {
  for (const auto& name : splitNonEmpty(listing, '\n')) {
    bool escapes = !name.empty() && name[0] == '/';
    for (const auto& part : splitNonEmpty(name, '/')) escapes = escapes || part == "..";
    if (escapes) {
      return Status::BadRequest(fmt::format(
          "{}: member \"{}\" would be written outside the job's directory", archive, name));
    }
  }
  return {};
}

Submitter::Submitter(SlurmJobApi& api, SlurmCli& slurm, SubmitterOptions options,
                     std::ostream& output)
    : api_(api), slurm_(slurm), options_(std::move(options)), output_(output) {}

Status Submitter::run(const std::atomic<bool>& stop) {
  while (!stop) {
    auto done = step();
    if (done.ok() && *done) return {};
    if (!done.ok()) LOG_WARN("slurm submitter: {} (retrying)", done.status().toString());
    std::this_thread::sleep_for(options_.pollInterval);
  }
  return Status::Unavailable("stopped");
}

json Submitter::conditions(const json& obj, const std::string& type, const std::string& reason,
                           const std::string& message) const {
  json out = json::array();
  for (const auto& c : valueAt(obj, "/status/conditions", json::array())) {
    if (c.value("type", "") != type) out.push_back(c);
  }
  out.push_back({{"type", type},
                 {"status", "True"},
                 {"reason", reason},
                 {"message", message},
                 {"lastTransitionTime", nowRfc3339()}});
  return out;
}

Result<bool> Submitter::step() {
  auto obj = api_.get();
  if (!obj.ok()) {
    if (obj.status().code() == 404) return true;  // deleted (and, if it ran, cancelled)
    return obj.status();
  }
  const std::string uid = str(*obj, "/metadata/uid");
  const std::string ns = str(*obj, "/metadata/namespace");
  const std::string name = str(*obj, "/metadata/name");
  if (jobDir_.empty()) jobDir_ = jobDirectory(options_.sharedDir, ns, name, uid);

  if (obj->contains("/metadata/deletionTimestamp"_json_pointer)) return cancelForDeletion(*obj);
  const std::string phase = str(*obj, "/status/phase");
  if (isFinalPhase(phase)) {
    // Over before this submitter started (its predecessor wrote the end): the pod's log still
    // gets the whole output.
    if (outputFile_.empty()) {
      auto spec = parseSlurmJobSpec(*obj);
      outputFile_ = outputPath(spec.ok() ? spec->slurm : SbatchOptions{}, jobDir_);
    }
    copyNewOutput();
    return true;
  }
  std::string jobId = str(*obj, "/status/jobId");
  // Submitted (or adopted) now: the next step follows it with the status just written.
  if (jobId.empty()) return submitOrAdopt(*obj, uid, jobId);
  return follow(*obj, jobId);
}

Result<bool> Submitter::submitOrAdopt(const json& obj, const std::string& uid, std::string& jobId) {
  auto spec = parseSlurmJobSpec(obj);
  auto fail = [&](const std::string& reason, const std::string& message) -> Result<bool> {
    LOG_WARN("slurm submitter: {}: {}", reason, message);
    json status = {{"phase", "Failed"},
                   {"reason", reason},
                   {"message", message},
                   {"completionTime", nowRfc3339()},
                   {"conditions", conditions(obj, "Failed", reason, message)}};
    Status s = api_.patchStatus(status);
    if (!s.ok()) return s;
    return true;
  };
  if (!spec.ok()) return fail("InvalidSpec", spec.status().message());
  auto found = slurm_.findByComment(jobComment(uid));
  if (!found.ok()) return found.status();
  if (found->has_value()) {
    jobId = **found;
    LOG_INFO("slurm submitter: adopting Slurm job {} submitted earlier", jobId);
  } else {
    Status staged = stage(obj, *spec, jobDir_);
    if (!staged.ok()) {
      if (staged.code() == 400) return fail("SourceRefused", staged.message());
      return staged;
    }
    auto id = slurm_.submit(jobDir_ + "/job.sh");
    if (!id.ok()) {
      if (id.status().code() == 400) return fail("SubmitRefused", id.status().message());
      return id.status();
    }
    jobId = *id;
    LOG_INFO("slurm submitter: sbatch accepted the job: Slurm job {}", jobId);
  }
  // Recorded before anything else happens: a restart from here on follows this job.
  json status = {{"phase", "Submitted"},
                 {"jobId", jobId},
                 {"jobDirectory", jobDir_},
                 {"submitter", options_.podName},
                 {"submitTime", nowRfc3339()},
                 {"reason", "Submitted"},
                 {"message", "sbatch accepted the job as Slurm job " + jobId},
                 {"conditions", conditions(obj, "Submitted", "Submitted",
                                           "sbatch accepted the job as Slurm job " + jobId)}};
  Status s = api_.patchStatus(status);
  if (!s.ok()) return s;
  phasePublished_ = "Submitted";
  return false;
}

Status Submitter::stage(const json& obj, const SlurmJobSpec& spec, const std::string& jobDir) {
  std::error_code ec;
  fs::remove_all(jobDir, ec);  // a half-staged directory from a submitter that never submitted
  fs::create_directories(jobDir + "/src", ec);
  if (ec) return Status::Internal(fmt::format("cannot create {}: {}", jobDir, ec.message()));
  if (!options_.sourceDir.empty()) {
    for (const auto& entry : fs::directory_iterator(options_.sourceDir, ec)) {
      const std::string file = entry.path().filename().string();
      // A ConfigMap volume's own bookkeeping (..data, ..2026_...) is not the user's.
      if (file.rfind("..", 0) == 0 || !fs::is_regular_file(entry.path())) continue;
      const std::string from = entry.path().string();
      if (file == "source.tar.gz" || file == "source.tgz") {
        auto listing = runChecked({"tar", "-tzf", from});
        if (!listing.ok())
          return Status::BadRequest("source.tar.gz: " + listing.status().message());
        Status members = checkArchiveMembers(*listing, file);
        if (!members.ok()) return members;
        auto x = runChecked({"tar", "-xzf", from, "-C", jobDir + "/src"});
        if (!x.ok()) return Status::BadRequest("source.tar.gz: " + x.status().message());
      } else if (file == "source.zip") {
        auto x = runChecked({"unzip", "-o", "-q", from, "-d", jobDir + "/src"});
        if (!x.ok()) return Status::BadRequest("source.zip: " + x.status().message());
      } else {
        fs::copy_file(from, jobDir + "/src/" + file, fs::copy_options::overwrite_existing, ec);
        if (ec) return Status::Internal(fmt::format("cannot copy {}: {}", file, ec.message()));
      }
    }
    if (ec)
      return Status::Internal(fmt::format("cannot read {}: {}", options_.sourceDir, ec.message()));
  }
  const std::string ns = str(obj, "/metadata/namespace");
  const std::string name = str(obj, "/metadata/name");
  const std::string jobName =
      spec.slurm.jobName.empty() ? defaultJobName(ns, name) : spec.slurm.jobName;
  const bool hasBuild = !spec.build.empty();
  if (hasBuild) {
    Status s = writeText(jobDir + "/build.sh", "set -e\n" + spec.build + "\n", 0755);
    if (!s.ok()) return s;
  }
  Status s = writeText(jobDir + "/run.sh", spec.run + "\n", 0755);
  if (!s.ok()) return s;
  return writeText(
      jobDir + "/job.sh",
      batchScript(spec.slurm, jobDir, jobName, jobComment(str(obj, "/metadata/uid")), hasBuild),
      0755);
}

void Submitter::copyNewOutput() {
  if (outputFile_.empty()) return;
  std::ifstream in(outputFile_, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(outputOffset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (chunk.empty()) return;
  outputOffset_ += chunk.size();
  output_ << chunk << std::flush;
  tail_ = lastLines(tail_ + chunk, options_.tailLines);
}

Result<bool> Submitter::follow(const json& obj, const std::string& jobId) {
  if (outputFile_.empty()) {
    auto spec = parseSlurmJobSpec(obj);
    outputFile_ = outputPath(spec.ok() ? spec->slurm : SbatchOptions{}, jobDir_);
  }
  auto info = slurm_.show(jobId);
  if (!info.ok()) {
    if (info.status().code() != 404) return info.status();
    // slurmctld forgot the job (MinJobAge passed while no submitter ran): the end is unknown.
    SlurmJobInfo lost;
    lost.id = jobId;
    lost.state = "UNKNOWN";
    Status s = finish(obj, lost, "Failed");
    if (!s.ok()) return s;
    return true;
  }
  copyNewOutput();
  const std::string phase = phaseForSlurmState(info->state);
  if (isFinalPhase(phase)) {
    Status s = finish(obj, *info, phase);
    if (!s.ok()) return s;
    return true;
  }
  const auto now = std::chrono::steady_clock::now();
  const bool tailDue = tail_ != tailPublished_ && now - tailPublishedAt_ >= options_.tailInterval;
  // A submitter that took over (its predecessor was killed) says so: `minik8s job output` reads
  // the log of status.submitter.
  const bool takenOver = str(obj, "/status/submitter") != options_.podName;
  if (phase == phasePublished_ && !tailDue && !takenOver) return false;
  json status = {{"phase", phase}, {"slurmState", info->state}};
  if (takenOver) status["submitter"] = options_.podName;
  if (phase != phasePublished_) {
    status["reason"] = phase == "Running" ? "Running" : info->reason;
    status["message"] = phase == "Running" ? "running on " + info->nodeList
                                           : "pending in the Slurm queue: " + info->reason;
  }
  if (!info->startTime.empty() && phase == "Running") {
    status["startTime"] = slurmTimeToRfc3339(info->startTime);
  }
  if (tailDue) status["outputTail"] = tail_;
  if (phase == "Running" && phasePublished_ != "Running") {
    status["conditions"] = conditions(obj, "Running", "Running", "running on " + info->nodeList);
  }
  Status s = api_.patchStatus(status);
  if (!s.ok()) return s;
  phasePublished_ = phase;
  if (tailDue) {
    tailPublished_ = tail_;
    tailPublishedAt_ = now;
  }
  return false;
}

Status Submitter::finish(const json& obj, const SlurmJobInfo& info, const std::string& phase) {
  std::string reason, message;
  int exitCode = info.exitCode;
  const std::string base = info.state.substr(0, info.state.find(' '));
  auto buildRc = readFile(jobDir_ + "/build.rc");
  const bool buildFailed = exitCode == kBuildFailedExit && buildRc.ok() &&
                           buildRc->find_first_not_of("0\n") != std::string::npos;
  if (phase == "Succeeded") {
    reason = "Completed";
    message = "the program exited with code 0";
  } else if (phase == "Cancelled") {
    reason = "Cancelled";
    message = "the Slurm job was cancelled";
  } else if (buildFailed) {
    reason = "BuildFailed";
    auto log = readFile(jobDir_ + "/build.log");
    std::string rc = *buildRc;
    while (!rc.empty() && rc.back() == '\n') rc.pop_back();
    exitCode = std::atoi(rc.c_str());
    message = fmt::format("the build failed with exit code {}: {}", rc,
                          log.ok() ? lastLines(*log, 10) : "(no build.log)");
  } else if (base == "TIMEOUT") {
    reason = "TimeLimitExceeded";
    message = "Slurm ended the job at its time limit";
  } else if (base == "OUT_OF_MEMORY") {
    reason = "OutOfMemory";
    message = "Slurm ended the job: it used more memory than it asked for";
  } else if (base == "FAILED") {
    reason = "NonZeroExitCode";
    message = info.exitSignal != 0
                  ? fmt::format("the program was killed by signal {}", info.exitSignal)
                  : fmt::format("the program exited with code {}", exitCode);
  } else if (base == "UNKNOWN") {
    reason = "Lost";
    message = "slurmctld no longer knows Slurm job " + info.id + "; its end is unknown";
  } else {
    reason = base;
    message = "Slurm ended the job in state " + info.state +
              (info.reason.empty() || info.reason == "None" ? "" : " (" + info.reason + ")");
  }
  json status = {
      {"phase", phase},
      {"slurmState", info.state},
      {"exitCode", exitCode},
      {"reason", reason},
      {"message", message},
      {"outputTail", tail_},
      {"submitter", options_.podName},
      {"completionTime", info.endTime.empty() ? nowRfc3339() : slurmTimeToRfc3339(info.endTime)}};
  if (!info.startTime.empty()) status["startTime"] = slurmTimeToRfc3339(info.startTime);
  const std::string type = phase == "Succeeded"   ? "Complete"
                           : phase == "Cancelled" ? "Cancelled"
                                                  : "Failed";
  status["conditions"] = conditions(obj, type, reason, message);
  LOG_INFO("slurm submitter: Slurm job {} ended: {} ({}: {})", info.id, phase, reason, message);
  return api_.patchStatus(status);
}

Result<bool> Submitter::cancelForDeletion(const json& obj) {
  std::string jobId = str(obj, "/status/jobId");
  if (jobId.empty()) {
    auto found = slurm_.findByComment(jobComment(str(obj, "/metadata/uid")));
    if (!found.ok()) return found.status();
    if (found->has_value()) jobId = **found;
  }
  if (!jobId.empty() && !isFinalPhase(str(obj, "/status/phase"))) {
    Status s = slurm_.cancel(jobId);
    if (!s.ok()) return s;
    LOG_INFO("slurm submitter: SlurmJob deleted: scancel {}", jobId);
    api_.patchStatus({{"phase", "Cancelled"},
                      {"reason", "Deleted"},
                      {"message", "the SlurmJob was deleted: scancel " + jobId},
                      {"completionTime", nowRfc3339()}});
  }
  Status s = api_.removeFinalizer(kCancelFinalizer);
  if (!s.ok()) return s;
  return true;
}

}  // namespace minik8s::slurm
