#include "controllers/certificates/csr_signing_controller.h"

#include "api/csr_rules.h"
#include "common/logging.h"
#include "controllers/certificates/signing_outcome.h"

namespace minik8s::controllers::certificates {

// The approval and signing rules (api/csr_rules.h).
using namespace api::csr;  // NOLINT(google-build-using-namespace)
using client::resources::kCertificateSigningRequests;

CsrSigningController::CsrSigningController(client::RestClient& rest, client::Informer& csrs,
                                           CsrSigningOptions options)
    : rest_(rest),
      csrs_(csrs),
      options_(std::move(options)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "csr-signing") {
  auto enqueue = [this](const json& csr) { queue_.add(client::objectKey(csr)); };
  csrs_.addHandlers({enqueue, [enqueue](const json&, const json& csr) { enqueue(csr); }, nullptr});
}

CsrSigningController::~CsrSigningController() { stop(); }

void CsrSigningController::start() { workers_.start(1); }
void CsrSigningController::stop() { workers_.stop(); }

Status CsrSigningController::sync(const std::string& name) {
  auto csr = csrs_.get(name);
  if (!csr) return Status::Ok();
  const json spec = csr->value("spec", json::object());
  if (!isOurSigner(spec.value("signerName", ""))) return Status::Ok();
  if (!hasCondition(*csr, "Approved") || hasCondition(*csr, "Denied") ||
      hasCondition(*csr, "Failed") || isIssued(*csr))
    return Status::Ok();
  auto cert = signRequest(options_.ca, *csr, options_.defaultValidity, options_.maxValidity);
  if (Status s = putSigningOutcome(rest_, *csr, cert, options_.now()); !s.ok()) return s;
  if (cert.ok()) {
    LOG_INFO("csr-signing: issued a certificate for {}", name);
  } else {
    LOG_WARN("csr-signing: {} failed: {}", name, cert.status().message());
  }
  return Status::Ok();
}

}  // namespace minik8s::controllers::certificates
