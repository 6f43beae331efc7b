#include "cli/controller_manager_command.h"

#include <signal.h>

#include "cli/api_client_flags.h"
#include "cli/controller_flags.h"
#include "cli/metrics_server.h"
#include "cli/stop_signals.h"
#include "client/leader_election.h"
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
  sigset_t signals = blockStopSignals();

  auto apiConfig = f.api.clientConfig();
  if (!apiConfig.ok()) {
    LOG_ERROR("{}", apiConfig.status().message());
    return 2;
  }
  client::RestClient rest(*apiConfig);
  auto metricsServer = f.metrics.start("controller-manager");
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
  controllers::ControllerDurationFlags durations = f.durations;
  if (f.disableGc) durations.controllers.push_back("-garbagecollector");
  if (Status ds = durations.applyTo(opts); !ds.ok()) {
    LOG_ERROR("{}", ds.message());
    return 2;
  }
  std::unique_ptr<controllers::ControllerManager> manager;
  auto startControllers = [&rest, &manager, opts] {
    manager = std::make_unique<controllers::ControllerManager>(rest, opts);
    Status s = manager->start();
    if (!s.ok()) LOG_ERROR("{}", s.message());
  };
  auto stopControllers = [&manager] {
    if (manager) manager->stop();
    manager.reset();
  };
  std::unique_ptr<client::LeaderElector> elector;
  if (f.leaderElect) {
    // Only the holder of kube-system/kube-controller-manager reconciles.
    elector = client::startLeaderElection(rest, "kube-controller-manager",
                                          client::defaultLeaderIdentity(), startControllers,
                                          stopControllers);
  } else {
    startControllers();
    if (!manager) return 1;
  }
  int sig = waitForStopSignal(signals);
  LOG_INFO("signal {}: shutting down", sig);
  if (elector) elector->stop();
  stopControllers();
  return 0;
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
