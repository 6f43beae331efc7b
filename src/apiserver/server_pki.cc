#include "apiserver/server_pki.h"

#include <openssl/rand.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/logging.h"

namespace minik8s::apiserver {

namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

constexpr hours kCertValidity{24 * 365};
constexpr hours kRenewBefore{24 * 30};

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// Reads name.key + name.crt when both exist and the certificate is valid for long enough.
Result<pki::KeyAndCert> loadPair(const std::string& dir, const std::string& name) {
  auto key = pki::readPemFile(dir + "/" + name + ".key");
  if (!key.ok()) return key.status();
  auto cert = pki::readPemFile(dir + "/" + name + ".crt");
  if (!cert.ok()) return cert.status();
  return pki::KeyAndCert{*key, *cert};
}

Status savePair(const std::string& dir, const std::string& name, const pki::KeyAndCert& kc) {
  if (Status s = pki::writePemFile(dir + "/" + name + ".key", kc.keyPem, true); !s.ok()) return s;
  return pki::writePemFile(dir + "/" + name + ".crt", kc.certPem, false);
}

bool expiresSoon(const pki::CertInfo& info) {
  return info.notAfter - std::chrono::system_clock::now() < kRenewBefore;
}

bool covers(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  return std::all_of(want.begin(), want.end(), [&](const std::string& w) {
    return std::find(have.begin(), have.end(), w) != have.end();
  });
}

// A leaf certificate kept in the directory: reused while it is signed by the CA, has what
// `spec` needs and is not about to expire; issued again otherwise.
Result<pki::KeyAndCert> ensureLeaf(const std::string& dir, const std::string& name,
                                   const pki::KeyAndCert& ca, const pki::CertSpec& spec) {
  if (auto pair = loadPair(dir, name); pair.ok()) {
    auto info = pki::parseCertificate(pair->certPem);
    if (info.ok() && pki::verifyCertificate(ca.certPem, pair->certPem).ok() &&
        !expiresSoon(*info) && info->commonName == spec.commonName &&
        covers(info->dnsNames, spec.dnsNames) && covers(info->ipAddresses, spec.ipAddresses) &&
        covers(info->organizations, spec.organizations)) {
      return *pair;
    }
    LOG_INFO("issuing {} again (names, CA or validity changed)", name);
  }
  auto issued = pki::issue(ca, spec);
  if (!issued.ok()) return issued.status();
  if (Status s = savePair(dir, name, *issued); !s.ok()) return s;
  return issued;
}

// A client certificate: user = CN, groups = O.
pki::CertSpec clientSpec(const std::string& user, const std::vector<std::string>& groups) {
  pki::CertSpec spec;
  spec.commonName = user;
  spec.organizations = groups;
  spec.clientAuth = true;
  spec.validity = kCertValidity;
  return spec;
}

void addUnique(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

Result<ServerPki> loadOrCreateServerPki(const ServerPkiOptions& options) {
  ServerPki out;
  out.dir = options.dataDir + "/pki";
  std::error_code ec;
  fs::create_directories(out.dir, ec);
  if (ec) return Status::Internal("cannot create " + out.dir + ": " + ec.message());
  fs::permissions(out.dir, fs::perms::owner_all, ec);

  if (exists(out.dir + "/ca.key") || exists(out.dir + "/ca.crt")) {
    auto ca = loadPair(out.dir, "ca");
    if (!ca.ok()) return ca.status();
    out.ca = *ca;
  } else {
    auto ca = pki::createCA("minik8s-ca");
    if (!ca.ok()) return ca.status();
    if (Status s = savePair(out.dir, "ca", *ca); !s.ok()) return s;
    out.ca = *ca;
    LOG_INFO("created the cluster CA in {}", out.dir);
  }

  pki::CertSpec serving;
  serving.commonName = "kube-apiserver";
  serving.serverAuth = true;
  serving.validity = options.servingValidity;
  for (const char* n : {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                        "kubernetes.default.svc.cluster.local"}) {
    addUnique(serving.dnsNames, n);
  }
  for (const auto& n : options.dnsNames) addUnique(serving.dnsNames, n);
  addUnique(serving.ipAddresses, "127.0.0.1");
  for (const auto& ip : options.ipAddresses) addUnique(serving.ipAddresses, ip);
  auto servingPair = ensureLeaf(out.dir, "apiserver", out.ca, serving);
  if (!servingPair.ok()) return servingPair.status();
  out.serving = *servingPair;
  out.servingSpec = serving;

  auto kubeletPair = ensureLeaf(out.dir, "apiserver-kubelet-client", out.ca,
                                clientSpec("kube-apiserver-kubelet-client", {"system:masters"}));
  if (!kubeletPair.ok()) return kubeletPair.status();
  out.kubeletClient = *kubeletPair;

  auto adminPair =
      ensureLeaf(out.dir, "admin", out.ca, clientSpec("kubernetes-admin", {"system:masters"}));
  if (!adminPair.ok()) return adminPair.status();
  out.admin = *adminPair;

  if (auto key = pki::readPemFile(out.dir + "/sa.key"); key.ok()) {
    out.serviceAccountKey = *key;
  } else {
    auto created = pki::generateRsaKey();
    if (!created.ok()) return created.status();
    if (Status s = pki::writePemFile(out.dir + "/sa.key", *created, true); !s.ok()) return s;
    out.serviceAccountKey = *created;
  }
  auto pub = pki::publicKeyOf(out.serviceAccountKey);
  if (!pub.ok()) return pub.status();
  out.serviceAccountPub = *pub;
  if (Status s = pki::writePemFile(out.dir + "/sa.pub", *pub, false); !s.ok()) return s;
  return out;
}

Status reissueServingCertificate(ServerPki& pki) {
  auto issued = pki::issue(pki.ca, pki.servingSpec);
  if (!issued.ok()) return issued.status();
  if (Status s = savePair(pki.dir, "apiserver", *issued); !s.ok()) return s;
  pki.serving = *issued;
  return Status::Ok();
}

Result<std::string> loadOrCreateSecretFile(const std::string& path) {
  {
    std::ifstream in(path);
    std::string secret;
    if (in && std::getline(in, secret) && !secret.empty()) return secret;
  }
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return Status::Internal("no randomness for " + path);
  static const char* kHex = "0123456789abcdef";
  std::string secret;
  for (unsigned char b : bytes) {
    secret.push_back(kHex[b >> 4]);
    secret.push_back(kHex[b & 15]);
  }
  if (Status s = pki::writePemFile(path, secret + "\n", true); !s.ok()) return s;
  return secret;
}

Result<pki::KeyAndCert> issueClientCertificate(const ServerPki& pki, const std::string& user,
                                               const std::vector<std::string>& groups) {
  return pki::issue(pki.ca, clientSpec(user, groups));
}

}  // namespace minik8s::apiserver
