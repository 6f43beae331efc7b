// The SlurmJob kind's pure parts: spec reading, the batch script, scontrol parsing, state
// mapping, the CRD, and the submitter Job the controller creates.
#include "slurm/slurm_job.h"

#include <gtest/gtest.h>

#include "controllers/slurmjob/slurmjob_controller.h"
#include "slurm/submitter.h"

namespace minik8s::slurm {
namespace {

json job(const json& spec) {
  return {{"apiVersion", "slurm.minik8s.io/v1"},
          {"kind", "SlurmJob"},
          {"metadata", {{"name", "mm"}, {"namespace", "hpc"}, {"uid", "0123456789abcdef"}}},
          {"spec", spec}};
}

TEST(SlurmJobSpec, ReadsEverySbatchField) {
  auto spec = parseSlurmJobSpec(job({{"slurm",
                                      {{"partition", "gpu"},
                                       {"nodes", 2},
                                       {"ntasks", 4},
                                       {"cpusPerTask", 8},
                                       {"gpus", 1},
                                       {"gres", "gpu:h100:1"},
                                       {"memory", "4G"},
                                       {"time", "00:10:00"},
                                       {"jobName", "matmul"},
                                       {"output", "out.txt"},
                                       {"error", "err.txt"},
                                       {"extraOptions", {"--exclusive"}}}},
                                     {"source", {{"configMap", "mm-source"}}},
                                     {"build", "make"},
                                     {"run", "./matmul 1024"},
                                     {"credentialsSecret", "hpc-login"}}));
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->slurm.partition, "gpu");
  EXPECT_EQ(spec->slurm.nodes, 2);
  EXPECT_EQ(spec->slurm.cpusPerTask, 8);
  EXPECT_EQ(spec->slurm.extraOptions, std::vector<std::string>{"--exclusive"});
  EXPECT_EQ(spec->sourceConfigMap, "mm-source");
  EXPECT_EQ(spec->credentialsSecret, "hpc-login");
  auto plain = parseSlurmJobSpec(job({{"run", "hostname"}}));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->credentialsSecret, "slurm");
}

TEST(SlurmJobSpec, RefusesWhatWouldBreakTheScript) {
  auto noRun = parseSlurmJobSpec(job({{"build", "make"}}));
  EXPECT_EQ(noRun.status().code(), 400);
  EXPECT_EQ(noRun.status().message(), "spec.run: Required value");
  auto newline = parseSlurmJobSpec(job({{"run", "x"}, {"slurm", {{"jobName", "a\nhostname"}}}}));
  EXPECT_EQ(newline.status().code(), 400);
  EXPECT_NE(newline.status().message().find("spec.slurm.jobName"), std::string::npos);
  auto option =
      parseSlurmJobSpec(job({{"run", "x"}, {"slurm", {{"extraOptions", {"exclusive"}}}}}));
  EXPECT_NE(option.status().message().find("spec.slurm.extraOptions[0]"), std::string::npos);
}

TEST(BatchScript, SbatchLinesThenBuildThenRun) {
  SbatchOptions o;
  o.partition = "debug";
  o.ntasks = 1;
  o.cpusPerTask = 2;
  o.gpus = 1;
  o.memory = "512M";
  o.time = "5";
  o.extraOptions = {"--exclusive"};
  std::string s =
      batchScript(o, "/shared/minik8s/hpc/mm-01234567", "hpc.mm", "minik8s-uid=u", true);
  EXPECT_EQ(s.rfind("#!/bin/bash\n#SBATCH --job-name=hpc.mm\n#SBATCH --comment=minik8s-uid=u\n", 0),
            0u)
      << s;
  for (const char* line :
       {"#SBATCH --chdir=/shared/minik8s/hpc/mm-01234567/src\n",
        "#SBATCH --output=/shared/minik8s/hpc/mm-01234567/output.log\n",
        "#SBATCH --partition=debug\n", "#SBATCH --ntasks=1\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --gpus=1\n", "#SBATCH --mem=512M\n", "#SBATCH --time=5\n", "#SBATCH --exclusive\n",
        "bash \"$JOB_DIR/build.sh\" > \"$JOB_DIR/build.log\" 2>&1\n", "  exit 97\n",
        "bash \"$JOB_DIR/run.sh\"\n"}) {
    EXPECT_NE(s.find(line), std::string::npos) << line << " in\n" << s;
  }
  EXPECT_EQ(s.find("--nodes"), std::string::npos);  // unset: Slurm's default
  // Every #SBATCH line comes before the first command, or sbatch ignores it.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("JOB_DIR="));
  std::string noBuild = batchScript({}, "/s/j", "n", "c", false);
  EXPECT_EQ(noBuild.find("$JOB_DIR/build.sh"), std::string::npos);
  EXPECT_EQ(outputPath({.output = "res.txt"}, "/s/j"), "/s/j/res.txt");
  EXPECT_EQ(outputPath({.output = "/abs/o"}, "/s/j"), "/abs/o");
}

