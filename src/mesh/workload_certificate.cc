#include "mesh/workload_certificate.h"

#include <random>

#include "common/base64.h"
#include "common/logging.h"
#include "common/pki.h"

namespace minik8s::mesh {

WorkloadCertificateManager::WorkloadCertificateManager(client::RestClient& rest,
                                                       WorkloadCertificateOptions options,
                                                       Callback onCertificate)
    : rest_(rest), options_(std::move(options)), onCertificate_(std::move(onCertificate)) {}

WorkloadCertificateManager::~WorkloadCertificateManager() { stop(); }

void WorkloadCertificateManager::start() {
  thread_ = std::thread([this] { run(); });
}

void WorkloadCertificateManager::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool WorkloadCertificateManager::sleepFor(std::chrono::steady_clock::duration d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

Result<WorkloadCredentials> WorkloadCertificateManager::requestCertificate() {
  WorkloadCredentials creds;
  creds.spiffeId = spiffeId(options_.id);
  creds.caPem = options_.caPem;
  auto key = pki::generateKey();
  if (!key.ok()) return key.status();
  creds.keyPem = *key;
  auto csrPem = createWorkloadCsr(creds.keyPem, creds.spiffeId);
  if (!csrPem.ok()) return csrPem.status();

  static thread_local std::mt19937_64 rng(std::random_device{}());
  char suffix[9];
  snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rng()));
  std::string name = "mesh-" + options_.id.ns + "-" +
                     (options_.podName.empty() ? options_.id.serviceAccount : options_.podName);
  if (name.size() > 200) name.resize(200);
  name += std::string("-") + suffix;
  json csr = {
      {"apiVersion", "certificates.k8s.io/v1"},
      {"kind", "CertificateSigningRequest"},
      {"metadata",
       {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "minik8s-mesh"}}}}},
      {"spec",
       {{"signerName", kWorkloadSigner},
        {"request", base64::encode(*csrPem)},
        {"expirationSeconds", options_.ttl.count()},
        {"usages", {"digital signature", "key encipherment", "server auth", "client auth"}}}}};
  namespace res = client::resources;
  auto created = rest_.create(res::kCertificateSigningRequests, "", csr);
  if (!created.ok()) return created.status();

  auto deadline = std::chrono::steady_clock::now() + options_.waitLimit;
  for (;;) {
    auto got = rest_.get(res::kCertificateSigningRequests, "", name);
    if (got.ok()) {
      const json status = got->value("status", json::object());
      for (const auto& c : status.value("conditions", json::array())) {
        std::string type = c.value("type", "");
        if ((type == "Denied" || type == "Failed") && c.value("status", "") == "True") {
          return Status::Forbidden("certificate signing request " + name + " " + type + ": " +
                                   c.value("message", ""));
        }
      }
      std::string cert = status.value("certificate", "");
      if (!cert.empty()) {
        auto pem = base64::decode(cert);
        if (!pem.ok()) return pem.status();
        creds.certPem = *pem;
        break;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Unavailable("certificate signing request " + name +
                                 " not signed in time (is the mesh controller running?)");
    }
    if (!sleepFor(options_.poll)) return Status::Unavailable("stopping");
  }
  auto info = pki::parseCertificate(creds.certPem);
  if (!info.ok()) return info.status();
  if (Status s = pki::verifyCertificate(creds.caPem, creds.certPem); !s.ok()) {
    return Status::Unauthorized("the certificate of " + name +
                                " does not verify against the trust bundle: " + s.message());
  }
  auto uris = certificateUris(creds.certPem);
  if (!uris.ok() || uris->size() != 1 || (*uris)[0] != creds.spiffeId) {
    return Status::Unauthorized("the certificate of " + name + " does not name " + creds.spiffeId);
  }
  creds.notBefore = info->notBefore;
  creds.notAfter = info->notAfter;
  return creds;
}

void WorkloadCertificateManager::run() {
  auto backoff = std::chrono::seconds(1);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    auto creds = requestCertificate();
    if (!creds.ok()) {
      LOG_WARN("mesh identity: {} (retry in {} s)", creds.status().message(), backoff.count());
      if (!sleepFor(backoff)) return;
      backoff = std::min(backoff * 2, std::chrono::seconds(30));
      continue;
    }
    backoff = std::chrono::seconds(1);
    LOG_INFO("mesh identity: certificate for {} valid until {}", creds->spiffeId,
             std::chrono::duration_cast<std::chrono::seconds>(creds->notAfter.time_since_epoch())
                 .count());
    onCertificate_(*creds);
    // Renew at half the lifetime, as Istio's agent does.
    auto renewAt = creds->notBefore + (creds->notAfter - creds->notBefore) / 2;
    auto wait = renewAt - std::chrono::system_clock::now();
    if (!sleepFor(std::max<std::chrono::system_clock::duration>(wait, std::chrono::seconds(1)))) {
      return;
    }
  }
}

}  // namespace minik8s::mesh
