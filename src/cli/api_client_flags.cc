#include "cli/api_client_flags.h"

#include <cstdlib>

#include "client/kubeconfig.h"

namespace minik8s::cli {

void ApiClientFlags::addTo(CLI::App* cmd) {
  cmd->add_option("--kubeconfig", kubeconfig,
                  "Kubeconfig with the API server, its CA and this component's credentials");
  cmd->add_option("--server", server,
                  "API server URL (overrides the kubeconfig's; alone: no credentials)");
}

Result<client::ClientConfig> ApiClientFlags::clientConfig() const {
  client::ClientConfig config;
  if (!kubeconfig.empty()) {
    auto loaded = client::loadKubeconfig(kubeconfig);
    if (!loaded.ok()) return loaded.status();
    config = *loaded;
  }
  if (!server.empty()) config.servers = server;
  if (config.servers.empty())
    return Status::BadRequest("give --kubeconfig (or --server) to reach the API server");
  return config;
}

Result<client::ClientConfig> ApiClientFlags::clientConfigOrInCluster() const {
  if (kubeconfig.empty() && server.empty()) return client::inClusterConfig();
  return clientConfig();
}

Result<client::ClientConfig> ApiClientFlags::clientConfigOrLocal() const {
  if (!kubeconfig.empty() || !server.empty()) return clientConfig();
  const char* env = std::getenv("KUBECONFIG");
  ApiClientFlags local;
  local.kubeconfig = env && *env ? env : kLocalServerKubeconfig;
  return local.clientConfig();
}

}  // namespace minik8s::cli
