#include "slurm/slurm_job.h"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "client/custom_resource_definitions.h"
#include "common/json_pointer.h"
#include "common/strings.h"
#include "common/time_util.h"
#include "common/yaml_json.h"

namespace minik8s::slurm {

const client::Resource kSlurmJobs{kGroup, "v1", "slurmjobs", true};

namespace {

// The kind's schema. Strings that become #SBATCH lines may not hold a newline (a second line
// would be a command of the script); commands may (they are files of their own).
constexpr const char* kCrdYaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: slurmjobs.slurm.minik8s.io
  labels: {app.kubernetes.io/managed-by: minik8s}
spec:
  group: slurm.minik8s.io
  scope: Namespaced
  names:
    plural: slurmjobs
    singular: slurmjob
    kind: SlurmJob
    listKind: SlurmJobList
    shortNames: [sj]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Slurm-ID, type: string, jsonPath: .status.jobId}
    - {name: Partition, type: string, jsonPath: .spec.slurm.partition}
    - {name: Exit, type: integer, jsonPath: .status.exitCode}
    - {name: Reason, type: string, jsonPath: .status.reason, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A program built and run on a Slurm cluster by a submitter pod of its own.
        properties:
          spec:
            type: object
            required: [run]
            properties:
              slurm:
                type: object
                description: What an sbatch script says; unset fields are left to Slurm.
                properties:
                  partition: {type: string, pattern: '^[A-Za-z0-9_.-]+$', description: '--partition'}
                  nodes: {type: integer, minimum: 1, description: '--nodes'}
                  ntasks: {type: integer, minimum: 1, description: '--ntasks'}
                  cpusPerTask: {type: integer, minimum: 1, description: '--cpus-per-task'}
                  gpus: {type: integer, minimum: 0, description: '--gpus'}
                  gres: {type: string, pattern: '^[A-Za-z0-9_:,.-]+$', description: '--gres, e.g. gpu:1'}
                  memory: {type: string, pattern: '^[0-9]+[KMGT]?$', description: '--mem, e.g. 512M, 4G'}
                  time:
                    type: string
                    description: '--time: minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]'
                    pattern: '^([0-9]+|[0-9]+:[0-9]{1,2}(:[0-9]{1,2})?|[0-9]+-[0-9]{1,2}(:[0-9]{1,2}(:[0-9]{1,2})?)?)$'
                  jobName: {type: string, pattern: '^[^\n\r]*$', maxLength: 128, description: '--job-name (default NAMESPACE.NAME)'}
                  output: {type: string, pattern: '^[^\n\r]*$', description: '--output, relative to the job directory (default output.log)'}
                  error: {type: string, pattern: '^[^\n\r]*$', description: '--error (default: merged into the output)'}
                  extraOptions:
                    type: array
                    description: More sbatch options, one per item, e.g. --exclusive
                    items: {type: string, pattern: '^--?[A-Za-z][^\n\r]*$'}
              source:
                type: object
                description: The program's files.
                properties:
                  configMap: {type: string, description: 'A ConfigMap whose keys are the files, or whose key source.tar.gz or source.zip is an archive of a directory'}
              build: {type: string, description: Shell commands run in the sources' directory before run, e.g. make}
              run: {type: string, minLength: 1, description: Shell commands that run the program}
              credentialsSecret: {type: string, description: 'The Secret with the Slurm cluster''s munge.key, slurm.conf and shared-dir (default slurm)'}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Pending, Submitted, Running, Succeeded, Failed, Cancelled]}
              jobId: {type: string, description: The Slurm job id}
              slurmState: {type: string}
              reason: {type: string}
              message: {type: string}
              exitCode: {type: integer}
              submitter: {type: string, description: The pod that submits and follows the job}
              jobDirectory: {type: string}
              submitTime: {type: string, format: date-time}
              startTime: {type: string, format: date-time}
              completionTime: {type: string, format: date-time}
              outputTail: {type: string, description: The last lines of the job's output}
              conditions:
                type: array
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
)";

bool hasLineBreak(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

}  // namespace

json slurmJobCrd() {
  static const json crd = [] {
    auto parsed = parseYaml(kCrdYaml);
    return parsed.ok() ? *parsed : json::object();
  }();
  return crd;
}

Status ensureSlurmJobCrd(client::RestClient& rest) {
  return client::ensureCustomResourceDefinition(rest, slurmJobCrd());
}

Result<SlurmJobSpec> parseSlurmJobSpec(const json& obj) {
  const json spec = obj.value("spec", json::object());
  if (!spec.is_object()) return Status::BadRequest("spec: must be an object");
  SlurmJobSpec out;
  const json s = spec.value("slurm", json::object());
  auto str = [&](const char* key) { return s.value(key, std::string()); };
  auto num = [&](const char* key) { return s.value(key, 0); };
  SbatchOptions& o = out.slurm;
  o.partition = str("partition");
  o.nodes = num("nodes");
  o.ntasks = num("ntasks");
  o.cpusPerTask = num("cpusPerTask");
  o.gpus = num("gpus");
  o.gres = str("gres");
  o.memory = str("memory");
  o.time = str("time");
  o.jobName = str("jobName");
  o.output = str("output");
  o.error = str("error");
  for (const auto& e : s.value("extraOptions", json::array())) {
    if (e.is_string()) o.extraOptions.push_back(e.get<std::string>());
  }
  const std::pair<const char*, const std::string*> oneLine[] = {
      {"partition", &o.partition}, {"gres", &o.gres},     {"memory", &o.memory}, {"time", &o.time},
      {"jobName", &o.jobName},     {"output", &o.output}, {"error", &o.error}};
  for (const auto& [field, value] : oneLine) {
    if (hasLineBreak(*value)) {
      return Status::BadRequest(
          fmt::format("spec.slurm.{}: Invalid value: may not contain a line break", field));
    }
  }
  for (size_t i = 0; i < o.extraOptions.size(); ++i) {
    const auto& e = o.extraOptions[i];
    if (hasLineBreak(e) || e.empty() || e[0] != '-') {
      return Status::BadRequest(fmt::format(
          "spec.slurm.extraOptions[{}]: Invalid value: \"{}\": an sbatch option on one line, "
          "starting with -",
          i, e));
    }
  }
  out.sourceConfigMap = valueAt(spec, "/source/configMap", std::string());
  out.build = spec.value("build", std::string());
  out.run = spec.value("run", std::string());
  if (out.run.empty()) return Status::BadRequest("spec.run: Required value");
  std::string secret = spec.value("credentialsSecret", std::string());
  if (!secret.empty()) out.credentialsSecret = secret;
  return out;
}

std::string jobDirectory(const std::string& sharedDir, const std::string& ns,
                         const std::string& name, const std::string& uid) {
  return fmt::format("{}/minik8s/{}/{}-{}", sharedDir, ns, name, uid.substr(0, 8));
}

std::string defaultJobName(const std::string& ns, const std::string& name) {
  return ns + "." + name;
}

std::string jobComment(const std::string& uid) { return "minik8s-uid=" + uid; }

std::string outputPath(const SbatchOptions& o, const std::string& jobDir) {
  if (o.output.empty()) return jobDir + "/output.log";
  if (o.output[0] == '/') return o.output;
  return jobDir + "/" + o.output;
}

std::string batchScript(const SbatchOptions& o, const std::string& jobDir,
                        const std::string& jobName, const std::string& comment, bool hasBuild) {
  std::string s = "#!/bin/bash\n";
  auto line = [&](const std::string& option) { s += "#SBATCH " + option + "\n"; };
  line("--job-name=" + jobName);
  line("--comment=" + comment);
  line("--chdir=" + jobDir + "/src");
  line("--output=" + outputPath(o, jobDir));
  if (!o.error.empty()) line("--error=" + (o.error[0] == '/' ? o.error : jobDir + "/" + o.error));
  if (!o.partition.empty()) line("--partition=" + o.partition);
  if (o.nodes > 0) line(fmt::format("--nodes={}", o.nodes));
  if (o.ntasks > 0) line(fmt::format("--ntasks={}", o.ntasks));
  if (o.cpusPerTask > 0) line(fmt::format("--cpus-per-task={}", o.cpusPerTask));
  if (o.gpus > 0) line(fmt::format("--gpus={}", o.gpus));
  if (!o.gres.empty()) line("--gres=" + o.gres);
  if (!o.memory.empty()) line("--mem=" + o.memory);
  if (!o.time.empty()) line("--time=" + o.time);
  for (const auto& e : o.extraOptions) line(e);
  s += "# Written by minik8s for one SlurmJob; build.sh and run.sh hold the user's commands.\n";
  s += fmt::format("JOB_DIR='{}'\n", jobDir);
  if (hasBuild) {
    s += "echo \"== build ($(hostname), $(date -u +%FT%TZ))\"\n";
    s += "bash \"$JOB_DIR/build.sh\" > \"$JOB_DIR/build.log\" 2>&1\n";
    s += "rc=$?\n";
    s += "echo \"$rc\" > \"$JOB_DIR/build.rc\"\n";
    s += "cat \"$JOB_DIR/build.log\"\n";
    s += "if [ \"$rc\" -ne 0 ]; then\n";
    s += "  echo \"== build failed with exit code $rc\"\n";
    s += fmt::format("  exit {}\n", kBuildFailedExit);
    s += "fi\n";
  }
  s += "echo \"== run ($(hostname), $(date -u +%FT%TZ))\"\n";
  s += "bash \"$JOB_DIR/run.sh\"\n";
  s += "rc=$?\n";
  s += "echo \"== exit code $rc\"\n";
  s += "exit \"$rc\"\n";
  return s;
}

std::optional<SlurmJobInfo> parseScontrolJobLine(const std::string& line) {
  // Key=Value pairs separated by spaces; a value may itself contain spaces only in a few keys
  // (Command, WorkDir with spaces) which we do not read, so a word without '=' is glued to the
  // previous value.
  std::map<std::string, std::string> kv;
  std::string lastKey;
  for (const auto& word : splitNonEmpty(line, ' ')) {
    auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      if (!lastKey.empty()) kv[lastKey] += " " + word;
      continue;
    }
    lastKey = word.substr(0, eq);
    kv[lastKey] = word.substr(eq + 1);
  }
  auto it = kv.find("JobId");
  if (it == kv.end() || it->second.empty()) return std::nullopt;
  SlurmJobInfo info;
  info.id = it->second;
  info.state = kv["JobState"];
  info.reason = kv["Reason"];
  info.comment = kv["Comment"];
  info.nodeList = kv["NodeList"];
  auto when = [](const std::string& t) {
    return (t == "Unknown" || t == "None" || t == "(null)") ? std::string() : t;
  };
  info.startTime = when(kv["StartTime"]);
  info.endTime = when(kv["EndTime"]);
  const std::string& exit = kv["ExitCode"];
  auto colon = exit.find(':');
  try {
    if (!exit.empty()) info.exitCode = std::stoi(exit.substr(0, colon));
    if (colon != std::string::npos) info.exitSignal = std::stoi(exit.substr(colon + 1));
  } catch (const std::exception&) {
    info.exitCode = info.exitSignal = 0;
  }
  return info;
}

