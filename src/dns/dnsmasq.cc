#include "dns/dnsmasq.h"

#include <signal.h>

#include "common/command.h"
#include "fmt/format.h"

namespace minik8s::dns {

std::vector<std::string> dnsmasqArgs(const DnsmasqConfig& c) {
  std::vector<std::string> args = {
      c.binary,
      "--keep-in-foreground",
      "--conf-file=/dev/null",  // not the host's /etc/dnsmasq.conf
      "--no-resolv",            // no upstream servers: nothing leaves the cluster
      "--no-poll",
      "--no-hosts",  // not the host's /etc/hosts
      "--addn-hosts=" + c.hostsFile,
      "--local=/" + c.domain + "/",  // unknown names under the domain: NXDOMAIN at once
      "--domain-needed",
      "--bogus-priv",  // unknown reverse lookups of private ranges: NXDOMAIN
      "--listen-address=" + c.listenAddress,
      "--bind-interfaces",  // only that address, so several nodes' dnsmasq can coexist
      fmt::format("--port={}", c.port),
      fmt::format("--local-ttl={}", c.ttlSeconds),
      "--pid-file=" + c.pidFile,
      // The agent's data directory may be closed to others; stay root so SIGHUP can re-read.
      "--user=root",
      "--log-facility=-",
  };
  for (const auto& w : c.wildcards) args.push_back("--address=/" + w.name + "/" + w.ip);
  return args;
}

Status Dnsmasq::start() {
  if (running()) return Status::Ok();
  // A dnsmasq of an earlier agent (killed without stopping it) still holds port 53.
  stopLeftoverProcess(config_.pidFile, config_.pidFile, /*killAfterGrace=*/true);
  return process_.start(dnsmasqArgs(config_), config_.logFile);
}

bool Dnsmasq::running() { return process_.running(); }

Status Dnsmasq::reload() {
  if (!running()) return Status::Unavailable("dnsmasq is not running");
  return process_.signal(SIGHUP);
}

void Dnsmasq::stop(std::chrono::milliseconds grace) { process_.stop(grace); }

}  // namespace minik8s::dns
