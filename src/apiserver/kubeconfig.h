// Writes a kubeconfig a user points kubectl at (or an agent or controller uses). Thread-safe
// (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::apiserver {

// What a kubeconfig trusts and how its user authenticates; every PEM is embedded (base64
// *-data fields), so the file stands alone.
struct KubeconfigCredentials {
  std::string caPem;          // certificate-authority-data; "" = the system's trust
  std::string clientCertPem;  // client-certificate-data and ...
  std::string clientKeyPem;   // ... client-key-data (both or neither)
  std::string token;          // or a bearer token
  std::string userName = "admin";
};

// `serverUrl` like "https://127.0.0.1:6443". Written atomically (temp file + rename), mode 0600.
Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const KubeconfigCredentials& credentials,
                       const std::string& clusterName = "minik8s");

// Plain HTTP without credentials (the server before TLS): user "admin" with a username only.
Status writeKubeconfig(const std::string& path, const std::string& serverUrl,
                       const std::string& clusterName = "minik8s");

}  // namespace minik8s::apiserver
