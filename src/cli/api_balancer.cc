#include "cli/api_balancer.h"

#include <signal.h>

#include "cli/stop_signals.h"
#include "common/logging.h"

namespace minik8s::cli {

int runApiBalancer(const ApiBalancerOptions& options) {
  initLogging("info", "api-balancer");
  // Signals are waited for here, not delivered to whichever thread runs.
  sigset_t signals = blockStopSignals();
  client::ApiBalancer balancer(options);
  if (Status s = balancer.start(); !s.ok()) {
    LOG_ERROR("{}", s.message());
    return s.code() == 400 ? 2 : 1;
  }
  // cluster up waits for this line.
  LOG_INFO("api balancer on {} for {} servers ready", options.listen, options.backends.size());
  waitForStopSignal(signals);
  balancer.stop();
  LOG_INFO("api balancer stopped");
  return 0;
}

}  // namespace minik8s::cli
