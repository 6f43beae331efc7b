#include "controllers/certificates/csr_approving_controller.h"

#include "api/csr_rules.h"
#include "common/logging.h"

namespace minik8s::controllers::certificates {

// The approval and signing rules (api/csr_rules.h).
using namespace api::csr;  // NOLINT(google-build-using-namespace)
using client::resources::kCertificateSigningRequests;

CsrApprovingController::CsrApprovingController(client::RestClient& rest, client::Informer& csrs,
                                               CsrApprovingOptions options)
    : rest_(rest),
      csrs_(csrs),
      options_(std::move(options)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "csr-approving") {
  auto enqueue = [this](const json& csr) { queue_.add(client::objectKey(csr)); };
  csrs_.addHandlers({enqueue, [enqueue](const json&, const json& csr) { enqueue(csr); }, nullptr});
}

CsrApprovingController::~CsrApprovingController() { stop(); }

void CsrApprovingController::start() { workers_.start(1); }
void CsrApprovingController::stop() { workers_.stop(); }

Status CsrApprovingController::sync(const std::string& name) {
  auto csr = csrs_.get(name);
  if (!csr) return Status::Ok();
  std::optional<json> node;
  const json spec = csr->value("spec", json::object());
  if (spec.value("signerName", "") == kKubeletServingSigner) {
    if (auto info = parseCsrRequest(*csr); info.ok()) {
      if (auto nodeName = nodeNameOfCommonName(info->commonName)) {
        auto got = rest_.get(client::resources::kNodes, "", *nodeName);
        if (got.ok()) {
          node = *got;
        } else if (got.status().code() != 404) {
          return got.status();
        }
      }
    }
  }
  ApprovalDecision decision = decideApproval(*csr, node);
  if (!decision.approve) {
    LOG_DEBUG("csr-approving: {} left pending: {}", name, decision.reason);
    if (decision.retryLater)
      return Status::Unavailable("csr-approving: " + name + ": " + decision.reason);
    return Status::Ok();
  }
  json approved = withApprovedCondition(
      *csr, "Auto approving kubelet certificate (" + decision.reason + ")", options_.now());
  auto r = rest_.update(kCertificateSigningRequests, approved, "approval");
  if (!r.ok()) {
    if (r.status().code() == 404) return Status::Ok();
    return r.status();
  }
  LOG_INFO("csr-approving: approved {} ({} of {})", name, decision.reason,
           spec.value("username", ""));
  return Status::Ok();
}

}  // namespace minik8s::controllers::certificates