TEST(Scontrol, ParsesOneLineOfShowJob) {
  const std::string line =
      "JobId=42 JobName=hpc.mm UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=1 "
      "Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) "
      "Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0 RunTime=00:00:01 TimeLimit=00:05:00 "
      "SubmitTime=2026-11-26T05:00:00 StartTime=2026-11-26T05:00:01 EndTime=2026-11-26T05:00:02 "
      "NodeList=host1 Comment=minik8s-uid=abc WorkDir=/shared/x";
  auto info = parseScontrolJobLine(line);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->id, "42");
  EXPECT_EQ(info->state, "FAILED");
  EXPECT_EQ(info->reason, "NonZeroExitCode");
  EXPECT_EQ(info->exitCode, 3);
  EXPECT_EQ(info->exitSignal, 0);
  EXPECT_EQ(info->startTime, "2026-11-26T05:00:01");
  EXPECT_EQ(info->comment, "minik8s-uid=abc");
  EXPECT_EQ(info->nodeList, "host1");
  auto pending = parseScontrolJobLine(
      "JobId=7 JobState=PENDING Reason=Priority StartTime=Unknown EndTime=Unknown ExitCode=0:0");
  ASSERT_TRUE(pending.has_value());
  EXPECT_EQ(pending->startTime, "");
  EXPECT_FALSE(parseScontrolJobLine("slurm_load_jobs error: Invalid job id specified").has_value());
}

TEST(Scontrol, StatesMapToPhases) {
  EXPECT_EQ(phaseForSlurmState("PENDING"), "Submitted");
  EXPECT_EQ(phaseForSlurmState("CONFIGURING"), "Submitted");
  EXPECT_EQ(phaseForSlurmState("RUNNING"), "Running");
  EXPECT_EQ(phaseForSlurmState("COMPLETING"), "Running");
  EXPECT_EQ(phaseForSlurmState("COMPLETED"), "Succeeded");
  EXPECT_EQ(phaseForSlurmState("CANCELLED by 0"), "Cancelled");
  for (const char* s :
       {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"}) {
    EXPECT_EQ(phaseForSlurmState(s), "Failed") << s;
  }
  EXPECT_TRUE(isFinalPhase("Cancelled"));
  EXPECT_FALSE(isFinalPhase("Running"));
  EXPECT_FALSE(slurmTimeToRfc3339("2026-11-26T05:00:01").empty());
  EXPECT_EQ(slurmTimeToRfc3339("Unknown"), "");
}

TEST(SlurmJobCrd, ServesTheKindWithColumnsAndStatus) {
  json crd = slurmJobCrd();
  ASSERT_TRUE(crd.is_object());
  EXPECT_EQ(crd["metadata"]["name"], "slurmjobs.slurm.minik8s.io");
  EXPECT_EQ(crd["spec"]["names"]["kind"], "SlurmJob");
  const json& v1 = crd["spec"]["versions"][0];
  EXPECT_TRUE(v1["subresources"].contains("status"));
  EXPECT_EQ(v1["additionalPrinterColumns"][0]["jsonPath"], ".status.phase");
  EXPECT_EQ(v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"], json({"run"}));
}

TEST(Submitter, ArchiveMembersStayInside) {
  EXPECT_TRUE(checkArchiveMembers("./\n./matmul.cu\n./lib/x.h\n", "source.tar.gz").ok());
  auto up = checkArchiveMembers("./a\n../../etc/passwd\n", "source.tar.gz");
  EXPECT_EQ(up.code(), 400);
  EXPECT_NE(up.message().find("../../etc/passwd"), std::string::npos);
  EXPECT_EQ(checkArchiveMembers("/etc/cron.d/x\n", "source.tar.gz").code(), 400);
  EXPECT_EQ(lastLines("a\nb\nc\n", 2), "b\nc\n");
  EXPECT_EQ(lastLines("a\nb", 5), "a\nb");
}

TEST(SlurmJobController, SubmitterJobMountsCredentialsSharedDirAndSources) {
  json sj = job({{"run", "x"}, {"source", {{"configMap", "mm-source"}}}});
  json j = controllers::submitterJob(sj, "/srv/slurm/shared", "minik8s/slurm-submitter:latest");
  EXPECT_EQ(j["metadata"]["name"], "mm-submitter");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["kind"], "SlurmJob");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["controller"], true);
  const json& pod = j["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "slurm-submitter");
  EXPECT_EQ(pod["restartPolicy"], "OnFailure");
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["args"], json({"slurm-submitter", "--namespace", "hpc", "--name", "mm",
                             "--credentials", "/etc/minik8s/slurm", "--shared-dir",
                             "/srv/slurm/shared", "--source-dir", "/source"}));
  EXPECT_EQ(pod["volumes"][0]["secret"]["secretName"], "slurm");
  EXPECT_EQ(pod["volumes"][1]["hostPath"]["path"], "/srv/slurm/shared");
  EXPECT_EQ(pod["volumes"][2]["configMap"]["name"], "mm-source");
  EXPECT_EQ(c["volumeMounts"][1]["mountPath"], "/srv/slurm/shared");  // the same path as Slurm's
}

}  // namespace
}  // namespace minik8s::slurm
