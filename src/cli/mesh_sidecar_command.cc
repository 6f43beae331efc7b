#include "cli/mesh_sidecar_command.h"

#include <netdb.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "cli/stop_signals.h"
#include "common/command.h"
#include "common/http_client.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "mesh/config_watcher.h"
#include "mesh/discovery_client.h"
#include "mesh/discovery_server.h"
#include "mesh/interception.h"
#include "mesh/mesh_resources.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "mesh/workload_certificate.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::mesh_sidecar_cmd {

namespace {

void addProxyMetricsCommand(CLI::App& app) {
  auto port = std::make_shared<int>(15090);
  auto* cmd = app.add_subcommand(
      "mesh-proxy-metrics",
      "Print the local sidecar's metrics (what `mesh rollout` reads through pods/exec)");
  cmd->add_option("--metrics-port", *port)->capture_default_str();
  cmd->callback([port] {
    http::Client client("http://127.0.0.1:" + std::to_string(*port));
    auto res = client.get("/metrics");
    if (!res.ok()) exitWithError(res.status());
    if (res->status != 200)
      exitWithError(Status::Unavailable("metrics answered " + std::to_string(res->status)));
    std::cout << res->body;
  });
}

struct ProxyFlags {
  ApiClientFlags api;
  mesh::ProxyOptions options;
  std::string drain = "3s";
  int certTtlSeconds = static_cast<int>(mesh::kDefaultWorkloadCertTtl.count());
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
  bool mtls = true;
  std::string discovery = "auto";
  std::string discoveryCa;
};

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// True when `host` has an address (the pod's resolver: cluster DNS).
bool nameResolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (res) ::freeaddrinfo(res);
  return rc == 0;
}

// The pod's default gateways (the node's address on the pod network) from /proc/net/route.
std::vector<std::string> defaultGateways() {
  std::vector<std::string> out;
  std::ifstream in("/proc/net/route");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway;
    fields >> iface >> destination >> gateway;
    if (destination != "00000000" || gateway.size() != 8) continue;
    unsigned long g = std::stoul(gateway, nullptr, 16);  // little-endian
    out.push_back(std::to_string(g & 0xff) + "." + std::to_string((g >> 8) & 0xff) + "." +
                  std::to_string((g >> 16) & 0xff) + "." + std::to_string((g >> 24) & 0xff));
  }
  return out;
}

// The workload's SPIFFE identity from its service-account token, and the CSR loop feeding the
// proxy its certificate (mesh/workload_certificate.h); null (plain text only) outside a pod.
std::unique_ptr<mesh::WorkloadCertificateManager> startIdentity(ProxyFlags& f,
                                                                client::RestClient& rest,
                                                                mesh::SidecarProxy& proxy) {
  if (!f.mtls) return nullptr;
  std::string token = readWholeFile(f.serviceAccountDir + "/token");
  std::string ca = readWholeFile(f.serviceAccountDir + "/ca.crt");
  auto id = mesh::workloadOfToken(token);
  if (!id.ok() || ca.empty()) {
    LOG_WARN("mesh identity: no service account token or ca.crt under {} ({}): plain text only",
             f.serviceAccountDir, id.ok() ? "no ca.crt" : id.status().message());
    return nullptr;
  }
  mesh::WorkloadCertificateOptions o;
  o.id = *id;
  o.podName = f.options.podName;
  o.caPem = ca;
  o.ttl = std::chrono::seconds(f.certTtlSeconds);
  auto manager = std::make_unique<mesh::WorkloadCertificateManager>(
      rest, o, [&proxy](const mesh::WorkloadCredentials& c) {
        if (Status s = proxy.setCredentials(c); !s.ok()) LOG_WARN("mesh identity: {}", s.message());
      });
  manager->start();
  return manager;
}

