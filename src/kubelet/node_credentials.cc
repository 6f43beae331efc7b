#include "kubelet/node_credentials.h"

#include <filesystem>
#include <thread>

#include "api/csr_rules.h"
#include "common/base64.h"
#include "common/http_client.h"
#include "common/join_token.h"
#include "common/logging.h"
#include "common/random.h"

namespace minik8s::kubelet {

namespace {

namespace certs = api::csr;
using SystemClock = std::chrono::system_clock;

// The reason and message of a True Denied or Failed condition, if any.
std::optional<std::string> refusal(const json& csr) {
  const json status = csr.value("status", json::object());
  if (!status.contains("conditions") || !status["conditions"].is_array()) return std::nullopt;
  for (const auto& c : status["conditions"]) {
    if (!c.is_object() || c.value("status", "") == "False") continue;
    const std::string type = c.value("type", "");
    if (type == "Denied" || type == "Failed")
      return type + " (" + c.value("reason", "") + "): " + c.value("message", "");
  }
  return std::nullopt;
}

}  // namespace

CredentialState credentialState(const pki::CertInfo& cert, SystemClock::time_point now,
                                double renewBeforeFraction) {
  if (now >= cert.notAfter || now < cert.notBefore) return CredentialState::kExpired;
  const auto lifetime = cert.notAfter - cert.notBefore;
  const auto margin =
      std::chrono::duration_cast<SystemClock::duration>(lifetime * renewBeforeFraction);
  if (now >= cert.notAfter - margin) return CredentialState::kRenewalDue;
  return CredentialState::kValid;
}

Result<std::string> requestCertificate(client::RestClient& api, const std::string& csrPem,
                                       const std::string& signerName,
                                       const std::vector<std::string>& usages,
                                       const NodeCredentialsOptions& options) {
  const std::string name = "node-csr-" + randomSuffix(10);
  json spec = {{"request", base64::encode(csrPem)}, {"signerName", signerName}, {"usages", usages}};
  if (options.expiration) spec["expirationSeconds"] = options.expiration->count();
  json csr = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", name}}},
              {"spec", spec}};
  auto created = api.create(client::resources::kCertificateSigningRequests, "", csr);
  if (!created.ok())
    return Status(
        created.status().code(), created.status().reason(),
        "cannot create CertificateSigningRequest " + name + ": " + created.status().message());
  LOG_INFO("node credentials: waiting for CertificateSigningRequest {} ({})", name, signerName);
  const auto deadline = std::chrono::steady_clock::now() + options.waitTimeout;
  Status last = Status::Ok();
  while (true) {
    auto got = api.get(client::resources::kCertificateSigningRequests, "", name);
    if (got.ok()) {
      if (auto why = refusal(*got))
        return Status::Forbidden("CertificateSigningRequest " + name + " was " + *why);
      const std::string encoded =
          got->value("status", json::object()).value("certificate", std::string());
      if (!encoded.empty()) {
        auto pem = base64::decode(encoded);
        if (!pem.ok())
          return Status::Internal("CertificateSigningRequest " + name +
                                  ": status.certificate is not base64");
        return *pem;
      }
    } else {
      last = got.status();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string msg = "CertificateSigningRequest " + name + " got no certificate within " +
                        std::to_string(options.waitTimeout.count()) +
                        "s (is it pending? `kubectl certificate approve " + name + "`)";
      if (!last.ok()) msg += "; last error: " + last.message();
      return Status::Timeout(msg);
    }
    std::this_thread::sleep_for(options.pollInterval);
  }
}

Result<ServerTrust> discoverServerTrust(const std::string& serverUrl, const std::string& caFilePem,
                                        const std::string& joinToken, bool insecureSkipVerify) {
  const std::string first = serverUrl.substr(0, serverUrl.find(','));
  if (first.rfind("https://", 0) != 0) return ServerTrust{};
  auto token = parseJoinToken(joinToken);
  const bool tokenHasHash = token.ok() && !token->caHash.empty();
  if (!caFilePem.empty()) {
    if (tokenHasHash && !caHashMatches(caFilePem, joinToken))
      return Status::BadRequest(
          "the CA file does not match the CA hash in the join token: wrong cluster?");
    return ServerTrust{caFilePem, false};
  }
  if (!tokenHasHash && !insecureSkipVerify) {
    return Status::BadRequest(
        "cannot trust " + first +
        ": give --ca-file, a join token with the CA hash (K10<hash>::<id>.<secret>) or "
        "--insecure-skip-tls-verify");
  }
  http::TlsClientConfig unverified;
  unverified.insecureSkipVerify = true;
  http::Client client(first, unverified);
  auto r = client.get("/cacerts");
  if (!r.ok())
    return Status::Unavailable("cannot fetch " + first + "/cacerts: " + r.status().message());
  if (r->status != 200)
    return Status::Unavailable(first + "/cacerts answered " + std::to_string(r->status));
  if (!tokenHasHash) return ServerTrust{r->body, true};  // unverified, by request
  if (!caHashMatches(r->body, joinToken))
    return Status::Unauthorized("the CA served by " + first +
                                " does not match the join token's CA hash: refusing it");
  return ServerTrust{r->body, false};
}

