#include "controllers/mesh/mesh_certificate_controller.h"

#include "api/csr_rules.h"
#include "common/base64.h"
#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"
#include "controllers/certificates/signing_outcome.h"
#include "mesh/identity.h"

namespace minik8s::controllers {

MeshCertificateController::MeshCertificateController(client::RestClient& rest,
                                                     client::Informer& csrs,
                                                     MeshCertificateOptions options)
    : rest_(rest),
      csrs_(csrs),
      options_(std::move(options)),
      workers_(
          queue_, [this](const std::string& key) { return sync(key); }, "mesh-certificates") {
  auto enqueue = [this](const json& csr) {
    if (valueAt(csr, "/spec/signerName", std::string()) == mesh::kWorkloadSigner) {
      queue_.add(client::objectKey(csr));
    }
  };
  csrs_.addHandlers({enqueue, [enqueue](const json&, const json& csr) { enqueue(csr); }, nullptr});
}

MeshCertificateController::~MeshCertificateController() { stop(); }
void MeshCertificateController::start() { workers_.start(1); }
void MeshCertificateController::stop() { workers_.stop(); }

Status MeshCertificateController::sync(const std::string& name) {
  namespace csr = api::csr;
  const auto& kCsrs = client::resources::kCertificateSigningRequests;
  auto obj = csrs_.get(name);
  if (!obj) return Status::Ok();
  mesh::CsrDecision d = mesh::decideWorkloadCsr(*obj);
  if (!d.ours || csr::hasCondition(*obj, "Denied") || csr::hasCondition(*obj, "Failed") ||
      csr::isIssued(*obj)) {
    return Status::Ok();
  }
  if (!csr::hasCondition(*obj, "Approved")) {
    json updated;
    if (d.approve) {
      updated =
          csr::withApprovedCondition(*obj, "the requester's own mesh identity", options_.now());
    } else {
      updated = *obj;
      if (!updated["status"].is_object()) updated["status"] = json::object();
      json& conditions = updated["status"]["conditions"];
      if (!conditions.is_array()) conditions = json::array();
      const std::string t = formatRfc3339(options_.now());
      conditions.push_back({{"type", "Denied"},
                            {"status", "True"},
                            {"reason", "MeshIdentityMismatch"},
                            {"message", d.reason},
                            {"lastUpdateTime", t},
                            {"lastTransitionTime", t}});
    }
    auto r = rest_.update(kCsrs, updated, "approval");
    if (!r.ok()) return r.status().code() == 404 ? Status::Ok() : r.status();
    if (!d.approve) {
      LOG_WARN("mesh-certificates: denied {}: {}", name, d.reason);
      return Status::Ok();
    }
    obj = *r;
  }
  auto pem = base64::decode(valueAt(*obj, "/spec/request", std::string()));
  if (!pem.ok()) return Status::Ok();  // decideWorkloadCsr refused it already
  auto cert = mesh::signWorkloadCsr(options_.ca, *pem, d.validity);
  if (Status s = certificates::putSigningOutcome(rest_, *obj, cert, options_.now()); !s.ok()) {
    return s;
  }
  if (cert.ok()) {
    LOG_INFO("mesh-certificates: issued {} for {} ({} s)", name,
             valueAt(*obj, "/spec/username", std::string()), d.validity.count());
  }
  return Status::Ok();
}

}  // namespace minik8s::controllers
