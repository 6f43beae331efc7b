// The hidden `minik8s cluster balance` command that `cluster up --ha` starts: runs a
// client::ApiBalancer (client/api_balancer.h, where the balancer itself lives) until SIGTERM or
// SIGINT. Thread-safety: runApiBalancer owns everything it creates.
#pragma once

#include "client/api_balancer.h"

namespace minik8s::cli {

using ApiBalancerOptions = client::ApiBalancerOptions;

// Serves until SIGTERM or SIGINT; returns a process exit code (2: bad options, 1: cannot listen).
int runApiBalancer(const ApiBalancerOptions& options);

}  // namespace minik8s::cli