void addProxyCommand(CLI::App& app) {
  auto f = std::make_shared<ProxyFlags>();
  auto* cmd = app.add_subcommand("mesh-proxy", "Run the mesh sidecar (what a meshed pod runs)");
  cmd->add_option("--outbound-port", f->options.outboundPort)->capture_default_str();
  cmd->add_option("--inbound-port", f->options.inboundPort)->capture_default_str();
  cmd->add_option("--metrics-port", f->options.metricsPort)->capture_default_str();
  cmd->add_option("--drain-duration", f->drain,
                  "After SIGTERM, keep serving this long (the pod's endpoints go first, as "
                  "Istio's terminationDrainDuration)")
      ->capture_default_str();
  cmd->add_option("--cert-ttl-seconds", f->certTtlSeconds,
                  "Validity the workload certificate is asked for (renewed at half of it)")
      ->capture_default_str();
  cmd->add_option("--service-account-dir", f->serviceAccountDir)->capture_default_str();
  cmd->add_flag("!--no-mtls", f->mtls, "No workload certificate: plain text only");
  cmd->add_option("--discovery-address", f->discovery,
                  "The mesh discovery server streaming this proxy its configuration "
                  "(`minik8s mesh-discovery`, e.g. https://istiod.istio-system.svc:15012); "
                  "\"none\": watch the API server itself; \"auto\": istiod's Service when its "
                  "name resolves (mesh install-discovery), else none")
      ->envname("MESH_DISCOVERY_ADDRESS")
      ->capture_default_str();
  cmd->add_option("--discovery-ca-file", f->discoveryCa,
                  "CA of an https:// discovery server (default: the service account's ca.crt)");
  f->api.addTo(cmd);
  cmd->callback([f] {
    initLogging("info", "mesh-proxy");
    auto drain = parseGoDuration(f->drain);
    if (!drain)
      exitWithError(Status::BadRequest("--drain-duration: \"" + f->drain + "\" is no duration"));
    sigset_t signals = blockStopSignals();
    client::ClientConfig apiConfig = valueOrExit(f->api.clientConfigOrInCluster());
    client::RestClient rest(apiConfig);
    if (const char* ns = std::getenv("POD_NAMESPACE")) f->options.podNamespace = ns;
    if (const char* name = std::getenv("POD_NAME")) f->options.podName = name;
    f->options.probeSources = defaultGateways();
    mesh::SidecarProxy proxy(f->options);
    auto apply = [&proxy](std::shared_ptr<const mesh::MeshConfig> c) {
      LOG_INFO("mesh config version {}: {} services", c->version, c->services.size());
      proxy.setConfig(std::move(c));
    };
    // The configuration: streamed by the discovery server, or (none) watched here.
    std::unique_ptr<mesh::ConfigWatcher> watcher;
    std::unique_ptr<mesh::DiscoveryClient> discovery;
    if (f->discovery == "auto") {
      f->discovery = nameResolves(mesh::kDiscoveryHost)
                         ? "https://" + std::string(mesh::kDiscoveryHost) + ":" +
                               std::to_string(mesh::kDiscoveryPort)
                         : "none";
    }
    LOG_INFO("mesh config from {}", f->discovery == "none" ? "the API server (own watches)"
                                                           : "discovery at " + f->discovery);
    if (f->discovery == "none") {
      watcher = std::make_unique<mesh::ConfigWatcher>(rest, apply);
    } else {
      mesh::DiscoveryClientOptions o;
      o.url = f->discovery;
      o.tls.caPem =
          readWholeFile(f->discoveryCa.empty() ? f->serviceAccountDir + "/ca.crt" : f->discoveryCa);
      std::string tokenFile = f->serviceAccountDir + "/token";
      std::string apiToken = apiConfig.bearerToken;
      o.token = [tokenFile, apiToken] {
        std::string t = readWholeFile(tokenFile);
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
        return t.empty() ? apiToken : t;
      };
      o.pod = f->options.podNamespace + "/" + f->options.podName;
      discovery = std::make_unique<mesh::DiscoveryClient>(o, apply);
    }
    if (Status s = proxy.start(); !s.ok()) exitWithError(s);
    if (watcher) watcher->start();
    if (discovery) discovery->start();
    auto identity = startIdentity(*f, rest, proxy);
    int sig = waitForStopSignal(signals);
    if (sig == SIGTERM && drain->count() > 0) {
      // The pod is terminating: its endpoints are being removed and the callers' sidecars stop
      // choosing it within ~50 ms; requests already on their way still need this one.
      LOG_INFO("signal {}: draining for {} ms", sig, drain->count());
      std::this_thread::sleep_for(*drain);
    }
    LOG_INFO("signal {}: stopping the mesh proxy", sig);
    if (identity) identity->stop();
    if (watcher) watcher->stop();
    if (discovery) discovery->stop();
    proxy.stop();
  });
}

