// The signing outcome of a CertificateSigningRequest, written the same way by every signer the
// controller manager runs (csrsigning for the kubelet and kube-apiserver-client signers,
// meshcertificates for the sidecars): status.certificate (base64 PEM) when the signer issued
// one, else condition Failed, reason SignerValidationFailure, with the signer's message and both
// timestamps, as kube-controller-manager's signer does. Stateless; thread-safe.
#pragma once

#include <string>

#include "client/rest_client.h"
#include "common/status.h"
#include "common/time_util.h"

namespace minik8s::controllers::certificates {

// `csr` with the outcome of signing it: `certificatePem` on success, else the Failed condition
// carrying its error. Pure.
json withSigningOutcome(const json& csr, const Result<std::string>& certificatePem,
                        Clock::time_point now);

// Writes withSigningOutcome() through the CSR's `status` subresource. A CSR deleted meanwhile
// (404) is fine: Ok. Other errors (a conflict) come back for the work queue to retry.
Status putSigningOutcome(client::RestClient& rest, const json& csr,
                         const Result<std::string>& certificatePem, Clock::time_point now);

}  // namespace minik8s::controllers::certificates
