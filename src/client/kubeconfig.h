// Reads a kubeconfig file (the format kubectl uses) into the ClientConfig a RestClient needs.
//
// Supported: the current context or a named one; cluster server, certificate-authority(-data),
// insecure-skip-tls-verify, tls-server-name; user client-certificate(-data), client-key(-data),
// token, tokenFile. File paths are relative to the kubeconfig's directory. Not supported (an
// error says so): exec and auth-provider plugins. Thread-safe (no shared state).
#pragma once

#include <string>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::client {

// `context` "" means current-context. BadRequest for a malformed file or a missing entry,
// NotFound when a referenced file cannot be read.
Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context = "");

// The configuration of a program in a pod (client-go's rest.InClusterConfig): the API server at
// $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service account's token and CA from
// `dir` (/var/run/secrets/kubernetes.io/serviceaccount). NotFound outside a pod.
Result<ClientConfig> inClusterConfig(
    const std::string& dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace minik8s::client
