// certificates.k8s.io/v1 CertificateSigningRequests.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/resources/builders.h"
#include "api/validation/kinds.h"

namespace minik8s::api::resources {
namespace {

ResourceType certificateSigningRequest() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("certificates.k8s.io", "v1", "CertificateSigningRequest",
               "certificatesigningrequests", "certificatesigningrequest");
  r.namespaced = false;
  r.shortNames = {"csr"};
  r.subresources = {SubresourceInfo{"approval", r.group, r.version, r.kind, kStatusVerbs},
                    statusOf(r)};
  t.validate = validation::validateCertificateSigningRequest;
  t.columns = {nameColumn(),
               ageColumn(),
               col("SignerName", "The signer asked to sign."),
               col("Requestor", "Who created the request."),
               col("RequestedDuration", "The validity asked for."),
               col("Condition", "Approved, Denied, Failed, Issued or Pending.")};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    const json& spec = object(obj, "spec");
    const json& status = object(obj, "status");
    std::string condition;
    for (const auto& c : array(status, "conditions")) {
      if (str(c, "status", "True") != "True") continue;
      condition += (condition.empty() ? "" : ",") + str(c, "type");
    }
    if (!str(status, "certificate").empty()) condition += condition.empty() ? "Issued" : ",Issued";
    if (condition.empty()) condition = "Pending";
    std::string duration = "<none>";
    if (spec.contains("expirationSeconds") && spec["expirationSeconds"].is_number())
      duration = humanDuration(std::chrono::seconds(spec["expirationSeconds"].get<int64_t>()));
    return json::array({str(meta, "name"), age(meta, now), str(spec, "signerName"),
                        str(spec, "username"), duration, condition});
  };
  return t;
}

}  // namespace

void addCertificatesResources(std::vector<ResourceType>& out) {
  out.push_back(certificateSigningRequest());
}

}  // namespace minik8s::api::resources
