// The rules of the node-certificate controllers as pure functions of CertificateSigningRequest
// objects (certificates.k8s.io/v1, JSON in API form): which CSRs are approved automatically,
// and what certificate a signer issues for an approved CSR. Thread-safe (no shared state).
//
// Automatic approval, as kube-controller-manager's csrapproving controller does for kubelets:
// - signer kubernetes.io/kube-apiserver-client-kubelet: subject CN "system:node:<n>", O exactly
//   ["system:nodes"], no SANs, usages "client auth" plus optionally "digital signature" and
//   "key encipherment"; requested by a bootstrap user (group system:bootstrappers: a node
//   joining with the join token) or by "system:node:<n>" itself in group system:nodes
//   (renewal). Any other requester (even an admin) is left to a human.
// - signer kubernetes.io/kubelet-serving: requested by "system:node:<n>" (group system:nodes)
//   for CN "system:node:<n>", O ["system:nodes"], usages "server auth" plus optionally the two
//   key usages, and at least one SAN, every DNS SAN being the node's name or one of its Hostname
//   / InternalDNS / ExternalDNS addresses and every IP SAN one of its InternalIP / ExternalIP
//   addresses (the Node object must exist). Kubernetes never approves serving CSRs by itself:
//   the API server cannot know whether a node really owns the names it asks for, so a node could
//   obtain a certificate for another host's address. We approve them because the names are
//   checked against the Node's own addresses, which only that node may change once node
//   restriction is on, and the certificate is only trusted by the API server, which dials the
//   address the Node object advertises anyway; without it port 10250 could not be TLS.
// Everything else stays pending until `kubectl certificate approve|deny`.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/pki.h"
#include "common/status.h"

namespace minik8s::api::csr {

inline constexpr char kKubeletClientSigner[] = "kubernetes.io/kube-apiserver-client-kubelet";
inline constexpr char kKubeletServingSigner[] = "kubernetes.io/kubelet-serving";
inline constexpr char kApiServerClientSigner[] = "kubernetes.io/kube-apiserver-client";

// The condition type of a CSR that is "True" (Approved, Denied or Failed), if any.
bool hasCondition(const json& csr, const std::string& type);
bool isIssued(const json& csr);  // status.certificate is set

// spec.request (base64 of a PEM CSR), parsed and its signature checked.
Result<pki::CertInfo> parseCsrRequest(const json& csr);

struct ApprovalDecision {
  bool approve = false;
  std::string reason;  // why not, for logs (the CSR is left pending)
  // Not yet: the Node is missing or lacks an address the CSR names (a node asks for its serving
  // certificate moments after it registers); the controller looks again later.
  bool retryLater = false;
};

// Decides whether `csr` is approved automatically. `node` is the Node named in the subject as
// the API has it (nullopt: no such node); only kubelet-serving CSRs need it.
ApprovalDecision decideApproval(const json& csr, const std::optional<json>& node);

// The node name of a subject CN "system:node:<n>" (nullopt for other CNs or an empty name).
std::optional<std::string> nodeNameOfCommonName(const std::string& commonName);

// The CSR object after approval: a condition {type Approved, status "True", reason
// AutoApproved, message, lastUpdateTime, lastTransitionTime} appended.
json withApprovedCondition(json csr, const std::string& message,
                           std::chrono::system_clock::time_point now);

// The certificate a signer issues for `csr`: usages from spec.usages ("client auth",
// "server auth"), validity spec.expirationSeconds (at least 10 minutes, as Kubernetes) or
// `defaultValidity`, capped by `maxValidity`. BadRequest when the signer is not one of ours or
// the request does not parse.
Result<std::string> signRequest(const pki::KeyAndCert& ca, const json& csr,
                                std::chrono::seconds defaultValidity,
                                std::chrono::seconds maxValidity);

// Whether `signerName` is one the signing controller handles.
bool isOurSigner(const std::string& signerName);

}  // namespace minik8s::api::csr