NodeCredentials::NodeCredentials(NodeCredentialsOptions options) : options_(std::move(options)) {}

CredentialState NodeCredentials::stateOf(const std::string& certPath) const {
  auto pem = pki::readPemFile(certPath);
  if (!pem.ok()) return CredentialState::kMissing;
  auto info = pki::parseCertificate(*pem);
  if (!info.ok()) return CredentialState::kMissing;
  return credentialState(*info, options_.now(), options_.renewBeforeFraction);
}

CredentialState NodeCredentials::clientState() const { return stateOf(clientCertPath()); }
CredentialState NodeCredentials::servingState() const { return stateOf(servingCertPath()); }

Result<pki::KeyAndCert> NodeCredentials::load(const std::string& keyPath,
                                              const std::string& certPath) const {
  auto key = pki::readPemFile(keyPath);
  if (!key.ok()) return key.status();
  auto cert = pki::readPemFile(certPath);
  if (!cert.ok()) return cert.status();
  return pki::KeyAndCert{*key, *cert};
}

Result<pki::KeyAndCert> NodeCredentials::obtain(client::RestClient& api, const pki::CertSpec& spec,
                                                const std::string& signer,
                                                const std::vector<std::string>& usages,
                                                const std::string& keyPath,
                                                const std::string& certPath) {
  std::error_code ec;
  std::filesystem::create_directories(options_.pkiDir, ec);
  if (ec) return Status::Internal("cannot create " + options_.pkiDir + ": " + ec.message());
  auto key = pki::generateKey();
  if (!key.ok()) return key.status();
  auto csr = pki::createCsr(*key, spec);
  if (!csr.ok()) return csr.status();
  auto cert = requestCertificate(api, *csr, signer, usages, options_);
  if (!cert.ok()) return cert.status();
  auto info = pki::parseCertificate(*cert);
  if (!info.ok()) return Status::Internal("the issued certificate does not parse");
  if (info->commonName != spec.commonName)
    return Status::Internal("the issued certificate names " + info->commonName + ", not " +
                            spec.commonName);
  // Key first: a certificate on disk always has its key beside it.
  if (Status s = pki::writePemFile(keyPath, *key, true); !s.ok()) return s;
  if (Status s = pki::writePemFile(certPath, *cert, false); !s.ok()) return s;
  LOG_INFO(
      "node credentials: {} written (valid until {})", certPath,
      std::chrono::duration_cast<std::chrono::seconds>(info->notAfter.time_since_epoch()).count());
  return pki::KeyAndCert{*key, *cert};
}

Result<pki::KeyAndCert> NodeCredentials::ensureClientCertificate(const ClientFactory& clients,
                                                                 bool renew) {
  CredentialState state = clientState();
  if (renew && state == CredentialState::kValid) state = CredentialState::kRenewalDue;
  std::optional<pki::KeyAndCert> current;
  if (state == CredentialState::kValid || state == CredentialState::kRenewalDue) {
    auto loaded = load(clientKeyPath(), clientCertPath());
    if (loaded.ok()) current = *loaded;
  }
  if (state == CredentialState::kValid && current) return *current;

  pki::CertSpec spec;
  spec.commonName = "system:node:" + options_.nodeName;
  spec.organizations = {"system:nodes"};
  spec.clientAuth = true;
  const std::vector<std::string> usages = {"digital signature", "key encipherment", "client auth"};
  if (current) {
    auto api = clients(&*current);
    auto renewed =
        obtain(*api, spec, certs::kKubeletClientSigner, usages, clientKeyPath(), clientCertPath());
    if (renewed.ok()) return renewed;
    LOG_WARN("node credentials: renewal as {} failed ({}); trying the join token", spec.commonName,
             renewed.status().message());
  }
  auto api = clients(nullptr);
  return obtain(*api, spec, certs::kKubeletClientSigner, usages, clientKeyPath(), clientCertPath());
}

Result<pki::KeyAndCert> NodeCredentials::ensureServingCertificate(const ClientFactory& clients,
                                                                  const pki::KeyAndCert& client,
                                                                  bool renew) {
  if (!renew && servingState() == CredentialState::kValid) {
    auto loaded = load(servingKeyPath(), servingCertPath());
    if (loaded.ok()) {
      // A certificate for other addresses (the node moved) is requested again.
      auto info = pki::parseCertificate(loaded->certPem);
      bool sameIps = info.ok();
      for (const auto& ip : options_.servingIps)
        sameIps = sameIps && std::find(info->ipAddresses.begin(), info->ipAddresses.end(), ip) !=
                                 info->ipAddresses.end();
      if (sameIps) return *loaded;
    }
  }
  pki::CertSpec spec;
  spec.commonName = "system:node:" + options_.nodeName;
  spec.organizations = {"system:nodes"};
  spec.serverAuth = true;
  spec.dnsNames = {options_.nodeName};
  for (const auto& d : options_.servingDnsNames)
    if (d != options_.nodeName) spec.dnsNames.push_back(d);
  spec.ipAddresses = options_.servingIps;
  auto api = clients(&client);
  return obtain(*api, spec, certs::kKubeletServingSigner,
                {"digital signature", "key encipherment", "server auth"}, servingKeyPath(),
                servingCertPath());
}

}  // namespace minik8s::kubelet
