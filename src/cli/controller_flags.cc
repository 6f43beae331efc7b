#include "cli/controller_flags.h"

namespace minik8s::cli {

void addControllerFlags(CLI::App* cmd, controllers::ControllerDurationFlags& durations) {
  cmd->add_option("--controllers", durations.controllers,
                  "Controllers to run: * for the defaults, name to add one, -name to leave one "
                  "out (e.g. *,-garbagecollector)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--horizontal-pod-autoscaler-sync-period", durations.hpaSyncPeriod,
                  "How often HPAs are reconciled")
      ->capture_default_str();
  cmd->add_option("--horizontal-pod-autoscaler-downscale-stabilization",
                  durations.hpaDownscaleStabilization,
                  "Window of recommendations an HPA scale-down waits for (default behavior)")
      ->capture_default_str();
  cmd->add_option("--node-monitor-grace-period", durations.nodeMonitorGracePeriod,
                  "Silence after which a node is marked Unknown")
      ->capture_default_str();
  cmd->add_option("--pod-eviction-timeout", durations.podEvictionTimeout,
                  "tolerationSeconds for pods without a not-ready/unreachable toleration")
      ->capture_default_str();
  cmd->add_option("--resource-quota-sync-period", durations.resourceQuotaSyncPeriod,
                  "Period between full recalculations of each ResourceQuota's usage")
      ->capture_default_str();
  cmd->add_option("--cluster-signing-duration", durations.clusterSigningDuration,
                  "Lifetime of the certificates signed for CSRs (node client and serving)")
      ->capture_default_str();
  cmd->add_option("--terminated-pod-gc-threshold", durations.terminatedPodGcThreshold,
                  "Terminated pods kept before the oldest are deleted (<= 0: keep them all)")
      ->capture_default_str();
}

}  // namespace minik8s::cli
