#include "cli/scheduler_command.h"

#include <signal.h>

#include "cli/api_client_flags.h"
#include "cli/metrics_server.h"
#include "cli/stop_signals.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "scheduler/scheduler.h"

namespace minik8s::cli {

namespace {

struct SchedulerFlags {
  ApiClientFlags api;
  MetricsServerFlags metrics;
  std::string policy = "default";
  std::string logLevel = "info";
  bool leaderElect = true;
};

int runScheduler(const SchedulerFlags& f) {
  initLogging(f.logLevel, "scheduler");
  auto policy = scheduler::parsePolicy(f.policy);
  if (!policy.ok()) {
    LOG_ERROR("{}", policy.status().message());
    return 2;
  }
  sigset_t signals = blockStopSignals();

  auto apiConfig = f.api.clientConfig();
  if (!apiConfig.ok()) {
    LOG_ERROR("{}", apiConfig.status().message());
    return 2;
  }
  client::RestClient client(*apiConfig);
  auto metricsServer = f.metrics.start("scheduler");
  scheduler::SchedulerOptions options;
  options.policy = *policy;
  std::unique_ptr<scheduler::Scheduler> sched;
  auto startScheduler = [&client, &sched, options] {
    sched = std::make_unique<scheduler::Scheduler>(client, options);
    sched->start();
  };
  auto stopScheduler = [&sched] {
    if (sched) sched->stop();
    sched.reset();
  };
  std::unique_ptr<minik8s::client::LeaderElector> elector;
  if (f.leaderElect) {
    // Only the holder of kube-system/kube-scheduler binds pods.
    elector = minik8s::client::startLeaderElection(client, "kube-scheduler",
                                                   minik8s::client::defaultLeaderIdentity(),
                                                   startScheduler, stopScheduler);
  } else {
    startScheduler();
  }
  LOG_INFO("scheduling pods through {} with policy {}", apiConfig->servers, f.policy);
  int sig = waitForStopSignal(signals);
  LOG_INFO("signal {}: stopping", sig);
  if (elector) elector->stop();
  stopScheduler();
  return 0;
}

}  // namespace

void addSchedulerCommand(CLI::App& app) {
  auto flags = std::make_shared<SchedulerFlags>();
  CLI::App* cmd = app.add_subcommand("scheduler", "Run the pod scheduler against an API server");
  flags->api.addTo(cmd);
  flags->metrics.addTo(cmd, "127.0.0.1:10259");
  cmd->add_option("--scheduler-policy", flags->policy,
                  "default (filters and scores), round-robin, random or least-allocated")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "round-robin", "random", "least-allocated"}));
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->add_flag("--leader-elect", flags->leaderElect,
                "Schedule only while holding Lease kube-system/kube-scheduler")
      ->capture_default_str();
  cmd->callback([flags] { std::exit(runScheduler(*flags)); });
}

}  // namespace minik8s::cli
