#include "cli/scheduler_command.h"

#include "cli/api_client_flags.h"
#include "cli/component_runner.h"
#include "cli/metrics_server.h"
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
  scheduler::SchedulerOptions options;
  options.policy = *policy;
  std::unique_ptr<scheduler::Scheduler> sched;
  Component c;
  c.name = "scheduler";
  c.leaseName = "kube-scheduler";  // only its holder binds pods
  c.leaderElect = f.leaderElect;
  c.start = [&sched, options](client::RestClient& rest) {
    sched = std::make_unique<scheduler::Scheduler>(rest, options);
    sched->start();
    return true;
  };
  c.stop = [&sched] {
    if (sched) sched->stop();
    sched.reset();
  };
  LOG_INFO("scheduling pods with policy {}", f.policy);
  return runComponent(f.api, f.metrics, std::move(c));
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
