#include "cli/mesh_rollout_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "cli/stop_signals.h"
#include "common/time_util.h"
#include "mesh/rollout_cluster.h"
#include "mesh/rollout_resource.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::mesh_rollout_cmd {

namespace {

struct RolloutFlags {
  ApiClientFlags api;
  std::string ns = "default", service, image, version, container;
  std::string interval = "10s";
  mesh::RolloutOptions options;
  bool noWait = false;
};

std::string field(const json& status, const char* key) {
  if (!status.contains(key)) return "";
  return status[key].is_string() ? status[key].get<std::string>() : status[key].dump();
}

// Creates the MeshRollout `name`; one of an earlier rollout that has ended is replaced.
void createRollout(client::RestClient& rest, const json& obj, const std::string& ns,
                   const std::string& name) {
  for (int attempt = 0; attempt < 60; ++attempt) {
    auto created = rest.create(mesh::kMeshRollouts, ns, obj);
    if (created.ok()) return;
    const int code = created.status().code();
    if (code == 404) {
      exitWithError(
          Status::NotFoundMessage("the MeshRollout kind is not installed: is the control plane's "
                                  "meshrollout controller running? (" +
                                  created.status().message() + ")"));
    }
    if (code != 409) exitWithError(created.status());
    auto existing = rest.get(mesh::kMeshRollouts, ns, name);
    if (!existing.ok()) continue;  // gone meanwhile
    const std::string phase = field(existing->value("status", json::object()), "phase");
    if (phase != "Promoted" && phase != "RolledBack" && phase != "Failed") {
      exitWithError(Status::ConflictMessage(
          "meshrollout " + ns + "/" + name + " is under way (kubectl get meshrollout " + name +
          " -n " + ns + "); `kubectl delete` it to roll it back"));
    }
    if (attempt == 0) {
      auto gone = rest.remove(mesh::kMeshRollouts, ns, name);
      if (!gone.ok() && gone.status().code() != 404) exitWithError(gone.status());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  exitWithError(Status::Unavailable("meshrollout " + ns + "/" + name +
                                    " of an earlier rollout is still "
                                    "being deleted"));
}

void addRolloutCommand(CLI::App& mesh) {
  auto f = std::make_shared<RolloutFlags>();
  auto* cmd = mesh.add_subcommand(
      "rollout",
      "Roll a meshed service out to a new image: creates a MeshRollout, which the control plane "
      "drives (the new version starts beside the old one, traffic moves to it by --step every "
      "--interval while the old one is scaled down, and it rolls back by itself when the new "
      "version's 5xx rate passes --max-error-rate), and follows it");
  cmd->add_option("service", f->service, "The Service whose Deployment is rolled out")->required();
  cmd->add_option("--image", f->image, "The new version's image")->required();
  cmd->add_option("-n,--namespace", f->ns, "The service's namespace")->capture_default_str();
  cmd->add_option("--step", f->options.stepPercent, "Percent of the traffic moved per step")
      ->capture_default_str();
  cmd->add_option("--interval", f->interval, "How long each step is watched")
      ->capture_default_str();
  cmd->add_option("--max-error-rate", f->options.maxErrorRate,
                  "Roll back when the new version's 5xx answers over its requests in a step "
                  "pass this fraction")
      ->capture_default_str();
  cmd->add_option("--min-requests", f->options.minRequests,
                  "Requests a step needs before it may be judged early")
      ->capture_default_str();
  cmd->add_option("--version", f->version,
                  "The new version's `version` label (default: the image's tag)");
  cmd->add_option("--container", f->container, "The container to update (default: the first)");
  cmd->add_flag("--no-wait", f->noWait,
                "Return once the MeshRollout is created (follow it with kubectl get meshrollouts)");
  f->api.addTo(cmd);
  cmd->callback([f] {
    auto d = parseGoDuration(f->interval);
    if (!d || d->count() <= 0) {
      exitWithError(
          Status::BadRequest("invalid value \"" + f->interval +
                             "\" for --interval: want a duration such as 10s, 1m or 500ms"));
    }
    f->options.interval = *d;
    if (Status s = mesh::validateRolloutOptions(f->options); !s.ok()) exitWithError(s);
    const std::string version = f->version.empty() ? mesh::versionOfImage(f->image) : f->version;
    if (version.empty()) {
      exitWithError(Status::BadRequest("--image " + f->image +
                                       ": no tag to name the new version by; give --version"));
    }
    sigset_t signals = blockStopSignals();
    client::RestClient rest(valueOrExit(f->api.clientConfigOrLocal()));
    const std::string name = f->service + "-" + version;
    mesh::MeshRolloutSpec spec{f->service, f->image, f->version, f->container, f->options};
    createRollout(rest, mesh::meshRolloutObject(f->ns, name, spec, f->interval), f->ns, name);
    std::printf("meshrollout.mesh.minik8s.io/%s created\n", name.c_str());
    if (f->noWait) std::exit(0);
    std::fflush(stdout);
    // Ctrl-C stops following; the rollout goes on in the control plane.
    std::thread([signals, name, ns = f->ns] {
      waitForStopSignal(signals);
      std::printf(
          "stopped following; the rollout goes on (kubectl delete meshrollout %s -n %s "
          "rolls it back)\n",
          name.c_str(), ns.c_str());
      std::fflush(stdout);
      std::_Exit(130);
    }).detach();
    const auto start = std::chrono::steady_clock::now();
    std::string last;
    for (;;) {
      auto got = rest.get(mesh::kMeshRollouts, f->ns, name);
      if (!got.ok()) {
        if (got.status().code() == 404)
          exitWithError(Status::NotFoundMessage("meshrollout " + name + " was deleted"));
      } else {
        const json st = got->value("status", json::object());
        const std::string phase = field(st, "phase");
        const std::string line = phase.empty() ? "" : field(st, "reason");
        if (!line.empty() && line != last) {
          last = line;
          const double t =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          std::printf("[%6.1fs] %s\n", t, line.c_str());
          std::fflush(stdout);
        }
        if (phase == "Promoted" || phase == "RolledBack" || phase == "Failed") {
          std::printf("%s: %s\n", phase.c_str(), field(st, "reason").c_str());
          std::exit(phase == "Promoted" ? 0 : 1);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

}  // namespace

}  // namespace minik8s::cli::mesh_rollout_cmd

namespace minik8s::cli {

void addMeshRolloutCommand(CLI::App& mesh) { mesh_rollout_cmd::addRolloutCommand(mesh); }

}  // namespace minik8s::cli
