// The HTTP endpoints of a standalone control-plane component (`minik8s scheduler`,
// `minik8s controller-manager`): /metrics (metrics::defaultRegistry()), /healthz, /livez and
// /readyz over plain HTTP on --metrics-bind-address, as controller-runtime's metrics server.
// The defaults listen on loopback at kube-scheduler's and kube-controller-manager's ports
// (10259, 10257), where nothing needs credentials; another address exposes the metrics without
// authentication. Not thread-safe; used while parsing flags and starting.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "common/http.h"

namespace minik8s::cli {

struct MetricsServerFlags {
  std::string bindAddress;  // "host:port"; "" or "0" turns the server off

  void addTo(CLI::App* cmd, const std::string& defaultAddress);
  // The started server, or nullptr when turned off or when the address cannot be bound (logged:
  // a second instance on one host keeps running without its own endpoints).
  std::unique_ptr<http::Server> start(const std::string& component) const;
};

}  // namespace minik8s::cli
