#include "cli/mesh_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/api_client_flags.h"
#include "cli/exit_error.h"
#include "cli/mesh_rollout_command.h"
#include "cli/mesh_sidecar_command.h"
#include "client/kubeconfig.h"
#include "common/file_util.h"
#include "common/http_client.h"
#include "mesh/config_watcher.h"
#include "mesh/discovery_server.h"
#include "mesh/mesh_config.h"
#include "mesh/mesh_resources.h"

// Helpers in a namespace of their own: cli/ is a unity build.
namespace minik8s::cli::mesh_cmd {

namespace {

// --kubeconfig, --server, $KUBECONFIG or the local server's.
client::ClientConfig configFor(const ApiClientFlags& flags) {
  return valueOrExit(flags.clientConfigOrLocal());
}

std::vector<json> listAll(client::RestClient& rest, const client::Resource& r, bool required) {
  auto list = rest.list(r, "");
  if (!list.ok()) {
    if (required) exitWithError(list.status());
    return {};  // the rules' CRDs are not installed yet
  }
  return list->value("items", json::array()).get<std::vector<json>>();
}

struct ServicesFlags {
  ApiClientFlags api;
  std::string ns, output, discovery;
};

// The registry as the discovery server serves it (GET /debug/registryz), read with the
// kubeconfig's credentials.
std::shared_ptr<const mesh::MeshConfig> registryFromDiscovery(ServicesFlags& f, json* raw) {
  client::ClientConfig config = configFor(f.api);
  http::Client client(f.discovery, config.tls);
  std::vector<std::pair<std::string, std::string>> headers;
  if (!config.bearerToken.empty())
    headers.emplace_back("Authorization", "Bearer " + config.bearerToken);
  auto res = client.request("GET", "/debug/registryz", "", headers);
  if (!res.ok()) exitWithError(res.status());
  if (res->status != 200) exitWithError(client::statusFromResponse(res->status, res->body));
  *raw = json::parse(res->body, nullptr, false);
  if (!raw->is_object())
    exitWithError(Status::Internal("the discovery server answered no JSON object"));
  // The user's view carries what printServices() shows.
  auto out = std::make_shared<mesh::MeshConfig>();
  for (const auto& s : raw->value("services", json::array())) {
    mesh::MeshService svc;
    svc.ns = s.value("namespace", "");
    svc.name = s.value("name", "");
    svc.clusterIP = s.value("clusterIP", "");
    for (const auto& p : s.value("ports", json::array())) {
      mesh::MeshServicePort port;
      port.port = p.value("port", 0);
      port.protocol = p.value("protocol", "TCP");
      for (const auto& e : p.value("endpoints", json::array())) {
        mesh::MeshEndpoint me;
        me.ip = e.value("ip", "");
        me.port = e.value("port", 0);
        me.labels = e.value("labels", std::map<std::string, std::string>{});
        port.endpoints.push_back(std::move(me));
      }
      svc.ports.push_back(std::move(port));
    }
    out->services.emplace(svc.key(), std::move(svc));
  }
  return out;
}

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
  cmd->add_option("--discovery", f->discovery,
                  "Read the registry from this mesh discovery server (its /debug/registryz, "
                  "e.g. http://127.0.0.1:15012) instead of the API server");
  f->api.addTo(cmd);
  cmd->callback([f] {
    if (!f->discovery.empty()) {
      json raw;
      auto config = registryFromDiscovery(*f, &raw);
      if (f->output == "json") {
        std::cout << raw.dump(2) << "\n";
      } else {
        printServices(*config, f->ns);
      }
      return;
    }
    client::RestClient rest(configFor(f->api));
    namespace res = client::resources;
    auto config = mesh::buildMeshConfig(
        {.services = listAll(rest, res::kServices, true),
         .endpoints = listAll(rest, res::kEndpoints, true),
         .pods = listAll(rest, res::kPods, true),
         .virtualServices = listAll(rest, mesh::kVirtualServices, false),
         .destinationRules = listAll(rest, mesh::kDestinationRules, false),
         .peerAuthentications = listAll(rest, mesh::kPeerAuthentications, false)},
        0);
    if (f->output == "json") {
      std::cout << mesh::meshConfigToJson(*config).dump(2) << "\n";
    } else {
      printServices(*config, f->ns);
    }
  });
}

struct InstallDiscoveryFlags {
  ApiClientFlags api;
  std::string pkiDir = "/var/lib/minik8s/server/pki";
  std::string image = "minik8s/mesh-proxy:latest";
  bool wait = true;
};

void addInstallDiscoveryCommand(CLI::App& mesh) {
  auto f = std::make_shared<InstallDiscoveryFlags>();
  auto* cmd = mesh.add_subcommand(
      "install-discovery",
      "Install the mesh control plane (Deployment and Service istiod in istio-system, "
      "`minik8s mesh-discovery`): sidecars started afterwards get their configuration streamed "
      "from it instead of each watching the API server");
  cmd->add_option("--pki-dir", f->pkiDir,
                  "The server's pki directory (ca.crt, ca.key): the CA signs istiod's serving "
                  "certificate")
      ->capture_default_str();
  cmd->add_option("--image", f->image)->capture_default_str();
  cmd->add_flag("!--no-wait", f->wait, "Do not wait for the Deployment to be ready");
  f->api.addTo(cmd);
  cmd->callback([f] {
    client::RestClient rest(configFor(f->api));
    auto caCert = readFile(f->pkiDir + "/ca.crt");
    auto caKey = readFile(f->pkiDir + "/ca.key");
    if (!caCert.ok() || !caKey.ok() || caCert->empty() || caKey->empty())
      exitWithError(Status::BadRequest("--pki-dir: no readable ca.crt and ca.key in " + f->pkiDir));
    if (Status s = mesh::installMeshDiscovery(rest, f->image, *caCert, *caKey); !s.ok())
      exitWithError(s);
    std::cout << "mesh discovery: deployment.apps/istiod and service/istiod in "
              << mesh::kMeshRootNamespace << "\n";
    if (!f->wait) return;
    if (Status s = mesh::waitForMeshDiscovery(rest, std::chrono::seconds(120)); !s.ok())
      exitWithError(s);
    std::cout << "mesh discovery: ready at https://" << mesh::kDiscoveryHost << ":"
              << mesh::kDiscoveryPort << "\n";
  });
}

}  // namespace

}  // namespace minik8s::cli::mesh_cmd

namespace minik8s::cli {

void addMeshCommands(CLI::App& app) {
  auto* mesh = app.add_subcommand("mesh", "The service mesh: registry and rules");
  mesh->require_subcommand(1);
  mesh_cmd::addServicesCommand(*mesh);
  mesh_cmd::addInstallDiscoveryCommand(*mesh);
  addMeshRolloutCommand(*mesh);  // cli/mesh_rollout_command.h
  addMeshSidecarCommands(app);   // cli/mesh_sidecar_command.h
}

}  // namespace minik8s::cli
