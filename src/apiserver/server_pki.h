// The API server's certificates, created at first start under <data-dir>/pki and reused after:
// the cluster CA, the serving certificate (its SANs cover the loopback, the advertised address,
// the `kubernetes` service IP and names; re-issued when that set grows or it nears expiry), the
// client certificate the server presents to agents (kube-apiserver-kubelet-client), the admin
// client certificate of the kubeconfig, and the RSA key that signs service-account tokens.
// Other clients of the server (its in-process scheduler and controllers) get certificates
// issued in memory by issueClientCertificate. Not thread-safe while loading; the result is a
// plain value.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/pki.h"
#include "common/status.h"

namespace minik8s::apiserver {

struct ServerPki {
  std::string dir;                // <data-dir>/pki
  pki::KeyAndCert ca;             // ca.crt, ca.key
  pki::KeyAndCert serving;        // apiserver.crt, apiserver.key
  pki::KeyAndCert kubeletClient;  // apiserver-kubelet-client.crt/.key (O system:masters)
  pki::KeyAndCert admin;          // admin.crt/.key (kubernetes-admin, O system:masters)
  std::string serviceAccountKey;  // sa.key (RSA, PEM)
  std::string serviceAccountPub;  // sa.pub
  pki::CertSpec servingSpec;      // what the serving certificate is issued for (SANs, validity)

  std::string caFile() const { return dir + "/ca.crt"; }
};

struct ServerPkiOptions {
  std::string dataDir;
  std::vector<std::string> ipAddresses;  // SANs besides 127.0.0.1 (advertise, service IP)
  std::vector<std::string> dnsNames;     // SANs besides localhost and the kubernetes names
  // The serving certificate's lifetime (--serving-cert-duration; short ones test rotation).
  std::chrono::seconds servingValidity = std::chrono::hours(24 * 365);
};

// Loads what exists, creates what is missing, re-issues the serving certificate when a SAN is
// missing or less than 30 days remain.
Result<ServerPki> loadOrCreateServerPki(const ServerPkiOptions& options);

// Issues the serving certificate again (same CA, same SANs, a new key), writes apiserver.key and
// apiserver.crt (each renamed into place: a TLS server serving them by file picks the pair up at
// its next handshake) and updates `pki.serving`.
Status reissueServingCertificate(ServerPki& pki);

// A random secret (32 hex characters) kept in `path` (mode 0600), created when missing: the
// admin's bearer token.
Result<std::string> loadOrCreateSecretFile(const std::string& path);

// A client certificate for `user` in `groups`, signed by the cluster CA (not stored).
Result<pki::KeyAndCert> issueClientCertificate(const ServerPki& pki, const std::string& user,
                                               const std::vector<std::string>& groups);

}  // namespace minik8s::apiserver
