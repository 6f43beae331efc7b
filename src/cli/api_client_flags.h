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

struct ApiClientFlags {
  std::string server;
  std::string kubeconfig;

  void addTo(CLI::App* cmd);
  // BadRequest when neither flag is given or the kubeconfig cannot be read.
  Result<client::ClientConfig> clientConfig() const;
  // For a component that also runs in a pod (mesh proxy, serverless gateway): with neither flag,
  // the pod's service account (client::inClusterConfig); else clientConfig().
  Result<client::ClientConfig> clientConfigOrInCluster() const;
};

}  // namespace minik8s::cli
