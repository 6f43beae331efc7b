#include "cli/mesh_command.h"

#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/api_client_flags.h"
#include "cli/stop_signals.h"
#include "client/kubeconfig.h"
#include "common/command.h"
#include "common/logging.h"
#include "mesh/config_watcher.h"
#include "mesh/interception.h"
#include "mesh/mesh_config.h"
#include "mesh/proxy/sidecar_proxy.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::mesh_cmd {

namespace {

[[noreturn]] void fatal(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  std::exit(1);
}

// In a pod: the service account; elsewhere --kubeconfig, --server, $KUBECONFIG or the server's.
client::ClientConfig configFor(ApiClientFlags& flags, bool inCluster) {
  if (inCluster) {
    auto config = flags.clientConfigOrInCluster();
    if (!config.ok()) fatal(config.status());
    return *config;
  }
  if (flags.kubeconfig.empty() && flags.server.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    flags.kubeconfig = env ? env : "/var/lib/minik8s/server/kubeconfig";
  }
  auto config = flags.clientConfig();
  if (!config.ok()) fatal(config.status());
  return *config;
}

std::vector<json> listAll(client::RestClient& rest, const client::Resource& r, bool required) {
  auto list = rest.list(r, "");
  if (!list.ok()) {
    if (required) fatal(list.status());
    return {};  // the rules' CRDs are not installed yet
  }
  return list->value("items", json::array()).get<std::vector<json>>();
}

struct ServicesFlags {
  ApiClientFlags api;
  std::string ns, output;
};

void printServices(const mesh::MeshConfig& config, const std::string& ns) {
  std::printf("%-12s %-20s %-16s %-16s %s\n", "NAMESPACE", "NAME", "VIRTUAL-IP", "PORTS",
              "ENDPOINTS");
  for (const auto& [key, svc] : config.services) {
    if (!ns.empty() && svc.ns != ns) continue;
    std::string ports, endpoints;
    for (const auto& p : svc.ports) {
      ports += (ports.empty() ? "" : ",") + std::to_string(p.port) + "/" +
               (p.appProtocol.empty() ? p.protocol : p.appProtocol);
      for (const auto& e : p.endpoints) {
        std::string version;
        if (auto v = e.labels.find("version"); v != e.labels.end()) version = "(" + v->second + ")";
        endpoints += (endpoints.empty() ? "" : ",") + e.ip + ":" + std::to_string(e.port) + version;
      }
    }
    std::printf("%-12s %-20s %-16s %-16s %s\n", svc.ns.c_str(), svc.name.c_str(),
                svc.clusterIP.empty() ? "<none>" : svc.clusterIP.c_str(), ports.c_str(),
                endpoints.empty() ? "<none>" : endpoints.c_str());
  }
}

void addServicesCommand(CLI::App& mesh) {
  auto f = std::make_shared<ServicesFlags>();
  auto* cmd = mesh.add_subcommand(
      "services", "List every service with its virtual IP, ports and endpoints (the registry)");
  cmd->add_option("-n,--namespace", f->ns, "only this namespace");
  cmd->add_option("-o,--output", f->output, "json for the whole registry as JSON");
  f->api.addTo(cmd);
  cmd->callback([f] {
    client::RestClient rest(configFor(f->api, false));
    namespace res = client::resources;
    auto config = mesh::buildMeshConfig(
        listAll(rest, res::kServices, true), listAll(rest, res::kEndpoints, true),
        listAll(rest, res::kPods, true), listAll(rest, mesh::kVirtualServices, false),
        listAll(rest, mesh::kDestinationRules, false), 0);
    if (f->output == "json") {
      std::cout << mesh::meshConfigToJson(*config).dump(2) << "\n";
    } else {
      printServices(*config, f->ns);
    }
  });
}

struct ProxyFlags {
  ApiClientFlags api;
  mesh::ProxyOptions options;
};

void addProxyCommand(CLI::App& app) {
  auto f = std::make_shared<ProxyFlags>();
  auto* cmd = app.add_subcommand("mesh-proxy", "Run the mesh sidecar (what a meshed pod runs)");
  cmd->add_option("--outbound-port", f->options.outboundPort)->capture_default_str();
  cmd->add_option("--inbound-port", f->options.inboundPort)->capture_default_str();
  cmd->add_option("--metrics-port", f->options.metricsPort)->capture_default_str();
  f->api.addTo(cmd);
  cmd->callback([f] {
    initLogging("info", "mesh-proxy");
    sigset_t signals = blockStopSignals();
    client::RestClient rest(configFor(f->api, true));
    mesh::SidecarProxy proxy(f->options);
    mesh::ConfigWatcher watcher(rest, [&proxy](std::shared_ptr<const mesh::MeshConfig> c) {
      LOG_INFO("mesh config version {}: {} services", c->version, c->services.size());
      proxy.setConfig(std::move(c));
    });
    if (Status s = proxy.start(); !s.ok()) fatal(s);
    watcher.start();
    int sig = waitForStopSignal(signals);
    LOG_INFO("signal {}: stopping the mesh proxy", sig);
    watcher.stop();
    proxy.stop();
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
    if (!r.ok()) fatal(r.status());
    std::cout << "mesh-init: outbound to :" << f->options.outboundPort
              << ", inbound to :" << f->options.inboundPort << ", UID " << f->options.proxyUid
              << " excluded\n";
  });
}

}  // namespace

}  // namespace minik8s::cli::mesh_cmd

namespace minik8s::cli {

void addMeshCommands(CLI::App& app) {
  auto* mesh = app.add_subcommand("mesh", "The service mesh: registry and rules");
  mesh->require_subcommand(1);
  mesh_cmd::addServicesCommand(*mesh);
  mesh_cmd::addProxyCommand(app);
  mesh_cmd::addInitCommand(app);
}

}  // namespace minik8s::cli