struct DiscoveryFlags {
  ApiClientFlags api;
  std::string listen = "0.0.0.0:" + std::to_string(mesh::kDiscoveryPort);
  std::string certFile, keyFile;
  bool inCluster = true;
};

void addDiscoveryCommand(CLI::App& app) {
  auto f = std::make_shared<DiscoveryFlags>();
  auto* cmd = app.add_subcommand(
      "mesh-discovery",
      "Run the mesh control plane: one watch of the registry and the rules, streamed to every "
      "sidecar (istiod's discovery)");
  cmd->add_option("--listen", f->listen)->capture_default_str();
  cmd->add_option("--tls-cert-file", f->certFile, "Serve HTTPS with this certificate (PEM)");
  cmd->add_option("--tls-private-key-file", f->keyFile, "... and this key");
  f->api.addTo(cmd);
  cmd->callback([f] {
    initLogging("info", "mesh-discovery");
    sigset_t signals = blockStopSignals();
    // In a pod its service account (which may create TokenReviews), else --kubeconfig/--server.
    client::RestClient rest(valueOrExit(f->api.clientConfigOrInCluster()));
    mesh::DiscoveryServerOptions o;
    if (!f->certFile.empty() || !f->keyFile.empty()) {
      http::TlsServerConfig tls;
      tls.certPem = readWholeFile(f->certFile);
      tls.keyPem = readWholeFile(f->keyFile);
      if (tls.certPem.empty() || tls.keyPem.empty())
        exitWithError(
            Status::BadRequest("--tls-cert-file and --tls-private-key-file: both must name "
                               "readable PEM files"));
      o.tls = tls;
    }
    mesh::TokenReviewAuthenticator authenticator(rest);
    mesh::DiscoveryServer server(authenticator, o);
    mesh::ConfigWatcher watcher(rest, [&server](std::shared_ptr<const mesh::MeshConfig> c) {
      LOG_INFO("mesh config version {}: {} services", c->version, c->services.size());
      server.setConfig(std::move(c));
    });
    watcher.start();
    if (Status s = server.start(f->listen); !s.ok()) exitWithError(s);
    LOG_INFO("mesh discovery serving on {} (port {})", f->listen, server.port());
    int sig = waitForStopSignal(signals);
    LOG_INFO("signal {}: stopping mesh discovery", sig);
    server.stop();
    watcher.stop();
  });
}

struct InitFlags {
  mesh::InterceptionOptions options;
  std::string iptablesRestore = "iptables-restore";
  bool print = false;
};

void addInitCommand(CLI::App& app) {
  auto f = std::make_shared<InitFlags>();
  auto* cmd = app.add_subcommand(
      "mesh-init", "Install the pod's iptables redirection to its sidecar (the init container)");
  cmd->add_option("--outbound-port", f->options.outboundPort)->capture_default_str();
  cmd->add_option("--inbound-port", f->options.inboundPort)->capture_default_str();
  cmd->add_option("--proxy-uid", f->options.proxyUid)->capture_default_str();
  cmd->add_option("--exclude-inbound-ports", f->options.excludeInboundPorts)
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--iptables-restore", f->iptablesRestore)->capture_default_str();
  cmd->add_flag("--print", f->print, "print the rules instead of installing them");
  cmd->callback([f] {
    std::string rules = mesh::interceptionRules(f->options);
    if (f->print) {
      std::cout << rules;
      return;
    }
    auto r = runChecked({f->iptablesRestore, "--noflush"}, rules);
    if (!r.ok()) exitWithError(r.status());
    std::cout << "mesh-init: outbound to :" << f->options.outboundPort
              << ", inbound to :" << f->options.inboundPort << ", UID " << f->options.proxyUid
              << " excluded\n";
  });
}

}  // namespace

}  // namespace minik8s::cli::mesh_sidecar_cmd

namespace minik8s::cli {

void addMeshSidecarCommands(CLI::App& app) {
  mesh_sidecar_cmd::addProxyCommand(app);
  mesh_sidecar_cmd::addDiscoveryCommand(app);
  mesh_sidecar_cmd::addProxyMetricsCommand(app);
  mesh_sidecar_cmd::addInitCommand(app);
}

}  // namespace minik8s::cli
