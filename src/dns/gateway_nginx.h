// GatewayNginx: supervises the nginx process of the Dns gateway. nginx runs in the foreground
// (`daemon off` in the rendered configuration) as our child, with its prefix, pid file, logs
// and temp files in runDir; configuration changes are checked with `nginx -t` and applied with
// `nginx -s reload`, which starts new workers on the new configuration while the old ones finish
// the requests they hold (no dropped connections).
//
// Not thread-safe: one owner (DnsGateway's sync thread) drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "common/status.h"

namespace minik8s::dns {

struct GatewayNginxConfig {
  std::string binary = "nginx";
  std::string runDir;  // nginx.conf, nginx.pid, error.log, access.log, tmp/
};

// The command line that runs nginx on runDir/nginx.conf, plus `extra` (e.g. {"-t"}).
std::vector<std::string> nginxArgs(const GatewayNginxConfig& config,
                                   const std::vector<std::string>& extra = {});

class GatewayNginx {
 public:
  explicit GatewayNginx(GatewayNginxConfig config) : config_(std::move(config)) {}
  ~GatewayNginx() { stop(); }
  GatewayNginx(const GatewayNginx&) = delete;
  GatewayNginx& operator=(const GatewayNginx&) = delete;

  std::string configPath() const { return config_.runDir + "/nginx.conf"; }

  // Writes `text` as the configuration after `nginx -t` accepted it (the running configuration
  // stays when it is refused: the error says why).
  Status writeConfig(const std::string& text);
  // Starts nginx on the current configuration unless it runs; waits until it wrote its pid file.
  Status start();
  bool running();
  // `nginx -s reload`.
  Status reload();
  // SIGQUIT (graceful), then SIGKILL after `grace`.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(3));
  pid_t pid() const { return process_.pid(); }

 private:
  GatewayNginxConfig config_;
  // SIGQUIT: finish the requests in flight; SIGKILL reaches the workers in its process group.
  ChildProcess process_{StopPolicy{.signal = SIGQUIT, .killGroup = true}};
};

}  // namespace minik8s::dns
