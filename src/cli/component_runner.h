// runComponent(): the life of a control-plane component run as its own process (`minik8s
// scheduler`, `minik8s controller-manager`): stop signals blocked before any thread starts, the
// API client from --kubeconfig/--server (or the pod's service account), /metrics and /healthz,
// /livez, /readyz on the component's port, leader election on Lease kube-system/<lease> (the
// work runs only while leading), then a wait for SIGINT/SIGTERM and an orderly stop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cli/api_client_flags.h"
#include "cli/metrics_server.h"
#include "client/rest_client.h"

namespace minik8s::cli {

struct Component {
  std::string name;       // "scheduler": the log prefix and the metrics' component
  std::string leaseName;  // "kube-scheduler": the Lease of its leader election
  bool leaderElect = true;
  // Starts the work; false when it could not start (then, without leader election, the command
  // exits with 1; with it, the elector tries again at its next term).
  std::function<bool(client::RestClient&)> start;
  std::function<void()> stop;  // stops what start() started; may be called when nothing runs
};

// Runs `c` until a stop signal; the process exit code (2 for a bad client configuration).
int runComponent(const ApiClientFlags& api, const MetricsServerFlags& metrics, Component c);

}  // namespace minik8s::cli
