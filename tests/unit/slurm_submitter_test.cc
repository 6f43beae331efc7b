// The submitter against a fake Slurm and a fake API: submit once, follow, the end's reason,
// restarts that never submit twice, deletion cancels.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/command.h"
#include "common/file_util.h"
#include "slurm/submitter.h"

namespace minik8s::slurm {
namespace {

namespace fs = std::filesystem;

class FakeApi : public SlurmJobApi {
 public:
  json obj;
  int failPatches = 0;  // the next N status patches fail (Unavailable)
  Result<json> get() override {
    if (obj.is_null()) return Status::NotFound("slurmjobs", "mm");
    return obj;
  }
  Status patchStatus(const json& status) override {
    if (failPatches > 0) {
      --failPatches;
      return Status::Unavailable("cannot connect to the API server");
    }
    if (!obj.contains("status")) obj["status"] = json::object();
    obj["status"].merge_patch(status);
    return {};
  }
  Status removeFinalizer(const std::string& f) override {
    json kept = json::array();
    for (const auto& x : obj["metadata"].value("finalizers", json::array())) {
      if (x != f) kept.push_back(x);
    }
    obj["metadata"]["finalizers"] = kept;
    return {};
  }
  std::string status(const char* key) const {
    return obj.value(json::json_pointer("/status/" + std::string(key)), std::string());
  }
};

class FakeSlurm : public SlurmCli {
 public:
  struct Job {
    SlurmJobInfo info;
    std::string script;
  };
  std::map<std::string, Job> jobs;
  int submits = 0;
  int nextId = 100;
  Status submitError;
  bool unreachable = false;
  std::vector<std::string> cancelled;

  Result<std::string> submit(const std::string& scriptPath) override {
    if (unreachable) return Status::Unavailable("Unable to contact slurm controller");
    if (!submitError.ok()) return submitError;
    ++submits;
    auto script = readFile(scriptPath);
    std::string id = std::to_string(nextId++);
    Job j;
    j.info.id = id;
    j.info.state = "PENDING";
    j.info.reason = "Priority";
    auto c = script->find("--comment=");
    j.info.comment = script->substr(c + 10, script->find('\n', c) - c - 10);
    j.script = *script;
    jobs[id] = j;
    return id;
  }
  Result<SlurmJobInfo> show(const std::string& id) override {
    if (unreachable) return Status::Unavailable("Unable to contact slurm controller");
    auto it = jobs.find(id);
    if (it == jobs.end()) return Status::NotFoundMessage("no job " + id);
    return it->second.info;
  }
  Result<std::optional<std::string>> findByComment(const std::string& comment) override {
    if (unreachable) return Status::Unavailable("Unable to contact slurm controller");
    for (const auto& [id, j] : jobs) {
      if (j.info.comment == comment) return std::optional<std::string>(id);
    }
    return std::optional<std::string>();
  }
  Status cancel(const std::string& id) override {
    cancelled.push_back(id);
    jobs[id].info.state = "CANCELLED";
    return {};
  }
  void set(const std::string& id, const std::string& state, int exit = 0) {
    jobs[id].info.state = state;
    jobs[id].info.exitCode = exit;
    jobs[id].info.nodeList = "host1";
    if (state != "PENDING") jobs[id].info.startTime = "2026-11-26T05:00:01";
  }
};

class SubmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("slurm-submitter-test-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "shared");
    fs::create_directories(root / "source");
    std::ofstream(root / "source" / "main.cc") << "int main() { return 0; }\n";
    fs::create_directories(root / "source" / "..data");  // a ConfigMap volume's own entry
    api.obj = {{"metadata",
                {{"name", "mm"},
                 {"namespace", "hpc"},
                 {"uid", "0123456789abcdef"},
                 {"finalizers", {kCancelFinalizer}}}},
               {"spec",
                {{"build", "g++ -o main main.cc"},
                 {"run", "./main"},
                 {"source", {{"configMap", "mm-source"}}}}}};
    options.sharedDir = (root / "shared").string();
    options.sourceDir = (root / "source").string();
    options.podName = "mm-submitter-x1";
    options.tailInterval = std::chrono::milliseconds(0);
  }
  void TearDown() override { fs::remove_all(root); }

  std::string jobDir() const { return (root / "shared/minik8s/hpc/mm-01234567").string(); }
  bool step(Submitter& s) {
    auto r = s.step();
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() && *r;
  }

