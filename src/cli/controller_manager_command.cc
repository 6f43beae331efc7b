#include "cli/controller_manager_command.h"

#include <signal.h>

#include "client/leader_election.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "controllers/manager/controller_manager.h"

namespace minik8s::cli {

namespace {

struct ControllerManagerFlags {
  std::string server = "http://127.0.0.1:6443";
  int workers = 2;
  bool disableGc = false;
  std::string logLevel = "info";
  bool leaderElect = true;
  controllers::ControllerDurationFlags durations;
};

int runControllerManager(const ControllerManagerFlags& f) {
  initLogging(f.logLevel, "controller-manager");
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  client::RestClient rest(f.server);
  controllers::ControllerManager::Options opts;
  opts.workersPerController = f.workers;
  opts.enableGarbageCollector = !f.disableGc;
  if (Status ds = f.durations.applyTo(opts); !ds.ok()) {
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
  int sig = 0;
  sigwait(&signals, &sig);
  LOG_INFO("signal {}: shutting down", sig);
  if (elector) elector->stop();
  stopControllers();
  return 0;
}

}  // namespace

void addControllerManagerCommand(CLI::App& app) {
  auto flags = std::make_shared<ControllerManagerFlags>();
  CLI::App* cmd = app.add_subcommand(
      "controller-manager", "Run the ReplicaSet, Deployment and garbage-collector controllers");
  cmd->add_option("--server", flags->server, "API server URL")->capture_default_str();
  cmd->add_option("--workers", flags->workers, "Worker threads per controller")
      ->capture_default_str();
  cmd->add_flag("--disable-garbage-collector", flags->disableGc,
                "Do not run the garbage collector");
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_flag("--leader-elect", flags->leaderElect,
                "Reconcile only while holding Lease kube-system/kube-controller-manager")
      ->capture_default_str();
  cmd->add_option("--horizontal-pod-autoscaler-sync-period", flags->durations.hpaSyncPeriod,
                  "How often HPAs are reconciled")
      ->capture_default_str();
  cmd->add_option("--horizontal-pod-autoscaler-downscale-stabilization",
                  flags->durations.hpaDownscaleStabilization,
                  "Window of recommendations an HPA scale-down waits for (default behavior)")
      ->capture_default_str();
  cmd->add_option("--node-monitor-grace-period", flags->durations.nodeMonitorGracePeriod,
                  "Silence after which a node is marked Unknown")
      ->capture_default_str();
  cmd->add_option("--pod-eviction-timeout", flags->durations.podEvictionTimeout,
                  "tolerationSeconds for pods without a not-ready/unreachable toleration")
      ->capture_default_str();
  cmd->callback([flags] { std::exit(runControllerManager(*flags)); });
}

}  // namespace minik8s::cli
