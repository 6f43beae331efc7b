// A tiny TCP load balancer in front of the API servers of an HA cluster (`minik8s cluster up
// --ha` runs it on the underlay gateway), so that a kubeconfig, which names one server, keeps
// working when a server dies: each accepted connection goes to the next backend in turn, and to
// the one after when a backend refuses the connection. Bytes are copied unchanged both ways (TLS
// or plain HTTP alike), one thread per connection: kubectl opens few.
// Thread-safety: runApiBalancer owns everything it creates; nothing is shared with callers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::cli {

struct ApiBalancerOptions {
  std::string listen;                 // host:port
  std::vector<std::string> backends;  // host:port (http:// prefixes are ignored)
  std::chrono::milliseconds connectTimeout{1000};
};

// Serves until SIGTERM or SIGINT; returns a process exit code.
int runApiBalancer(const ApiBalancerOptions& options);

}  // namespace minik8s::cli
