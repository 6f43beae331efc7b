#include "controllers/certificates/signing_outcome.h"

#include "common/base64.h"

namespace minik8s::controllers::certificates {

json withSigningOutcome(const json& csr, const Result<std::string>& certificatePem,
                        Clock::time_point now) {
  json updated = csr;
  if (!updated["status"].is_object()) updated["status"] = json::object();
  if (certificatePem.ok()) {
    updated["status"]["certificate"] = base64::encode(*certificatePem);
    return updated;
  }
  const std::string t = formatRfc3339(now);
  json& conditions = updated["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  conditions.push_back({{"type", "Failed"},
                        {"status", "True"},
                        {"reason", "SignerValidationFailure"},
                        {"message", certificatePem.status().message()},
                        {"lastUpdateTime", t},
                        {"lastTransitionTime", t}});
  return updated;
}

Status putSigningOutcome(client::RestClient& rest, const json& csr,
                         const Result<std::string>& certificatePem, Clock::time_point now) {
  auto r = rest.update(client::resources::kCertificateSigningRequests,
                       withSigningOutcome(csr, certificatePem, now), "status");
  if (!r.ok() && r.status().code() != 404) return r.status();
  return Status::Ok();
}

}  // namespace minik8s::controllers::certificates
