#include "cli/controller_manager_command.h"

#include "cli/api_client_flags.h"
#include "cli/component_runner.h"
#include "cli/controller_flags.h"
#include "cli/metrics_server.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "common/pki.h"
#include "controllers/manager/controller_manager.h"

namespace minik8s::cli {

namespace {

struct ControllerManagerFlags {
  ApiClientFlags api;
  MetricsServerFlags metrics;
  int workers = 2;
  bool disableGc = false;
  std::string logLevel = "info";
  bool leaderElect = true;
  std::string rootCaFile, signingCertFile, signingKeyFile;
  controllers::ControllerDurationFlags durations;
};

int runControllerManager(const ControllerManagerFlags& f) {
  initLogging(f.logLevel, "controller-manager");
  controllers::ControllerManager::Options opts;
  opts.workersPerController = f.workers;
  if (!f.rootCaFile.empty()) {
    auto ca = pki::readPemFile(f.rootCaFile);
    if (!ca.ok()) {
      LOG_ERROR("--root-ca-file: {}", ca.status().message());
      return 2;
    }
    opts.rootCaPem = *ca;
  }
  if (!f.signingCertFile.empty() || !f.signingKeyFile.empty()) {
    auto cert = pki::readPemFile(f.signingCertFile);
    auto key = pki::readPemFile(f.signingKeyFile);
    if (!cert.ok() || !key.ok()) {
      LOG_ERROR("--cluster-signing-cert-file and --cluster-signing-key-file: {}",
                (cert.ok() ? key : cert).status().message());
      return 2;
    }
    opts.signingCa = {*key, *cert};
  }
  // The meshrollout controller's pods/exec goes with the same TLS and credentials as `rest`
  // (a bad configuration is reported by runComponent below).
  if (auto config = f.api.clientConfig(); config.ok()) opts.apiConfig = *config;
  controllers::ControllerDurationFlags durations = f.durations;
  if (f.disableGc) durations.controllers.push_back("-garbagecollector");
  if (Status ds = durations.applyTo(opts); !ds.ok()) {
    LOG_ERROR("{}", ds.message());
    return 2;
  }
  std::unique_ptr<controllers::ControllerManager> manager;
  Component c;
  c.name = "controller-manager";
  c.leaseName = "kube-controller-manager";  // only its holder reconciles
  c.leaderElect = f.leaderElect;
  c.start = [&manager, opts](client::RestClient& rest) {
    manager = std::make_unique<controllers::ControllerManager>(rest, opts);
    Status s = manager->start();
    if (!s.ok()) LOG_ERROR("{}", s.message());
    return s.ok();
  };
  c.stop = [&manager] {
    if (manager) manager->stop();
    manager.reset();
  };
  return runComponent(f.api, f.metrics, std::move(c));
}

}  // namespace

void addControllerManagerCommand(CLI::App& app) {
  auto flags = std::make_shared<ControllerManagerFlags>();
  CLI::App* cmd =
      app.add_subcommand("controller-manager", "Run the controllers (--controllers chooses which)");
  flags->api.addTo(cmd);
  flags->metrics.addTo(cmd, "127.0.0.1:10257");
  cmd->add_option("--root-ca-file", flags->rootCaFile,
                  "Cluster CA published to every namespace as ConfigMap kube-root-ca.crt");
  cmd->add_option("--cluster-signing-cert-file", flags->signingCertFile,
                  "CA certificate that signs approved CertificateSigningRequests");
  cmd->add_option("--cluster-signing-key-file", flags->signingKeyFile, "Its private key");
  cmd->add_option("--workers", flags->workers, "Worker threads per controller")
      ->capture_default_str();
  cmd->add_flag("--disable-garbage-collector", flags->disableGc,
                "Do not run the garbage collector (same as --controllers=*,-garbagecollector)");
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_flag("--leader-elect", flags->leaderElect,
                "Reconcile only while holding Lease kube-system/kube-controller-manager")
      ->capture_default_str();
  addControllerFlags(cmd, flags->durations);
  cmd->callback([flags] { std::exit(runControllerManager(*flags)); });
}

}  // namespace minik8s::cli
