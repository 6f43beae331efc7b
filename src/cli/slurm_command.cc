#include "cli/slurm_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "api/object_meta.h"
#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "cli/stop_signals.h"
#include "client/kubeconfig.h"
#include "common/base64.h"
#include "common/child_process.h"
#include "common/command.h"
#include "common/file_util.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/yaml_json.h"
#include "slurm/slurm_cli.h"
#include "slurm/slurm_job.h"
#include "slurm/submitter.h"

namespace minik8s::cli {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxSourceBytes = 1000 * 1000;  // a ConfigMap's data must stay under 1 MiB
constexpr char kMungeDir[] = "/run/munge";       // libmunge's default socket lives here
constexpr char kSubmitterComponent[] = "slurm-submitter";

// The job's output without the submitter's own log lines ("<time> I [slurm-submitter] ...").
std::string withoutSubmitterLines(const std::string& log) {
  const std::string tag = std::string(" [") + kSubmitterComponent + "] ";
  std::string out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    end = end == std::string::npos ? log.size() : end + 1;
    const std::string_view line(log.data() + pos, end - pos);
    const size_t at = line.find(tag);
    if (at == std::string_view::npos || at > 32) out.append(line);
    pos = end;
  }
  return out;
}

// A private munged with the cluster's key on the default socket, so Slurm's commands need no
// AuthInfo in slurm.conf.
Status startMunge(const std::string& credentials, ChildProcess& munged) {
  auto key = readFile(credentials + "/munge.key");
  if (!key.ok()) return key.status();
  std::error_code ec;
  fs::create_directories(kMungeDir, ec);
  ::chmod(kMungeDir, 0755);
  const std::string keyFile = std::string(kMungeDir) + "/munge.key";
  {
    std::ofstream out(keyFile, std::ios::trunc | std::ios::binary);
    out << *key;
  }
  ::chmod(keyFile.c_str(), 0400);
  const std::string socket = std::string(kMungeDir) + "/munge.socket.2";
  Status s =
      munged.start({"munged", "--foreground", "--force", "--key-file=" + keyFile,
                    "--socket=" + socket, "--pid-file=" + std::string(kMungeDir) + "/munged.pid",
                    "--seed-file=" + std::string(kMungeDir) + "/munged.seed",
                    "--log-file=" + std::string(kMungeDir) + "/munged.log"},
                   "");
  if (!s.ok()) return s;
  for (int i = 0; i < 100; ++i) {
    if (unixSocketAnswers(socket)) return {};
    if (!munged.running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto log = readFile(std::string(kMungeDir) + "/munged.log");
  return Status::Unavailable("munged did not start: " + (log.ok() ? *log : std::string("no log")));
}

void addSubmitterCommand(CLI::App& app) {
  struct Flags {
    std::string ns, name, credentials = "/etc/minik8s/slurm", sharedDir, sourceDir, file,
                          statusFile;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "slurm-submitter",
      "Submit one SlurmJob and follow it to its end (what a SlurmJob's pod runs; with --file, "
      "a SlurmJob from a file against this host's Slurm, no minik8s cluster needed)");
  auto* nsOpt = cmd->add_option("--namespace", f->ns, "The SlurmJob's namespace");
  auto* nameOpt = cmd->add_option("--name", f->name, "The SlurmJob");
  auto* fileOpt = cmd->add_option(
      "--file", f->file,
      "A SlurmJob's YAML or JSON instead of the API server: submitted with this host's Slurm "
      "commands (SLURM_CONF, munged), its output on stdout; exits 0 when it Succeeded");
  fileOpt->excludes(nsOpt)->excludes(nameOpt);
  cmd->add_option("--status-file", f->statusFile,
                  "With --file: write the SlurmJob with its status here (JSON) at each change")
      ->needs(fileOpt);
  auto* credentialsOpt =
      cmd->add_option("--credentials", f->credentials,
                      "The credentials Secret's mount: munge.key and slurm.conf (with --file: "
                      "only when given; else this host's munged and SLURM_CONF)");
  cmd->add_option("--shared-dir", f->sharedDir, "The Slurm cluster's shared directory")->required();
  cmd->add_option("--source-dir", f->sourceDir,
                  "The sources' ConfigMap mount (with --file: a directory of source files, or "
                  "holding source.tar.gz or source.zip)");
  cmd->callback([f, credentialsOpt] {
    initLogging("info", kSubmitterComponent);
    const bool fromFile = !f->file.empty();
    if (!fromFile && (f->ns.empty() || f->name.empty())) {
      exitWithError(
          Status::BadRequest("slurm-submitter: --namespace and --name, or --file, are required"));
    }
    sigset_t signals = blockStopSignals();
    static std::atomic<bool> stop{false};
    std::thread([signals] {
      waitForStopSignal(signals);
      stop = true;
    }).detach();

    ChildProcess munged;
    if (!fromFile || credentialsOpt->count() > 0) {
      Status s = startMunge(f->credentials, munged);
      if (!s.ok()) exitWithError(s);
      ::setenv("SLURM_CONF", (f->credentials + "/slurm.conf").c_str(), 1);
    }
    std::unique_ptr<slurm::SlurmJobApi> api;
    std::optional<client::RestClient> rest;
    if (fromFile) {
      auto text = readFile(f->file);
      if (!text.ok()) exitWithError(text.status());
      auto obj = parseYaml(*text);
      if (!obj.ok()) exitWithError(Status::BadRequest(f->file + ": " + obj.status().message()));
      const std::string kind =
          obj->is_object() && (*obj)["kind"].is_string() ? (*obj)["kind"].get<std::string>() : "";
      if (kind != "SlurmJob") {
        exitWithError(Status::BadRequest(f->file + ": kind is \"" + kind + "\", want SlurmJob"));
      }
      api = slurm::fileSlurmJobApi(std::move(*obj), f->statusFile);
    } else {
      auto config = client::inClusterConfig();
      if (!config.ok()) exitWithError(config.status());
      rest.emplace(*config);
      api = slurm::restSlurmJobApi(*rest, f->ns, f->name);
    }
    slurm::CommandSlurmCli cli;
    slurm::SubmitterOptions options;
    options.sharedDir = f->sharedDir;
    options.sourceDir = f->sourceDir;
    const char* pod = std::getenv("POD_NAME");
    options.podName = pod ? pod : "";
    slurm::Submitter submitter(*api, cli, options, std::cout);
    const char* conf = std::getenv("SLURM_CONF");
    LOG_INFO("slurm submitter for SlurmJob {} (SLURM_CONF {})",
             fromFile ? f->file : f->ns + "/" + f->name, conf ? conf : "Slurm's default");
    Status s = submitter.run(stop);
    munged.stop(std::chrono::seconds(2));
    if (!s.ok()) {
      LOG_WARN("slurm submitter stopped: {}", s.toString());
      std::exit(stop ? 0 : 1);
    }
    if (fromFile) {
      auto end = api->get();
      const json status = end.ok() ? end->value("status", json::object()) : json::object();
      std::cerr << "SlurmJob " << f->file << ": " << status.dump() << "\n";
      std::exit(status.value("phase", "") == "Succeeded" ? 0 : 1);
    }
  });
}

// The sources as a ConfigMap: a directory becomes source.tar.gz, a zip stays source.zip.
Result<json> sourceConfigMap(const std::string& source, const std::string& name,
                             const std::string& ns) {
  std::string key, bytes;
  if (fs::is_directory(source)) {
    char tmpl[] = "/tmp/minik8s-source-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) return Status::Internal("cannot create a temporary file");
    ::close(fd);
    auto tar = runChecked({"tar", "-C", source, "-czf", tmpl, "."});
    auto data = readFile(tmpl);
    ::unlink(tmpl);
    if (!tar.ok()) return tar.status();
    if (!data.ok()) return data.status();
    key = "source.tar.gz";
    bytes = std::move(*data);
  } else {
    auto data = readFile(source);
    if (!data.ok()) return data.status();
    if (data->size() < 4 || data->compare(0, 4, "PK\x03\x04") != 0) {
      return Status::BadRequest("--source " + source + ": neither a directory nor a zip file");
    }
    key = "source.zip";
    bytes = std::move(*data);
  }
  if (bytes.size() > kMaxSourceBytes) {
    return Status::BadRequest(fmt::format(
        "--source {}: {} bytes packed; a ConfigMap holds at most {} (put big inputs in the "
        "Slurm cluster's shared directory instead)",
        source, bytes.size(), kMaxSourceBytes));
  }
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", name},
                {"namespace", ns},
                {"labels", {{slurm::kJobNameLabel, name.substr(0, name.size() - 7)}}}}},
              {"binaryData", {{key, base64::encode(bytes)}}}};
}