std::string phaseForSlurmState(const std::string& state) {
  // Slurm may add flags after the base state ("CANCELLED by 0").
  std::string base = state.substr(0, state.find(' '));
  if (base == "COMPLETED") return "Succeeded";
  if (base == "CANCELLED") return "Cancelled";
  if (base == "RUNNING" || base == "COMPLETING" || base == "STAGE_OUT" || base == "SIGNALING") {
    return "Running";
  }
  if (base == "FAILED" || base == "TIMEOUT" || base == "NODE_FAIL" || base == "OUT_OF_MEMORY" ||
      base == "BOOT_FAIL" || base == "DEADLINE" || base == "PREEMPTED" || base == "SPECIAL_EXIT") {
    return "Failed";
  }
  return "Submitted";  // PENDING, CONFIGURING, REQUEUED, SUSPENDED, RESV_DEL_HOLD, ...
}

bool isFinalPhase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed" || phase == "Cancelled";
}

std::string slurmTimeToRfc3339(const std::string& t) {
  std::tm tm{};
  if (t.size() < 19 || !strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return "";
  tm.tm_isdst = -1;
  std::time_t secs = std::mktime(&tm);  // slurmctld prints its local time
  if (secs == -1) return "";
  return formatRfc3339(std::chrono::system_clock::from_time_t(secs));
}

}  // namespace minik8s::slurm
