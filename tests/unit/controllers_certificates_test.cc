// The node-certificate rules (approval, signing) exactly, then both controllers against an
// in-process API server.
#include <gtest/gtest.h>

#include "api/csr_rules.h"
#include "client/rest_client.h"
#include "common/base64.h"
#include "common/pki.h"

namespace minik8s::controllers::certificates {

// The approval and signing rules (api/csr_rules.h).
using namespace api::csr;  // NOLINT(google-build-using-namespace)
using client::resources::kCertificateSigningRequests;
namespace {

using Usages = std::vector<std::string>;

struct CsrOptions {
  std::string cn = "system:node:n1";
  std::vector<std::string> orgs = {"system:nodes"};
  std::vector<std::string> dns, ips;
  std::string signer = kKubeletClientSigner;
  Usages usages = {"digital signature", "key encipherment", "client auth"};
  std::string username = "system:bootstrap:abcdef";
  std::vector<std::string> groups = {"system:bootstrappers", "system:authenticated"};
};

json makeCsr(const CsrOptions& o, std::string* keyOut = nullptr) {
  auto key = pki::generateKey();
  EXPECT_TRUE(key.ok());
  pki::CertSpec spec;
  spec.commonName = o.cn;
  spec.organizations = o.orgs;
  spec.dnsNames = o.dns;
  spec.ipAddresses = o.ips;
  auto csr = pki::createCsr(*key, spec);
  EXPECT_TRUE(csr.ok()) << csr.status().message();
  if (keyOut) *keyOut = *key;
  return {{"apiVersion", "certificates.k8s.io/v1"},
          {"kind", "CertificateSigningRequest"},
          {"metadata", {{"name", "node-csr-x"}}},
          {"spec",
           {{"request", base64::encode(*csr)},
            {"signerName", o.signer},
            {"usages", o.usages},
            {"username", o.username},
            {"groups", o.groups}}}};
}

json nodeWithAddresses() {
  return {{"metadata", {{"name", "n1"}}},
          {"status",
           {{"addresses",
             {{{"type", "InternalIP"}, {"address", "10.0.0.5"}},
              {{"type", "Hostname"}, {"address", "n1.example"}}}}}}};
}

CsrOptions serving() {
  CsrOptions o;
  o.signer = kKubeletServingSigner;
  o.usages = {"digital signature", "key encipherment", "server auth"};
  o.username = "system:node:n1";
  o.groups = {"system:nodes", "system:authenticated"};
  o.dns = {"n1"};
  o.ips = {"10.0.0.5"};
  return o;
}

TEST(CsrApprovalRules, ApprovesBootstrapAndRenewalClientRequests) {
  EXPECT_TRUE(decideApproval(makeCsr({}), std::nullopt).approve);
  CsrOptions renewal;
  renewal.username = "system:node:n1";
  renewal.groups = {"system:nodes"};
  EXPECT_TRUE(decideApproval(makeCsr(renewal), std::nullopt).approve);
  CsrOptions minimal;
  minimal.usages = {"client auth"};
  EXPECT_TRUE(decideApproval(makeCsr(minimal), std::nullopt).approve);
}

TEST(CsrApprovalRules, LeavesOddClientRequestsPending) {
  auto refused = [](CsrOptions o) { return !decideApproval(makeCsr(o), std::nullopt).approve; };
  CsrOptions o;
  o.cn = "system:node:";
  EXPECT_TRUE(refused(o)) << "empty node name";
  o = {};
  o.cn = "alice";
  EXPECT_TRUE(refused(o)) << "wrong CN";
  o = {};
  o.cn = "system:nodes:n1";
  EXPECT_TRUE(refused(o)) << "wrong CN prefix";
  o = {};
  o.orgs = {"system:masters"};
  EXPECT_TRUE(refused(o)) << "wrong org";
  o = {};
  o.orgs = {"system:nodes", "system:masters"};
  EXPECT_TRUE(refused(o)) << "extra org";
  o = {};
  o.orgs = {};
  EXPECT_TRUE(refused(o)) << "no org";
  o = {};
  o.usages = {"client auth", "server auth"};
  EXPECT_TRUE(refused(o)) << "extra usage";
  o = {};
  o.usages = {"digital signature", "key encipherment"};
  EXPECT_TRUE(refused(o)) << "no client auth";
  o = {};
  o.dns = {"n1"};
  EXPECT_TRUE(refused(o)) << "client certificate with SANs";
  o = {};
  o.username = "alice";
  o.groups = {"system:authenticated"};
  EXPECT_TRUE(refused(o)) << "wrong user";
  o = {};
  o.username = "system:node:n2";
  o.groups = {"system:nodes"};
  EXPECT_TRUE(refused(o)) << "another node";
  o = {};
  o.username = "kubernetes-admin";
  o.groups = {"system:masters"};
  EXPECT_TRUE(refused(o)) << "admins approve by hand";
  o = {};
  o.signer = kApiServerClientSigner;
  EXPECT_TRUE(refused(o)) << "kube-apiserver-client is never automatic";
  o = {};
  o.signer = "example.com/custom";
  EXPECT_TRUE(refused(o)) << "foreign signer";
}

TEST(CsrApprovalRules, MalformedAndDecidedRequestsStayAlone) {
  json csr = makeCsr({});
  csr["spec"]["request"] = base64::encode("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n");
  EXPECT_FALSE(decideApproval(csr, std::nullopt).approve);
  csr["spec"]["request"] = "%%%";
  EXPECT_FALSE(decideApproval(csr, std::nullopt).approve);
  csr = makeCsr({});
  csr["status"]["conditions"] = {{{"type", "Denied"}, {"status", "True"}}};
  EXPECT_FALSE(decideApproval(csr, std::nullopt).approve);
  csr = makeCsr({});
  csr["status"]["conditions"] = {{{"type", "Approved"}, {"status", "True"}}};
  EXPECT_FALSE(decideApproval(csr, std::nullopt).approve);
}

TEST(CsrApprovalRules, ServingRequestsOnlyForTheNodesOwnAddresses) {
  const auto node = nodeWithAddresses();
  EXPECT_TRUE(decideApproval(makeCsr(serving()), node).approve);
  CsrOptions o = serving();
  o.dns = {"n1", "n1.example"};
  EXPECT_TRUE(decideApproval(makeCsr(o), node).approve);

  auto refused = [&](const CsrOptions& opts, const std::optional<json>& n) {
    return !decideApproval(makeCsr(opts), n).approve;
  };
  EXPECT_TRUE(refused(serving(), std::nullopt)) << "node unknown";
  EXPECT_TRUE(decideApproval(makeCsr(serving()), std::nullopt).retryLater);
  o = serving();
  o.ips = {"10.0.0.6"};
  EXPECT_TRUE(refused(o, node)) << "IP of another host";
  EXPECT_TRUE(decideApproval(makeCsr(o), node).retryLater) << "the node may not have posted it yet";
  o = serving();
  o.cn = "system:node:n2";
  EXPECT_FALSE(decideApproval(makeCsr(o), node).retryLater) << "a wrong subject is final";
  o = serving();
  o.dns = {"kubernetes.default.svc"};
  EXPECT_TRUE(refused(o, node)) << "DNS name not the node's";
  o = serving();
  o.dns = {};
  o.ips = {};
  EXPECT_TRUE(refused(o, node)) << "no SANs";
  o = serving();
  o.username = "system:bootstrap:abcdef";
  o.groups = {"system:bootstrappers"};
  EXPECT_TRUE(refused(o, node)) << "bootstrappers get no serving certificate";
  o = serving();
  o.username = "system:node:n2";
  EXPECT_TRUE(refused(o, node)) << "another node asks";
  o = serving();
  o.cn = "system:node:n2";
  EXPECT_TRUE(refused(o, node)) << "CN of another node";
  o = serving();
  o.orgs = {"system:masters"};
  EXPECT_TRUE(refused(o, node)) << "wrong org";
  o = serving();
  o.usages = {"server auth", "client auth"};
  EXPECT_TRUE(refused(o, node)) << "extra usage";
}

TEST(CsrApprovalRules, ApprovedConditionShape) {
  json csr =
      withApprovedCondition(makeCsr({}), "ok", std::chrono::system_clock::from_time_t(1700000000));
  ASSERT_EQ(csr["status"]["conditions"].size(), 1u);
  const json& c = csr["status"]["conditions"][0];
  EXPECT_EQ(c["type"], "Approved");
  EXPECT_EQ(c["status"], "True");
  EXPECT_EQ(c["reason"], "AutoApproved");
  EXPECT_EQ(c["lastUpdateTime"], "2023-11-14T22:13:20Z");
  EXPECT_TRUE(hasCondition(csr, "Approved"));
  EXPECT_FALSE(hasCondition(csr, "Denied"));
}

class CsrSigning : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = pki::createCA("minik8s-ca");
    ASSERT_TRUE(c.ok());
    ca = *c;
  }
  pki::KeyAndCert ca;
  const std::chrono::seconds year = std::chrono::hours(24 * 365);
};