void addJobCommand(CLI::App& app) {
  auto* job = app.add_subcommand("job", "Slurm jobs (SlurmJob): submit one, read its output");
  job->require_subcommand(1);

  struct SubmitFlags {
    ApiClientFlags api;
    std::string file, source, ns;
  };
  auto sf = std::make_shared<SubmitFlags>();
  auto* submit = job->add_subcommand("submit", "Create a SlurmJob, uploading its sources");
  submit->add_option("file", sf->file, "The SlurmJob's YAML")->required();
  submit->add_option("--source", sf->source,
                     "A directory or zip with the program's sources (stored in the ConfigMap "
                     "NAME-source)");
  submit->add_option("-n,--namespace", sf->ns, "Namespace (default: the file's, or default)");
  sf->api.addTo(submit);
  submit->callback([sf] {
    auto text = readFile(sf->file);
    if (!text.ok()) exitWithError(text.status());
    auto obj = parseYaml(*text);
    if (!obj.ok()) exitWithError(obj.status());
    if (obj->value("kind", "") != "SlurmJob") {
      exitWithError(Status::BadRequest(sf->file + ": kind must be SlurmJob, not \"" +
                                       obj->value("kind", "") + "\""));
    }
    std::string ns = sf->ns;
    if (ns.empty()) ns = api::namespaceOf(*obj);
    if (ns.empty()) ns = "default";
    const std::string name = api::nameOf(*obj);
    if (name.empty())
      exitWithError(Status::BadRequest(sf->file + ": metadata.name: Required value"));
    (*obj)["metadata"]["namespace"] = ns;
    auto config = sf->api.clientConfigOrLocal();
    if (!config.ok()) exitWithError(config.status());
    client::RestClient rest(*config);
    if (!sf->source.empty()) {
      auto cm = sourceConfigMap(sf->source, name + "-source", ns);
      if (!cm.ok()) exitWithError(cm.status());
      const auto& configMaps = client::resources::kConfigMaps;
      auto created = rest.create(configMaps, ns, *cm);
      if (!created.ok() && created.status().code() == 409) {
        auto old = rest.get(configMaps, ns, name + "-source");
        if (old.ok()) (*cm)["metadata"]["resourceVersion"] = (*old)["metadata"]["resourceVersion"];
        created = rest.update(configMaps, *cm);
      }
      if (!created.ok()) exitWithError(created.status());
      (*obj)["spec"]["source"] = {{"configMap", name + "-source"}};
      std::cout << "configmap/" << name << "-source uploaded\n";
    }
    auto created = rest.create(slurm::kSlurmJobs, ns, *obj);
    if (!created.ok()) exitWithError(created.status());
    std::cout << "slurmjob.slurm.minik8s.io/" << name << " created\n";
  });

  struct OutputFlags {
    ApiClientFlags api;
    std::string name, ns = "default";
  };
  auto of = std::make_shared<OutputFlags>();
  auto* output =
      job->add_subcommand("output", "Print a SlurmJob's whole output (its submitter pod's log)");
  output->add_option("name", of->name, "The SlurmJob")->required();
  output->add_option("-n,--namespace", of->ns, "Namespace");
  of->api.addTo(output);
  output->callback([of] {
    auto config = of->api.clientConfigOrLocal();
    if (!config.ok()) exitWithError(config.status());
    client::RestClient rest(*config);
    auto sj = rest.get(slurm::kSlurmJobs, of->ns, of->name);
    if (!sj.ok()) exitWithError(sj.status());
    const std::string pod = valueAt(*sj, "/status/submitter", std::string());
    if (pod.empty()) {
      exitWithError(
          Status::NotFoundMessage("SlurmJob " + of->name + " has not been submitted yet (phase " +
                                  valueAt(*sj, "/status/phase", std::string("Pending")) + ")"));
    }
    auto log = rest.requestText(
        "GET", "/api/v1/namespaces/" + of->ns + "/pods/" + pod + "/log?container=submitter");
    if (!log.ok()) exitWithError(log.status());
    std::cout << withoutSubmitterLines(*log);
  });
}

}  // namespace

void addSlurmCommands(CLI::App& app) {
  addSubmitterCommand(app);
  addJobCommand(app);
}

}  // namespace minik8s::cli
