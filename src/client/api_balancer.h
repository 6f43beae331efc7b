// ApiBalancer: a small TCP load balancer in front of the API servers of an HA control plane
// (`minik8s cluster up --ha` runs it as `cluster balance` on the underlay gateway), so that a
// kubeconfig, which names one server, keeps working when a server dies.
//
// Each accepted connection goes to the next backend in turn (round robin); a backend that
// refuses or does not answer within connectTimeout is skipped for the one after it, and a
// connection no backend takes is closed. Bytes are copied unchanged both ways (TLS passes
// through untouched: clients verify the servers' certificates end to end), a
// half-close is passed on, and when one side breaks both are closed. Two threads per open
// connection: kubectl opens few.
//
// Thread-safety: start() and stop() from one thread; port() from any after start().
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::client {

struct ApiBalancerOptions {
  std::string listen;                 // IPv4 "host:port"; port 0 picks a free one
  std::vector<std::string> backends;  // "host:port", "http://host:port" or "https://host:port"
  std::chrono::milliseconds connectTimeout{1000};
};

class ApiBalancer {
 public:
  explicit ApiBalancer(ApiBalancerOptions options);
  ~ApiBalancer();  // stop()
  ApiBalancer(const ApiBalancer&) = delete;
  ApiBalancer& operator=(const ApiBalancer&) = delete;

  // Checks the options, listens and starts accepting. BadRequest for an unusable address or no
  // backend, Unavailable when the address cannot be bound.
  Status start();
  int port() const;  // the listening port (the chosen one for port 0)
  // Stops accepting, closes every open connection and waits for their threads.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace minik8s::client
