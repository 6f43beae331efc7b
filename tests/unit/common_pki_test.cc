// The cluster PKI: a CA issues certificates that verify against it and only it, CSRs carry their
// names through signing and cannot be tampered with, files round-trip.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "common/base64.h"
#include "common/pki.h"

namespace minik8s::pki {
namespace {

using namespace std::chrono_literals;

KeyAndCert mustCreateCA(const std::string& name) {
  auto ca = createCA(name);
  EXPECT_TRUE(ca.ok()) << ca.status().toString();
  return ca.ok() ? ca.value() : KeyAndCert{};
}

TEST(PkiTest, CaIsSelfSignedCertificateAuthority) {
  KeyAndCert ca = mustCreateCA("minik8s-ca");
  EXPECT_NE(ca.keyPem.find("-----BEGIN PRIVATE KEY-----"), std::string::npos);
  auto info = parseCertificate(ca.certPem);
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->commonName, "minik8s-ca");
  EXPECT_TRUE(info->isCA);
  EXPECT_TRUE(verifyCertificate(ca.certPem, ca.certPem).ok());
  auto now = std::chrono::system_clock::now();
  EXPECT_LT(info->notBefore, now);
  EXPECT_GT(info->notAfter, now + 24h * 365 * 9);
  EXPECT_LT(info->notAfter, now + 24h * 365 * 11);
}

TEST(PkiTest, ServerCertificateWithSansVerifiesAgainstItsCaOnly) {
  KeyAndCert ca = mustCreateCA("cluster-a");
  KeyAndCert other = mustCreateCA("cluster-b");
  CertSpec spec;
  spec.commonName = "kube-apiserver";
  spec.dnsNames = {"localhost", "kubernetes.default.svc"};
  spec.ipAddresses = {"127.0.0.1", "10.96.0.1", "::1"};
  spec.serverAuth = true;
  spec.validity = 48h;
  auto server = issue(ca, spec);
  ASSERT_TRUE(server.ok()) << server.status().toString();

  auto info = parseCertificate(server->certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "kube-apiserver");
  EXPECT_EQ(info->dnsNames, spec.dnsNames);
  EXPECT_EQ(info->ipAddresses, spec.ipAddresses);
  EXPECT_TRUE(info->serverAuth);
  EXPECT_FALSE(info->clientAuth);
  EXPECT_FALSE(info->isCA);
  EXPECT_LT(info->notAfter, std::chrono::system_clock::now() + 49h);

  EXPECT_TRUE(verifyCertificate(ca.certPem, server->certPem).ok());
  Status wrongCa = verifyCertificate(other.certPem, server->certPem);
  EXPECT_EQ(wrongCa.code(), 401) << wrongCa.toString();
  // A bundle holding both CAs accepts it.
  EXPECT_TRUE(verifyCertificate(other.certPem + ca.certPem, server->certPem).ok());
  // The issued key is the certificate's key.
  auto pub = publicKeyOf(server->keyPem);
  ASSERT_TRUE(pub.ok());
  EXPECT_NE(pub->find("-----BEGIN PUBLIC KEY-----"), std::string::npos);
}

TEST(PkiTest, ClientCertificateCarriesUserAndGroups) {
  KeyAndCert ca = mustCreateCA("ca");
  CertSpec spec;
  spec.commonName = "kubernetes-admin";
  spec.organizations = {"system:masters", "devs"};
  spec.clientAuth = true;
  auto admin = issue(ca, spec);
  ASSERT_TRUE(admin.ok());
  auto info = parseCertificate(admin->certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "kubernetes-admin");
  EXPECT_EQ(info->organizations, (std::vector<std::string>{"system:masters", "devs"}));
  EXPECT_TRUE(info->clientAuth);
  EXPECT_FALSE(info->serverAuth);
  EXPECT_TRUE(info->dnsNames.empty());
}

TEST(PkiTest, ExpiredCertificateIsRefused) {
  KeyAndCert ca = mustCreateCA("ca");
  CertSpec spec;
  spec.commonName = "old";
  spec.validity = -1h;  // notAfter an hour ago
  auto old = issue(ca, spec);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(verifyCertificate(ca.certPem, old->certPem).code(), 401);
}

TEST(PkiTest, CsrRoundTripAndSigningCopiesNamesAndAppliesUsages) {
  KeyAndCert ca = mustCreateCA("ca");
  auto key = generateKey();
  ASSERT_TRUE(key.ok());
  CertSpec request;
  request.commonName = "system:node:worker-1";
  request.organizations = {"system:nodes"};
  request.dnsNames = {"worker-1"};
  request.ipAddresses = {"10.0.0.7"};
  request.clientAuth = true;
  auto csr = createCsr(key.value(), request);
  ASSERT_TRUE(csr.ok()) << csr.status().toString();
  EXPECT_NE(csr->find("-----BEGIN CERTIFICATE REQUEST-----"), std::string::npos);

  auto parsed = parseCsr(csr.value());
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ(parsed->commonName, "system:node:worker-1");
  EXPECT_EQ(parsed->organizations, std::vector<std::string>{"system:nodes"});
  EXPECT_EQ(parsed->dnsNames, std::vector<std::string>{"worker-1"});
  EXPECT_EQ(parsed->ipAddresses, std::vector<std::string>{"10.0.0.7"});

  CertSpec usage;
  usage.commonName = "ignored";
  usage.organizations = {"ignored-too"};
  usage.serverAuth = true;
  usage.validity = 24h;
  auto cert = signCsr(ca, csr.value(), usage);
  ASSERT_TRUE(cert.ok()) << cert.status().toString();
  auto info = parseCertificate(cert.value());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "system:node:worker-1");
  EXPECT_EQ(info->organizations, std::vector<std::string>{"system:nodes"});
  EXPECT_EQ(info->dnsNames, std::vector<std::string>{"worker-1"});
  EXPECT_EQ(info->ipAddresses, std::vector<std::string>{"10.0.0.7"});
  EXPECT_TRUE(info->serverAuth);
  EXPECT_FALSE(info->clientAuth);  // usages come from the signer, not the request
  EXPECT_FALSE(info->isCA);
  EXPECT_LT(info->notAfter, std::chrono::system_clock::now() + 25h);
  EXPECT_TRUE(verifyCertificate(ca.certPem, cert.value()).ok());

