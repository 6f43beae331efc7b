// Workload identities of the mesh, as SPIFFE IDs: a sidecar proves it runs as service account SA
// of namespace NS with a certificate whose only subjectAltName is the URI
// spiffe://cluster.local/ns/NS/sa/SA, signed by the cluster CA.
//
// How a sidecar gets one: it makes a key, sends a certificates.k8s.io/v1 CertificateSigningRequest
// with signerName minik8s.io/mesh-workload using its service-account token (the API server
// records the requester in spec.username), and the mesh controller (controllers/mesh) approves
// and signs it when decideWorkloadCsr() allows: the requester is system:serviceaccount:NS:SA and
// the request names exactly spiffe://cluster.local/ns/NS/sa/SA. The certificate has an empty
// subject, so the API server (which takes a client certificate's CN as the user) never
// authenticates anyone with it, although the cluster CA signed it.
//
// Also: the ClientHello sniffing the inbound listener uses to tell mesh mTLS from plain text or
// an application's own TLS. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/pki.h"
#include "common/status.h"

namespace minik8s::mesh {

inline constexpr char kWorkloadSigner[] = "minik8s.io/mesh-workload";
inline constexpr char kTrustDomain[] = "cluster.local";
// The ALPN protocol a client sidecar offers, and the only one the inbound listener terminates.
inline constexpr char kMeshAlpn[] = "istio-peer-exchange";
// Validity the sidecars ask for (spec.expirationSeconds) unless told otherwise, and the bounds
// the signer keeps to.
inline constexpr std::chrono::seconds kDefaultWorkloadCertTtl = std::chrono::hours(24);
inline constexpr std::chrono::seconds kMinWorkloadCertTtl = std::chrono::minutes(10);
inline constexpr std::chrono::seconds kMaxWorkloadCertTtl = std::chrono::hours(24 * 7);

struct WorkloadId {
  std::string ns, serviceAccount;
  bool operator==(const WorkloadId&) const = default;
};

// A sidecar's certificate, its key and the trust bundle (the cluster CA).
struct WorkloadCredentials {
  std::string certPem, keyPem, caPem;
  std::string spiffeId;
  std::chrono::system_clock::time_point notBefore, notAfter;
};

// "spiffe://cluster.local/ns/NS/sa/SA".
std::string spiffeId(const WorkloadId& id);
// The namespace and service account of a SPIFFE ID of our trust domain; nullopt otherwise.
std::optional<WorkloadId> parseSpiffeId(std::string_view uri);
// "system:serviceaccount:NS:SA" -> {NS, SA}; nullopt for any other user name.
std::optional<WorkloadId> serviceAccountOfUser(std::string_view username);
// The `sub` claim of a service-account token (a JWT) as a workload, without checking the
// signature (the token is the pod's own; the API server checks it).
Result<WorkloadId> workloadOfToken(const std::string& token);

// A CSR (PEM) for `keyPem` with an empty subject and the one URI SAN `spiffe`.
Result<std::string> createWorkloadCsr(const std::string& keyPem, const std::string& spiffe);

struct RequestedNames {
  std::string commonName;
  std::vector<std::string> organizations, uris, dnsNames, ipAddresses, emails;
};
// The subject and SANs of a CSR (PEM); its self-signature is checked.
Result<RequestedNames> parseWorkloadCsr(const std::string& csrPem);

// A certificate for the key of `csrPem`: empty subject, the CSR's URI SANs only, CA:FALSE,
// digitalSignature+keyEncipherment, serverAuth+clientAuth, valid `validity` from now (backdated
// a minute for clock skew).
Result<std::string> signWorkloadCsr(const pki::KeyAndCert& ca, const std::string& csrPem,
                                    std::chrono::seconds validity);

// The URI SANs of a certificate (PEM).
Result<std::vector<std::string>> certificateUris(const std::string& certPem);

struct CsrDecision {
  bool ours = false;     // signerName is kWorkloadSigner
  bool approve = false;  // when ours: approve and sign; otherwise deny with `reason`
  std::string reason;
  std::chrono::seconds validity{0};  // when approved
};
// The signer's rule for a CertificateSigningRequest object (API JSON): the requester
// (spec.username) must be a service account, the request's only name its SPIFFE ID (no subject,
// no DNS, IP or e-mail SAN), and spec.expirationSeconds (default kDefaultWorkloadCertTtl) is
// clamped to [kMinWorkloadCertTtl, kMaxWorkloadCertTtl].
CsrDecision decideWorkloadCsr(const json& csr);

// What the first bytes of an inbound connection are.
enum class Hello {
  kIncomplete,  // a TLS record is starting but its ClientHello has not all arrived
  kPlain,       // not TLS
  kOtherTls,    // a TLS ClientHello without kMeshAlpn (the application's own TLS)
  kMeshTls,     // a TLS ClientHello offering kMeshAlpn
};
Hello classifyHello(std::string_view bytes);

}  // namespace minik8s::mesh
