// Dnsmasq: supervises one dnsmasq process serving the cluster domain from a hosts file. dnsmasq
// answers names in the hosts file, returns NXDOMAIN at once for other names under the cluster
// domain (--local), forwards nothing (--no-resolv: there is no upstream), and re-reads the hosts
// file on SIGHUP (reload()). See docs/dns.md for why dnsmasq.
//
// Not thread-safe: one owner (ClusterDns' sync thread) drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/child_process.h"
#include "common/status.h"
#include "dns/hosts_file.h"

namespace minik8s::dns {

struct DnsmasqConfig {
  std::string binary = "dnsmasq";
  std::string listenAddress;  // an IPv4 address of this network namespace
  int port = 53;
  std::string domain = "cluster.local";
  std::string hostsFile;
  std::string pidFile;
  std::string logFile;  // dnsmasq's stderr (its log) goes here
  int ttlSeconds = 5;   // TTL of answers from the hosts file
  // Wildcard domains: every name under `name` answers `ip` (--address=/name/ip). dnsmasq reads
  // them only at start: a change needs a restart.
  std::vector<HostEntry> wildcards;
};

// The command line for `config` (argv[0] is the binary).
std::vector<std::string> dnsmasqArgs(const DnsmasqConfig& config);

class Dnsmasq {
 public:
  explicit Dnsmasq(DnsmasqConfig config) : config_(std::move(config)) {}
  ~Dnsmasq() { stop(); }
  Dnsmasq(const Dnsmasq&) = delete;
  Dnsmasq& operator=(const Dnsmasq&) = delete;

  // Starts dnsmasq unless it runs. The hosts file should exist first.
  Status start();
  // True while the process runs (reaps it once it has exited).
  bool running();
  // SIGHUP: re-read the hosts file and clear the cache.
  Status reload();
  // The wildcard domains of the next start().
  void setWildcards(std::vector<HostEntry> wildcards) { config_.wildcards = std::move(wildcards); }
  // SIGTERM, then SIGKILL after `grace`.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(2));
  pid_t pid() const { return process_.pid(); }
  const DnsmasqConfig& config() const { return config_; }

 private:
  DnsmasqConfig config_;
  ChildProcess process_;
};

}  // namespace minik8s::dns