  fs::path root;
  FakeApi api;
  FakeSlurm slurm;
  SubmitterOptions options;
  std::ostringstream out;
};

TEST_F(SubmitterTest, SubmitsOnceFollowsAndCopiesTheOutput) {
  Submitter s(api, slurm, options, out);
  EXPECT_FALSE(step(s));
  EXPECT_EQ(slurm.submits, 1);
  EXPECT_EQ(api.status("phase"), "Submitted");
  EXPECT_EQ(api.status("jobId"), "100");
  EXPECT_EQ(api.status("submitter"), "mm-submitter-x1");
  EXPECT_EQ(api.status("jobDirectory"), jobDir());
  // Staged: the sources (not the volume's ..data), the user's commands, the script.
  EXPECT_TRUE(fs::exists(jobDir() + "/src/main.cc"));
  EXPECT_FALSE(fs::exists(jobDir() + "/src/..data"));
  EXPECT_EQ(*readFile(jobDir() + "/build.sh"), "set -e\ng++ -o main main.cc\n");
  EXPECT_EQ(*readFile(jobDir() + "/run.sh"), "./main\n");
  EXPECT_NE(slurm.jobs["100"].script.find("#SBATCH --comment=minik8s-uid=0123456789abcdef"),
            std::string::npos);

  EXPECT_FALSE(step(s));  // still pending
  EXPECT_EQ(api.status("phase"), "Submitted");
  slurm.set("100", "RUNNING");
  std::ofstream(jobDir() + "/output.log") << "== run\nline 1\n";
  EXPECT_FALSE(step(s));
  EXPECT_EQ(api.status("phase"), "Running");
  EXPECT_EQ(api.status("outputTail"), "== run\nline 1\n");
  std::ofstream(jobDir() + "/output.log", std::ios::app) << "line 2\n";
  slurm.set("100", "COMPLETED");
  EXPECT_TRUE(step(s));
  EXPECT_EQ(api.status("phase"), "Succeeded");
  EXPECT_EQ(api.status("reason"), "Completed");
  EXPECT_EQ(api.obj["status"]["exitCode"], 0);
  EXPECT_EQ(out.str(), "== run\nline 1\nline 2\n");  // each byte once
  EXPECT_EQ(api.obj["status"]["conditions"].back()["type"], "Complete");
  EXPECT_EQ(slurm.submits, 1);
}

TEST_F(SubmitterTest, ARestartedSubmitterFollowsTheRecordedJob) {
  {
    Submitter first(api, slurm, options, out);
    EXPECT_FALSE(step(first));
  }
  slurm.set("100", "RUNNING");
  options.podName = "mm-submitter-x2";
  Submitter second(api, slurm, options, out);
  EXPECT_FALSE(step(second));
  EXPECT_EQ(slurm.submits, 1);
  EXPECT_EQ(api.status("phase"), "Running");
  EXPECT_EQ(api.status("submitter"), "mm-submitter-x2");  // `job output` reads its log

  // A third one starting after the end still copies the whole output to its log.
  std::ofstream(jobDir() + "/output.log") << "all of it\n";
  slurm.set("100", "COMPLETED");
  EXPECT_TRUE(step(second));
  std::ostringstream thirdLog;
  Submitter third(api, slurm, options, thirdLog);
  EXPECT_TRUE(step(third));
  EXPECT_EQ(thirdLog.str(), "all of it\n");
}

TEST_F(SubmitterTest, KilledBetweenSbatchAndTheStatusWriteAdoptsItsJob) {
  api.failPatches = 1;  // sbatch answered, the status write did not land
  {
    Submitter first(api, slurm, options, out);
    EXPECT_FALSE(first.step().ok());
  }
  EXPECT_EQ(slurm.submits, 1);
  EXPECT_EQ(api.status("jobId"), "");
  Submitter second(api, slurm, options, out);
  EXPECT_FALSE(step(second));
  EXPECT_EQ(slurm.submits, 1);  // found by its comment, not submitted again
  EXPECT_EQ(api.status("jobId"), "100");
}

TEST_F(SubmitterTest, SlurmUnreachableIsRetriedNotFailed) {
  slurm.unreachable = true;
  Submitter s(api, slurm, options, out);
  auto r = s.step();
  EXPECT_EQ(r.status().code(), 503);
  EXPECT_EQ(api.status("phase"), "");
  slurm.unreachable = false;
  EXPECT_FALSE(step(s));
  EXPECT_EQ(api.status("phase"), "Submitted");
}

TEST_F(SubmitterTest, RefusedAtSubmitIsFailedWithSlurmsWords) {
  slurm.submitError = Status::BadRequest(
      "sbatch: error: Batch job submission failed: Invalid partition name specified");
  Submitter s(api, slurm, options, out);
  EXPECT_TRUE(step(s));
  EXPECT_EQ(api.status("phase"), "Failed");
  EXPECT_EQ(api.status("reason"), "SubmitRefused");
  EXPECT_NE(api.status("message").find("Invalid partition name"), std::string::npos);
}

TEST_F(SubmitterTest, AFailedBuildSaysSoWithTheCompilersWords) {
  Submitter s(api, slurm, options, out);
  EXPECT_FALSE(step(s));
  std::ofstream(jobDir() + "/build.rc") << "1\n";
  std::ofstream(jobDir() + "/build.log") << "main.cc:1:1: error: expected ';'\n";
  slurm.set("100", "FAILED", kBuildFailedExit);
  EXPECT_TRUE(step(s));
  EXPECT_EQ(api.status("phase"), "Failed");
  EXPECT_EQ(api.status("reason"), "BuildFailed");
  EXPECT_EQ(api.obj["status"]["exitCode"], 1);
  EXPECT_NE(api.status("message").find("error: expected ';'"), std::string::npos);
}

TEST_F(SubmitterTest, ExitCodesAndTimeLimits) {
  Submitter s(api, slurm, options, out);
  EXPECT_FALSE(step(s));
  slurm.set("100", "FAILED", 3);
  EXPECT_TRUE(step(s));
  EXPECT_EQ(api.status("reason"), "NonZeroExitCode");
  EXPECT_EQ(api.obj["status"]["exitCode"], 3);

  api.obj["status"] = json::object();
  slurm.jobs.clear();
  Submitter t(api, slurm, options, out);
  EXPECT_FALSE(step(t));
  slurm.set("101", "TIMEOUT");
  EXPECT_TRUE(step(t));
  EXPECT_EQ(api.status("phase"), "Failed");
  EXPECT_EQ(api.status("reason"), "TimeLimitExceeded");
}

TEST_F(SubmitterTest, DeletionCancelsTheRunningJobThenLetsGo) {
  Submitter s(api, slurm, options, out);
  EXPECT_FALSE(step(s));
  slurm.set("100", "RUNNING");
  api.obj["metadata"]["deletionTimestamp"] = "2026-11-26T05:00:00Z";
  EXPECT_TRUE(step(s));
  EXPECT_EQ(slurm.cancelled, std::vector<std::string>{"100"});
  EXPECT_EQ(api.status("phase"), "Cancelled");
  EXPECT_EQ(api.obj["metadata"]["finalizers"], json::array());
}

TEST_F(SubmitterTest, AnArchiveThatEscapesIsRefused) {
  fs::remove(root / "source" / "main.cc");
  fs::create_directories(root / "evil/a");
  std::ofstream(root / "evil/x") << "x";
  // A member named ../x, made with tar's -P from inside a subdirectory.
  auto tar = runProgram({"tar", "-C", (root / "evil/a").string(), "-P", "-czf",
                         (root / "source" / "source.tar.gz").string(), "../x"});
  ASSERT_TRUE(tar.ok() && tar->exitCode == 0) << (tar.ok() ? tar->output : "");
  Submitter s(api, slurm, options, out);
  EXPECT_TRUE(step(s));
  EXPECT_EQ(api.status("phase"), "Failed");
  EXPECT_EQ(api.status("reason"), "SourceRefused");
  EXPECT_EQ(slurm.submits, 0);
}

TEST_F(SubmitterTest, ADirectoryArchiveIsUnpacked) {
  fs::remove(root / "source" / "main.cc");
  fs::create_directories(root / "dir/lib");
  std::ofstream(root / "dir/lib/x.h") << "#pragma once\n";
  auto tar = runProgram({"tar", "-C", (root / "dir").string(), "-czf",
                         (root / "source" / "source.tar.gz").string(), "."});
  ASSERT_TRUE(tar.ok() && tar->exitCode == 0);
  Submitter s(api, slurm, options, out);
  EXPECT_FALSE(step(s));
  EXPECT_TRUE(fs::exists(jobDir() + "/src/lib/x.h"));
}

TEST_F(SubmitterTest, AFileSlurmJobGetsANamespaceAUidAndItsStatusWrittenWhole) {
  json obj = api.obj;
  obj["metadata"].erase("namespace");
  obj["metadata"].erase("uid");
  const std::string statusFile = (root / "status.json").string();
  auto fileApi = fileSlurmJobApi(obj, statusFile);
  auto got = fileApi->get();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"]["namespace"], "default");
  const std::string uid = (*got)["metadata"]["uid"];
  EXPECT_EQ(uid.size(), 36u);
  EXPECT_FALSE(fs::exists(statusFile));  // nothing written before the first status

  Submitter s(*fileApi, slurm, options, out);
  EXPECT_FALSE(step(s));
  EXPECT_NE(slurm.jobs["100"].script.find("#SBATCH --comment=minik8s-uid=" + uid),
            std::string::npos);
  slurm.set("100", "COMPLETED");
  EXPECT_TRUE(step(s));
  auto written = readFile(statusFile);
  ASSERT_TRUE(written.ok());
  json w = json::parse(*written);
  EXPECT_EQ(w["status"]["phase"], "Succeeded");
  EXPECT_EQ(w["status"]["jobId"], "100");
  EXPECT_EQ(w["metadata"]["uid"], uid);
  EXPECT_FALSE(fs::exists(statusFile + ".tmp"));
  EXPECT_EQ(fileApi->get()->value("/status/phase"_json_pointer, ""), "Succeeded");
  EXPECT_TRUE(fileApi->removeFinalizer(kCancelFinalizer).ok());
}

}  // namespace
}  // namespace minik8s::slurm
