#include "cli/proxy_command.h"

#include <signal.h>

#include <memory>

#include "cli/api_client_flags.h"
#include "cli/stop_signals.h"
#include "client/rest_client.h"
#include "common/logging.h"
#include "dns/cluster_dns.h"
#include "dns/dns_endpoint.h"
#include "proxy/service_proxy.h"

namespace minik8s::cli {

namespace {

struct ProxyFlags {
  ApiClientFlags api;
  std::string nodeName;
  std::string nodeIP;
  std::string clusterCIDR = "10.244.0.0/16";
  std::string dnsListen;
  int dnsPort = 53;
  std::string dnsDataDir;
  std::string dnsmasq = "dnsmasq";
  std::string proxyMode = "iptables";
  bool cleanup = false;
  std::string logLevel = "info";
};

int runProxy(const ProxyFlags& f) {
  initLogging(f.logLevel, "proxy");
  if (f.cleanup) {
    Status s = proxy::cleanupAllProxyRules(proxy::ProxyOptions{});
    if (!s.ok()) {
      LOG_ERROR("cleanup: {}", s.message());
      return 1;
    }
    return 0;
  }
  sigset_t signals = blockStopSignals();

  auto apiConfig = f.api.clientConfig();
  if (!apiConfig.ok()) {
    LOG_ERROR("{}", apiConfig.status().message());
    return 2;
  }
  client::RestClient client(*apiConfig);
  proxy::ProxyOptions po;
  po.mode = *proxy::parseProxyMode(f.proxyMode);  // checked by the flag
  po.nodeName = f.nodeName;
  if (!f.nodeIP.empty()) po.nodeIPs = {f.nodeIP};
  po.clusterCIDR = f.clusterCIDR;
  proxy::ServiceProxy serviceProxy(client, po);
  if (Status s = serviceProxy.start(); !s.ok()) {
    LOG_ERROR("service proxy: {}", s.message());
    return 1;
  }
  std::unique_ptr<dns::ClusterDns> clusterDns;
  if (!f.dnsListen.empty()) {
    dns::DnsOptions dopts;
    dopts.listenAddress = f.dnsListen;
    dopts.port = f.dnsPort;
    dopts.dataDir = f.dnsDataDir.empty() ? "/var/lib/minik8s/dns-" + f.nodeName : f.dnsDataDir;
    dopts.dnsmasqPath = f.dnsmasq;
    clusterDns = std::make_unique<dns::ClusterDns>(client, dopts);
    if (Status s = clusterDns->start(); !s.ok()) {
      LOG_ERROR("cluster DNS: {}", s.message());
      serviceProxy.stop();
      return 1;
    }
    if (f.dnsPort == 53 && !f.nodeName.empty()) {
      if (Status s = dns::ensureNodeDnsEndpoint(client, f.nodeName, f.dnsListen); !s.ok()) {
        LOG_WARN("kube-dns endpoint of {}: {}", f.nodeName, s.message());
      }
    }
  }
  int sig = waitForStopSignal(signals);
  LOG_INFO("signal {}: stopping (rules stay until `proxy --cleanup`)", sig);
  if (clusterDns) clusterDns->stop();
  serviceProxy.stop();
  return 0;
}

}  // namespace

void addProxyCommand(CLI::App& app) {
  auto flags = std::make_shared<ProxyFlags>();
  CLI::App* cmd =
      app.add_subcommand("proxy", "Run the service proxy (and cluster DNS) of a node by itself");
  cmd->group("");  // hidden: the agent runs these
  flags->api.addTo(cmd);
  cmd->add_option("--node-name", flags->nodeName, "Name of this node");
  cmd->add_option("--node-ip", flags->nodeIP, "This node's address");
  cmd->add_option("--cluster-cidr", flags->clusterCIDR,
                  "Pod network; traffic to a ClusterIP from outside it is masqueraded")
      ->capture_default_str();
  cmd->add_option("--dns-listen", flags->dnsListen,
                  "Also serve cluster DNS with dnsmasq on this address");
  cmd->add_option("--dns-port", flags->dnsPort, "Port of the cluster DNS")->capture_default_str();
  cmd->add_option("--dns-data-dir", flags->dnsDataDir,
                  "Where the DNS hosts file and dnsmasq's log go (default "
                  "/var/lib/minik8s/dns-<node>)");
  cmd->add_option("--dnsmasq", flags->dnsmasq, "The dnsmasq program")->capture_default_str();
  cmd->add_option("--proxy-mode", flags->proxyMode, "iptables or nftables")
      ->check(CLI::IsMember({"iptables", "nftables"}))
      ->capture_default_str();
  cmd->add_flag("--cleanup", flags->cleanup,
                "Remove every rule, chain and table the proxy adds (both modes), then exit");
  cmd->add_option("--log-level", flags->logLevel, "trace, debug, info, warn or error")
      ->capture_default_str();
  cmd->callback([flags] { std::exit(runProxy(*flags)); });
}

}  // namespace minik8s::cli
