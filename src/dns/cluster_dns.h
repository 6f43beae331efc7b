// ClusterDns: the node's cluster DNS server. It watches Services and EndpointSlices, renders the
// hosts file (hosts_file.h) into dataDir, and runs dnsmasq (dnsmasq.h) on listenAddress:port in
// the current network namespace, sending it SIGHUP when the file changes (coalesced: at most every
// 100 ms, within that of a change) and restarting it if it exits. Pods reach it through the
// kube-dns Service (10.96.0.10), whose endpoints are the nodes' DNS servers (dns_endpoint.h).
//
// Thread-safety: start()/stop() from one owner thread; setExtraHosts() from any thread.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "client/bounded_frequency_runner.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/shared_informers.h"
#include "dns/dnsmasq.h"
#include "dns/hosts_file.h"

namespace minik8s::dns {

struct DnsOptions {
  std::string listenAddress;  // the node's IP
  int port = 53;
  std::string dataDir;  // hosts file, pid file and dnsmasq log go here
  std::string dnsmasqPath = "dnsmasq";
  std::string domain = "cluster.local";
  int ttlSeconds = 5;
  std::chrono::milliseconds minSyncInterval{100};
  std::chrono::milliseconds maxSyncInterval{30000};
  std::chrono::milliseconds retryInterval{1000};
  std::chrono::milliseconds informerSyncTimeout{10000};
  // The process' shared informers (the agent's), for Services and EndpointSlices; own ones when
  // null.
  client::SharedInformers* informers = nullptr;
};

class ClusterDns {
 public:
  ClusterDns(client::RestClient& client, DnsOptions options);
  ~ClusterDns();
  ClusterDns(const ClusterDns&) = delete;
  ClusterDns& operator=(const ClusterDns&) = delete;

  // Starts the informers, waits for their first list (up to informerSyncTimeout), writes the
  // hosts file and starts dnsmasq. Fails when the data dir or dnsmasq cannot be used.
  Status start();
  void stop();

  // Extra names served besides the services (Dns objects' hosts -> the gateway's IP). Replaces
  // the previous set; the hosts file follows within minSyncInterval.
  void setExtraHosts(std::vector<HostEntry> entries);

  std::string hostsFilePath() const { return options_.dataDir + "/hosts"; }
  int64_t reloads() const;  // SIGHUPs sent so far

 private:
  bool sync();
  Status writeHostsFile(const std::string& text);
  Status waitUntilServing();

  client::RestClient& client_;
  DnsOptions options_;
  std::unique_ptr<client::Informer> services_;
  std::unique_ptr<client::Informer> slices_;
  Dnsmasq dnsmasq_;
  client::CoalescedSync sync_;  // after the informers it wires
  bool started_ = false;

  mutable std::mutex mu_;
  std::vector<HostEntry> extraHosts_;
  int64_t reloads_ = 0;

  std::string written_;  // the hosts file's current content (sync thread only)
};

}  // namespace minik8s::dns
