// NodeCredentials: the node's own identity, obtained like a kubelet's TLS bootstrap.
//
// The agent keeps two key pairs under <agent data dir>/pki/:
//   kubelet-client.{key,crt}   CN system:node:<name>, O system:nodes, client auth: every API
//                              client of the agent (kubelet, network agent, proxy, DNS) uses it
//                              instead of the join token
//   kubelet-serving.{key,crt}  CN system:node:<name>, SANs = node name and addresses, server
//                              auth: port 10250 serves TLS with it
// A certificate that is missing, unreadable, expired or within `renewBeforeFraction` (20%) of its
// lifetime from expiry is requested again: a new key, a CertificateSigningRequest object named
// node-csr-<random> (signer kube-apiserver-client-kubelet or kubelet-serving), then polling the
// object until status.certificate appears (the controller manager's CSR approving and signing
// controllers, see controllers/certificates/), it is Denied or Failed (an error naming the
// condition's reason and message) or `waitTimeout` passes (Timeout). The client certificate is
// requested with the join token the first time and with the current certificate when renewing;
// the serving certificate with the client certificate. Which identity talks to the API server is
// the caller's choice through ClientFactory, so the same code runs with fakes in tests.
//
// Not thread-safe: one thread uses it (the agent's start-up, then its CertificateManager).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "common/pki.h"
#include "common/status.h"

namespace minik8s::kubelet {

struct NodeCredentialsOptions {
  std::string pkiDir;  // <agent data dir>/pki (created when missing)
  std::string nodeName;
  std::vector<std::string> servingIps;       // the node's addresses (serving certificate SANs)
  std::vector<std::string> servingDnsNames;  // the node name is always added
  double renewBeforeFraction = 0.2;
  std::chrono::seconds waitTimeout{120};
  std::chrono::milliseconds pollInterval{250};
  std::optional<std::chrono::seconds> expiration;  // spec.expirationSeconds; unset = signer's
  std::function<std::chrono::system_clock::time_point()> now = [] {
    return std::chrono::system_clock::now();
  };
};

// Builds an API client speaking as `cert` (client certificate), or with the join token when
// `cert` is null.
using ClientFactory =
    std::function<std::unique_ptr<client::RestClient>(const pki::KeyAndCert* cert)>;

// Why a stored certificate must be requested again (kValid: it need not).
enum class CredentialState { kMissing, kExpired, kRenewalDue, kValid };
// `renewBeforeFraction` of the lifetime notBefore..notAfter before notAfter the renewal is due.
CredentialState credentialState(const pki::CertInfo& cert,
                                std::chrono::system_clock::time_point now,
                                double renewBeforeFraction);

// Creates a CSR object for `csrPem` and waits for its certificate (see above). Returns the
// certificate PEM.
Result<std::string> requestCertificate(client::RestClient& api, const std::string& csrPem,
                                       const std::string& signerName,
                                       const std::vector<std::string>& usages,
                                       const NodeCredentialsOptions& options);

// How the agent trusts the API server (before it has any credential of its own).
struct ServerTrust {
  std::string caPem;  // the cluster CA; "" for http:// servers; unverified when insecure
  bool insecureSkipVerify = false;  // only when asked for (--insecure-skip-tls-verify)
};

// The cluster CA for `serverUrl` (the first of a comma-separated list is asked):
// - http:// servers need none;
// - `caFilePem` (from --ca-file / node.yaml caFile) when given; refused (BadRequest) when the
//   join token carries a CA hash that does not match it;
// - else GET <server>/cacerts without verification, accepted only when its hash matches the
//   join token's (Unauthorized otherwise: someone else's server);
// - a token without hash and no CA file: refused unless `insecureSkipVerify` (then /cacerts is
//   taken as it comes: the agent's own TLS server needs it to check the API server's calls).
Result<ServerTrust> discoverServerTrust(const std::string& serverUrl, const std::string& caFilePem,
                                        const std::string& joinToken, bool insecureSkipVerify);

class NodeCredentials {
 public:
  explicit NodeCredentials(NodeCredentialsOptions options);

  std::string clientKeyPath() const { return options_.pkiDir + "/kubelet-client.key"; }
  std::string clientCertPath() const { return options_.pkiDir + "/kubelet-client.crt"; }
  std::string servingKeyPath() const { return options_.pkiDir + "/kubelet-serving.key"; }
  std::string servingCertPath() const { return options_.pkiDir + "/kubelet-serving.crt"; }

  // The stored client credential and its state (kMissing when absent or unreadable).
  CredentialState clientState() const;
  CredentialState servingState() const;

  // Keeps a valid stored client certificate, else requests one: as the current certificate when
  // renewal is due (falling back to the join token if that fails), with the join token
  // otherwise. The result is written before it is returned. `renew`: request a new one even
  // when the stored one is still valid (the rotation of certificate_manager.h).
  Result<pki::KeyAndCert> ensureClientCertificate(const ClientFactory& clients,
                                                  bool renew = false);
  // The same for the serving certificate, always asked for as the client certificate `client`.
  Result<pki::KeyAndCert> ensureServingCertificate(const ClientFactory& clients,
                                                   const pki::KeyAndCert& client,
                                                   bool renew = false);

 private:
  CredentialState stateOf(const std::string& certPath) const;
  Result<pki::KeyAndCert> load(const std::string& keyPath, const std::string& certPath) const;
  Result<pki::KeyAndCert> obtain(client::RestClient& api, const pki::CertSpec& spec,
                                 const std::string& signer, const std::vector<std::string>& usages,
                                 const std::string& keyPath, const std::string& certPath);

  NodeCredentialsOptions options_;
};

}  // namespace minik8s::kubelet