TEST_F(CsrSigning, ClientCertificateVerifiesAndCarriesTheSubject) {
  auto cert = signRequest(ca, makeCsr({}), year, year);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_TRUE(pki::verifyCertificate(ca.certPem, *cert).ok());
  auto other = pki::createCA("other");
  EXPECT_FALSE(pki::verifyCertificate(other->certPem, *cert).ok());
  auto info = pki::parseCertificate(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "system:node:n1");
  EXPECT_EQ(info->organizations, std::vector<std::string>{"system:nodes"});
  EXPECT_TRUE(info->clientAuth);
  EXPECT_FALSE(info->serverAuth);
  EXPECT_FALSE(info->isCA);
  const auto lifetime = info->notAfter - std::chrono::system_clock::now();
  EXPECT_GT(lifetime, year - std::chrono::hours(2));
  EXPECT_LT(lifetime, year + std::chrono::hours(2));
}

TEST_F(CsrSigning, ServingCertificateKeepsTheSans) {
  auto cert = signRequest(ca, makeCsr(serving()), year, year);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  auto info = pki::parseCertificate(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->dnsNames, std::vector<std::string>{"n1"});
  EXPECT_EQ(info->ipAddresses, std::vector<std::string>{"10.0.0.5"});
  EXPECT_TRUE(info->serverAuth);
  EXPECT_FALSE(info->clientAuth);
}

