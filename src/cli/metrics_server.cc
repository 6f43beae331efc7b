#include "cli/metrics_server.h"

#include "common/logging.h"
#include "common/metrics.h"

namespace minik8s::cli {

void MetricsServerFlags::addTo(CLI::App* cmd, const std::string& defaultAddress) {
  bindAddress = defaultAddress;
  cmd->add_option("--metrics-bind-address", bindAddress,
                  "host:port serving /metrics, /healthz, /livez and /readyz over plain HTTP "
                  "(\"0\" turns it off)")
      ->capture_default_str();
}

std::unique_ptr<http::Server> MetricsServerFlags::start(const std::string& component) const {
  if (bindAddress.empty() || bindAddress == "0") return nullptr;
  auto server =
      std::make_unique<http::Server>([](const http::Request& req, http::ResponseWriter& w) {
        metrics::serveComponentEndpoints(metrics::defaultRegistry(), req, w);
      });
  if (Status s = server->start(bindAddress); !s.ok()) {
    LOG_WARN("no metrics and health endpoints for the {} on {}: {}", component, bindAddress,
             s.message());
    return nullptr;
  }
  LOG_INFO("serving the {}'s /metrics and health checks on http://{}", component, bindAddress);
  return server;
}

}  // namespace minik8s::cli