  // The certificate holds the requester's public key.
  auto certKey = publicKeyOf(key.value());
  ASSERT_TRUE(certKey.ok());
}

TEST(PkiTest, TamperedCsrIsRefused) {
  KeyAndCert ca = mustCreateCA("ca");
  auto key = generateKey();
  ASSERT_TRUE(key.ok());
  CertSpec request;
  request.commonName = "system:node:aaaaaaaa";
  auto csr = createCsr(key.value(), request);
  ASSERT_TRUE(csr.ok());
  // Rewrite the CN inside the DER (same length) and re-encode: the signature no longer matches.
  std::string pem = csr.value();
  std::string body;
  for (auto line = pem.find('\n') + 1; line < pem.size();) {
    auto end = pem.find('\n', line);
    std::string text = pem.substr(line, end - line);
    if (text.rfind("-----", 0) == 0) break;
    body += text;
    line = end + 1;
  }
  auto der = base64::decode(body);
  ASSERT_TRUE(der.ok());
  auto at = der->find("aaaaaaaa");
  ASSERT_NE(at, std::string::npos);
  der->replace(at, 8, "bbbbbbbb");
  std::string forged = "-----BEGIN CERTIFICATE REQUEST-----\n" + base64::encode(der.value()) +
                       "\n-----END CERTIFICATE REQUEST-----\n";
  EXPECT_EQ(parseCsr(forged).status().code(), 400);
  EXPECT_FALSE(signCsr(ca, forged, CertSpec{}).ok());
  EXPECT_EQ(parseCsr("not a csr").status().code(), 400);
}

TEST(PkiTest, InvalidInputsAreErrors) {
  KeyAndCert ca = mustCreateCA("ca");
  CertSpec spec;
  spec.ipAddresses = {"not-an-ip"};
  EXPECT_EQ(issue(ca, spec).status().code(), 400);
  EXPECT_FALSE(parseCertificate("garbage").ok());
  EXPECT_FALSE(publicKeyOf("garbage").ok());
  EXPECT_EQ(verifyCertificate(ca.certPem, "garbage").code(), 401);
  KeyAndCert mismatched{mustCreateCA("other").keyPem, ca.certPem};
  EXPECT_FALSE(issue(mismatched, CertSpec{}).ok());
}

TEST(PkiTest, RsaKeyForServiceAccountTokens) {
  auto key = generateRsaKey(2048);
  ASSERT_TRUE(key.ok());
  auto pub = publicKeyOf(key.value());
  ASSERT_TRUE(pub.ok());
  EXPECT_NE(pub->find("-----BEGIN PUBLIC KEY-----"), std::string::npos);
}

TEST(PkiTest, PemFilesAreWrittenWithTheirModes) {
  std::string dir = ::testing::TempDir() + "/pki-test-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  KeyAndCert ca = mustCreateCA("ca");
  ASSERT_TRUE(writePemFile(dir + "/ca.key", ca.keyPem, true).ok());
  ASSERT_TRUE(writePemFile(dir + "/ca.crt", ca.certPem, false).ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir + "/ca.crt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  auto back = readPemFile(dir + "/ca.crt");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), ca.certPem);
  EXPECT_FALSE(readPemFile(dir + "/missing").ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::pki