TEST_F(CsrSigning, ExpirationSecondsIsHonouredWithinBounds) {
  json csr = makeCsr({});
  csr["spec"]["expirationSeconds"] = 2 * 3600;
  auto cert = signRequest(ca, csr, year, year);
  ASSERT_TRUE(cert.ok());
  auto lifetime = pki::parseCertificate(*cert)->notAfter - std::chrono::system_clock::now();
  EXPECT_GT(lifetime, std::chrono::minutes(110));
  EXPECT_LT(lifetime, std::chrono::minutes(130));
  csr["spec"]["expirationSeconds"] = 10 * 365 * 24 * 3600;  // capped at maxValidity
  cert = signRequest(ca, csr, year, std::chrono::hours(48));
  ASSERT_TRUE(cert.ok());
  lifetime = pki::parseCertificate(*cert)->notAfter - std::chrono::system_clock::now();
  EXPECT_LT(lifetime, std::chrono::hours(49));
  EXPECT_GT(lifetime, std::chrono::hours(46));
}

TEST_F(CsrSigning, ShortSigningDurationIsExactAndBackdatedByAFifth) {
  // --cluster-signing-duration=60s (tests of rotation): not rounded up to hours.
  auto cert = signRequest(ca, makeCsr({}), std::chrono::seconds(60), std::chrono::seconds(60));
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  auto info = pki::parseCertificate(*cert);
  const auto now = std::chrono::system_clock::now();
  EXPECT_GT(info->notAfter - now, std::chrono::seconds(55));
  EXPECT_LE(info->notAfter - now, std::chrono::seconds(61));
  EXPECT_LE(info->notAfter - info->notBefore, std::chrono::seconds(73));
  EXPECT_GE(info->notAfter - info->notBefore, std::chrono::seconds(71));
  EXPECT_FALSE(info->serialHex.empty());
}

TEST_F(CsrSigning, RefusesUsagesTheSignerDoesNotIssue) {
  CsrOptions o = serving();
  o.signer = kKubeletClientSigner;  // server auth under the client signer
  EXPECT_EQ(signRequest(ca, makeCsr(o), year, year).status().code(), 400);
  o = {};
  o.signer = "example.com/custom";
  EXPECT_FALSE(signRequest(ca, makeCsr(o), year, year).ok());
  o = {};
  o.signer = kApiServerClientSigner;
  o.cn = "alice";
  o.orgs = {"dev"};
  auto cert = signRequest(ca, makeCsr(o), year, year);
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(pki::parseCertificate(*cert)->commonName, "alice");
}

}  // namespace
}  // namespace minik8s::controllers::certificates
