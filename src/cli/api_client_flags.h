// How the standalone components (`minik8s scheduler`, `controller-manager`, `proxy`) reach the
// API server: `--kubeconfig FILE` (TLS, credentials; kube-* components use the same flag) and
// `--server URL`, which overrides the kubeconfig's server or, alone, names a server reached
// without credentials (a --insecure-http server). Not thread-safe; used while parsing flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::cli {

// The admin kubeconfig `minik8s server` writes with its default --data-dir.
inline constexpr const char* kLocalServerKubeconfig = "/var/lib/minik8s/server/kubeconfig";

struct ApiClientFlags {
  std::string server;
  std::string kubeconfig;

  void addTo(CLI::App* cmd);
  // BadRequest when neither flag is given or the kubeconfig cannot be read.
  Result<client::ClientConfig> clientConfig() const;
  // For a component that also runs in a pod (mesh proxy, serverless gateway): with neither flag,
  // the pod's service account (client::inClusterConfig); else clientConfig().
  Result<client::ClientConfig> clientConfigOrInCluster() const;
  // For a user's command run on a server's machine (`minik8s function`, `workflow`, `addons`,
  // `slurm`): with neither flag, $KUBECONFIG, else the local server's admin kubeconfig
  // (kLocalServerKubeconfig); else clientConfig().
  Result<client::ClientConfig> clientConfigOrLocal() const;
};

}  // namespace minik8s::cli
