// certificates.k8s.io CertificateSigningRequest, with the rules of Kubernetes'
// pkg/apis/certificates/validation: a PEM CERTIFICATE REQUEST, a well-formed signerName, known
// key usages, and Approved/Denied conditions that exclude each other.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/validation/kinds.h"
#include "common/base64.h"

namespace minik8s::api::validation {
namespace {

const std::vector<std::string> kKeyUsages = {"signing",
                                             "digital signature",
                                             "content commitment",
                                             "key encipherment",
                                             "key agreement",
                                             "data encipherment",
                                             "cert sign",
                                             "crl sign",
                                             "encipher only",
                                             "decipher only",
                                             "any",
                                             "server auth",
                                             "client auth",
                                             "code signing",
                                             "email protection",
                                             "s/mime",
                                             "ipsec end system",
                                             "ipsec tunnel",
                                             "ipsec user",
                                             "timestamping",
                                             "ocsp signing",
                                             "microsoft sgc",
                                             "netscape sgc"};

void validateRequest(FieldErrors& errs, const json& spec) {
  auto request = errs.string(spec, "request", "spec.request");
  if (!request || request->empty()) {
    if (!request && !absent(spec, "request")) return;  // wrong type, reported
    errs.required("spec.request");
    return;
  }
  // The JSON form of []byte: kube-apiserver refuses what Go's StdEncoding does (unpadded too).
  auto pem = base64::decode(*request);
  if (!pem.ok()) {
    errs.invalidShown("spec.request", "<bytes>", "must be base64-encoded PEM");
    return;
  }
  const std::string begin = "-----BEGIN CERTIFICATE REQUEST-----";
  const std::string end = "-----END CERTIFICATE REQUEST-----";
  const size_t b = pem->find(begin);
  if (b == std::string::npos || pem->find(end, b) == std::string::npos) {
    errs.invalidShown("spec.request", "<bytes>", "PEM block type must be CERTIFICATE REQUEST");
  }
}

void validateSignerName(FieldErrors& errs, const json& spec) {
  auto signer = errs.string(spec, "signerName", "spec.signerName");
  if (!signer || signer->empty()) {
    if (!signer && !absent(spec, "signerName")) return;
    errs.required("spec.signerName");
    return;
  }
  const size_t slash = signer->find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == signer->size()) {
    errs.invalid("spec.signerName", *signer,
                 "must be a fully qualified domain and path of the form "
                 "'example.com/signer-name'");
    return;
  }
  errs.invalidEach("spec.signerName", *signer, isDNS1123Subdomain(signer->substr(0, slash)));
}

void validateUsages(FieldErrors& errs, const json& spec) {
  const json* usages = errs.array(spec, "usages", "spec.usages");
  if (!usages || usages->empty()) {
    if (usages || absent(spec, "usages")) errs.required("spec.usages", "usages must be provided");
    return;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < usages->size(); ++i) {
    const json& u = (*usages)[i];
    const std::string p = index("spec.usages", i);
    if (!u.is_string()) {
      errs.typeInvalid(p, u, "string");
      continue;
    }
    const std::string s = u.get<std::string>();
    if (std::find(kKeyUsages.begin(), kKeyUsages.end(), s) == kKeyUsages.end()) {
      errs.notSupported(p, u, kKeyUsages);
    } else if (!seen.insert(s).second) {
      errs.duplicate(p, u);
    }
  }
}

void validateConditions(FieldErrors& errs, const json& obj) {
  const json* status = errs.object(obj, "status", "status");
  if (!status) return;
  const json* conditions = errs.array(*status, "conditions", "status.conditions");
  if (!conditions) return;
  std::set<std::string> types;
  for (size_t i = 0; i < conditions->size(); ++i) {
    const std::string p = index("status.conditions", i);
    const json& c = (*conditions)[i];
    if (!c.is_object()) {
      errs.typeInvalid(p, c, "object");
      continue;
    }
    auto type = errs.string(c, "type", child(p, "type"));
    auto st = errs.string(c, "status", child(p, "status"));
    if (!type || type->empty()) {
      errs.required(child(p, "type"));
      continue;
    }
    if (!types.insert(*type).second) errs.duplicate(child(p, "type"), *type);
    if (!st || st->empty()) {
      errs.required(child(p, "status"));
    } else if ((*type == "Approved" || *type == "Denied") && *st != "True") {
      errs.notSupported(child(p, "status"), *st, {"True"});
    } else if (*st != "True" && *st != "False" && *st != "Unknown") {
      errs.notSupported(child(p, "status"), *st, {"False", "True", "Unknown"});
    }
  }
  if (types.count("Approved") && types.count("Denied")) {
    errs.invalidShown("status.conditions", "[...]",
                      "Approved and Denied conditions are mutually exclusive");
  }
}

}  // namespace

void validateCertificateSigningRequest(FieldErrors& errs, const json& obj, const json* old) {
  validateObjectMeta(errs, obj, false, nameIsDNSSubdomain);
  if (old) validateObjectMetaUpdate(errs, obj, *old);
  const json* spec = errs.object(obj, "spec", "spec");
  if (!spec) {
    if (absent(obj, "spec")) errs.required("spec");
  } else {
    validateRequest(errs, *spec);
    validateSignerName(errs, *spec);
    validateUsages(errs, *spec);
    auto seconds = errs.integer(*spec, "expirationSeconds", "spec.expirationSeconds");
    if (seconds && *seconds < 600) {
      errs.invalid("spec.expirationSeconds", *seconds,
                   "may not specify a duration less than 600 seconds (10 minutes)");
    }
  }
  validateConditions(errs, obj);
  if (old) validateImmutable(errs, member(obj, "spec"), member(*old, "spec"), "spec");
}

}  // namespace minik8s::api::validation
