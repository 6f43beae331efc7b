#include "cli/component_runner.h"

#include "cli/stop_signals.h"
#include "client/leader_election.h"
#include "common/logging.h"

namespace minik8s::cli {

int runComponent(const ApiClientFlags& api, const MetricsServerFlags& metrics, Component c) {
  // Before any thread starts, so that only waitForStopSignal() sees SIGINT and SIGTERM.
  sigset_t signals = blockStopSignals();
  auto apiConfig = api.clientConfig();
  if (!apiConfig.ok()) {
    LOG_ERROR("{}", apiConfig.status().message());
    return 2;
  }
  client::RestClient rest(*apiConfig);
  auto metricsServer = metrics.start(c.name);
  std::unique_ptr<client::LeaderElector> elector;
  if (c.leaderElect) {
    elector = client::startLeaderElection(
        rest, c.leaseName, client::defaultLeaderIdentity(), [&c, &rest] { c.start(rest); }, c.stop);
  } else if (!c.start(rest)) {
    c.stop();
    return 1;
  }
  LOG_INFO("{} running against {}", c.name, apiConfig->servers);
  int sig = waitForStopSignal(signals);
  LOG_INFO("signal {}: stopping", sig);
  if (elector) elector->stop();
  c.stop();
  return 0;
}

}  // namespace minik8s::cli
