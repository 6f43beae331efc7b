#include "dns/gateway_nginx.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::dns {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> argsFor(const GatewayNginxConfig& c, const std::string& conf,
                                 const std::vector<std::string>& extra) {
  // -e: the error log used before the configuration is read (else /var/log/nginx/error.log).
  std::vector<std::string> argv = {c.binary, "-p", c.runDir + "/",         "-c",
                                   conf,     "-e", c.runDir + "/error.log"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace

std::vector<std::string> nginxArgs(const GatewayNginxConfig& config,
                                   const std::vector<std::string>& extra) {
  return argsFor(config, config.runDir + "/nginx.conf", extra);
}

Status GatewayNginx::writeConfig(const std::string& text) {
  std::error_code ec;
  fs::create_directories(config_.runDir + "/tmp", ec);
  if (ec) return Status::Internal(fmt::format("gateway: cannot create {}/tmp", config_.runDir));
  const std::string candidate = configPath() + ".new";
  {
    std::ofstream out(candidate, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status::Internal(fmt::format("gateway: cannot write {}", candidate));
  }
  auto checked = runProgram(argsFor(config_, candidate, {"-t", "-q"}));
  if (!checked.ok()) return checked.status();
  if (checked->exitCode != 0) {
    return Status::BadRequest(
        fmt::format("gateway: nginx refused the configuration: {}", checked->output));
  }
  fs::rename(candidate, configPath(), ec);
  if (ec) return Status::Internal(fmt::format("gateway: cannot rename {}", candidate));
  return Status::Ok();
}

Status GatewayNginx::start() {
  if (running()) return Status::Ok();
  const std::string pidFile = config_.runDir + "/nginx.pid";
  // An nginx of an earlier agent (killed without stopping it) still holds the port; its command
  // line names our run directory.
  stopLeftoverProcess(pidFile, fs::path(pidFile).parent_path().string(),
                      /*killAfterGrace=*/false);
  std::error_code ec;
  fs::remove(pidFile, ec);
  if (Status s = process_.start(nginxArgs(config_), config_.runDir + "/nginx.out"); !s.ok()) {
    return s;
  }
  // The pid file appears once the listening sockets are bound and the signals handled.
  for (int i = 0; i < 300; ++i) {
    if (!running()) {
      return Status::Internal(
          fmt::format("gateway: nginx exited at start; see {}/error.log", config_.runDir));
    }
    if (fs::exists(pidFile, ec)) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Timeout("gateway: nginx did not write its pid file within 3 s");
}

bool GatewayNginx::running() { return process_.running(); }

Status GatewayNginx::reload() {
  if (!running()) return Status::Unavailable("nginx is not running");
  auto r = runProgram(nginxArgs(config_, {"-s", "reload"}));
  if (!r.ok()) return r.status();
  if (r->exitCode != 0)
    return Status::Internal(fmt::format("gateway: nginx -s reload: {}", r->output));
  return Status::Ok();
}

void GatewayNginx::stop(std::chrono::milliseconds grace) { process_.stop(grace); }

}  // namespace minik8s::dns
