// PKI for the cluster: keys, a self-signed cluster CA, certificates it issues, certificate
// signing requests (CSR, for node credentials) and checks of presented certificates. Built on
// OpenSSL; everything is PEM text so callers store it in files, kubeconfigs and API objects.
// Keys are ECDSA P-256 unless a function says otherwise. All functions are thread-safe (no
// shared state).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::pki {

struct KeyAndCert {
  std::string keyPem;   // PKCS#8 "PRIVATE KEY"
  std::string certPem;  // "CERTIFICATE"
};

// Subject, SANs and usages of a certificate to issue or request.
struct CertSpec {
  std::string commonName;                  // the user name for client certificates
  std::vector<std::string> organizations;  // the groups for client certificates
  std::vector<std::string> dnsNames;       // SANs
  std::vector<std::string> ipAddresses;    // SANs ("10.96.0.1", "127.0.0.1")
  bool serverAuth = false;                 // extendedKeyUsage serverAuth
  bool clientAuth = false;                 // extendedKeyUsage clientAuth
  std::chrono::seconds validity = std::chrono::hours(24 * 365);
};

// What a parsed certificate or CSR says.
struct CertInfo {
  std::string commonName;
  std::vector<std::string> organizations;
  std::vector<std::string> dnsNames;
  std::vector<std::string> ipAddresses;
  bool serverAuth = false, clientAuth = false, isCA = false;
  std::chrono::system_clock::time_point notBefore, notAfter;  // unset for a CSR
  std::string serialHex;                                      // "" for a CSR
};

// A new ECDSA P-256 private key (PEM).
Result<std::string> generateKey();
// A new RSA private key (PEM), for signing service-account tokens (RS256).
Result<std::string> generateRsaKey(int bits = 2048);
// The public key (PEM "PUBLIC KEY") of a private key.
Result<std::string> publicKeyOf(const std::string& privateKeyPem);

// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign) with a new key.
Result<KeyAndCert> createCA(const std::string& commonName,
                            std::chrono::hours validity = std::chrono::hours(24 * 365 * 10));
// A new key and a certificate for it signed by `ca`.
Result<KeyAndCert> issue(const KeyAndCert& ca, const CertSpec& spec);

// A CSR (PEM "CERTIFICATE REQUEST") for `keyPem` carrying the subject and SANs of `spec`.
Result<std::string> createCsr(const std::string& keyPem, const CertSpec& spec);
// Parses a CSR and checks its self-signature; InvalidArgument when malformed or forged.
Result<CertInfo> parseCsr(const std::string& csrPem);
// Signs the public key of `csrPem` with `ca`: subject and SANs come from the CSR, usages and
// validity from `usage` (its names are ignored). The CSR's signature is checked first.
Result<std::string> signCsr(const KeyAndCert& ca, const std::string& csrPem, const CertSpec& usage);

Result<CertInfo> parseCertificate(const std::string& certPem);
// When a certificate is due for rotation, as client-go's certificate manager decides: at
// notBefore + lifetime * (minFraction + (maxFraction - minFraction) * random01), a jittered 70-90%
// of its lifetime by default (random01 uniform in [0, 1)).
std::chrono::system_clock::time_point rotationDeadline(const CertInfo& cert, double random01,
                                                       double minFraction = 0.7,
                                                       double maxFraction = 0.9);
// OK when `certPem` was signed by `caPem` and is valid now; Unauthorized otherwise.
Status verifyCertificate(const std::string& caPem, const std::string& certPem);

// Files: PEM written with mode 0600 (keys) or 0644 (certificates), atomically (temp + rename).
Status writePemFile(const std::string& path, const std::string& pem, bool isPrivate);
Result<std::string> readPemFile(const std::string& path);

// The OpenSSL errors queued on this thread as one line ("" when none); the queue is emptied so
// they do not leak into the next call (also used by the TLS code in tls.cc).
std::string takeOpenSslErrors();

}  // namespace minik8s::pki
