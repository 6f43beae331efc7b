// The CSR cleaner (kube-controller-manager's csrcleaner): its rule for every kind of CSR at the
// edges of each expiration, then passes against an in-process API server with a fake wall clock
// and fake queue clock (the first pass at start, the next one an hour later). Also the signing
// outcome both signers write.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/csr_rules.h"
#include "client/informer.h"
#include "common/base64.h"
#include "common/pki.h"
#include "common/time_util.h"
#include "controllers/certificates/csr_cleaner_controller.h"
#include "controllers/certificates/signing_outcome.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::controllers::certificates {
namespace {

using namespace std::chrono_literals;
using client::resources::kCertificateSigningRequests;

const WallClock::time_point kNow = *parseRfc3339("2026-01-10T12:00:00Z");

std::string at(std::chrono::seconds beforeNow) { return formatRfc3339(kNow - beforeNow); }

json csrCreated(std::chrono::seconds ago) {
  return {{"metadata", {{"name", "c"}, {"creationTimestamp", at(ago)}}},
          {"spec", {{"signerName", "minik8s.io/mesh-workload"}}}};
}

json withCondition(json csr, const std::string& type, std::chrono::seconds ago) {
  csr["status"]["conditions"].push_back({{"type", type},
                                         {"status", "True"},
                                         {"lastUpdateTime", at(ago)},
                                         {"lastTransitionTime", at(ago)}});
  return csr;
}

// A certificate valid from `notBefore` for `validity`, signed by a throwaway CA.
std::string certificate(std::chrono::seconds validity) {
  auto ca = pki::createCA("cleaner-test-ca");
  EXPECT_TRUE(ca.ok());
  pki::CertSpec spec;
  spec.commonName = "x";
  spec.clientAuth = true;
  spec.validity = validity;
  auto issued = pki::issue(*ca, spec);
  EXPECT_TRUE(issued.ok());
  return issued->certPem;
}

TEST(CsrCleanupRule, EachKindAtTheEdgeOfItsExpiration) {
  CsrCleanerOptions o;
  const std::string longCert = base64::encode(certificate(std::chrono::hours(24 * 365)));
  // Pending: 24 h from creation.
  EXPECT_FALSE(csrCleanupReason(csrCreated(24h - 1s), o, kNow));
  EXPECT_EQ(csrCleanupReason(csrCreated(24h + 1s), o, kNow), "pending for more than 24h0m0s");
  // Approved and issued: 1 h from the Approved condition, whatever the creation time.
  json approved = withCondition(csrCreated(48h), "Approved", 59min);
  approved["status"]["certificate"] = longCert;
  EXPECT_FALSE(csrCleanupReason(approved, o, kNow));
  approved = withCondition(csrCreated(48h), "Approved", 61min);
  approved["status"]["certificate"] = longCert;
  EXPECT_EQ(csrCleanupReason(approved, o, kNow), "approved and issued more than 1h0m0s ago");
  // Approved but not issued (no signer yet): stays, as in Kubernetes.
  EXPECT_FALSE(csrCleanupReason(withCondition(csrCreated(48h), "Approved", 5h), o, kNow));
  // Denied and failed: 1 h from their condition.
  EXPECT_FALSE(csrCleanupReason(withCondition(csrCreated(48h), "Denied", 30min), o, kNow));
  EXPECT_EQ(csrCleanupReason(withCondition(csrCreated(48h), "Denied", 2h), o, kNow),
            "denied more than 1h0m0s ago");
  json failed = withCondition(withCondition(csrCreated(3h), "Approved", 2h), "Failed", 2h);
  EXPECT_EQ(csrCleanupReason(failed, o, kNow), "failed more than 1h0m0s ago");
  // Issued with an expired certificate: at once, even a minute after approval.
  json expired = withCondition(csrCreated(2min), "Approved", 1min);
  expired["status"]["certificate"] = base64::encode(certificate(1s));
  auto reason = csrCleanupReason(expired, o, WallClock::now() + 10s);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->rfind("its certificate expired at ", 0), 0u) << *reason;
  // Shorter expirations are honoured (options).
  o.pendingExpiration = 10min;
  EXPECT_EQ(csrCleanupReason(csrCreated(11min), o, kNow), "pending for more than 0h10m0s");
}

TEST(SigningOutcome, CertificateOrFailedCondition) {
  json csr = {{"metadata", {{"name", "c"}}}, {"status", {{"conditions", json::array()}}}};
  json ok = withSigningOutcome(csr, Result<std::string>(std::string("PEM")), kNow);
  EXPECT_EQ(ok["status"]["certificate"], base64::encode("PEM"));
  EXPECT_TRUE(ok["status"]["conditions"].empty());
  json bad = withSigningOutcome(csr, Result<std::string>(Status::BadRequest("usage x")), kNow);
  EXPECT_FALSE(bad["status"].contains("certificate"));
  ASSERT_EQ(bad["status"]["conditions"].size(), 1u);
  const json& c = bad["status"]["conditions"][0];
  EXPECT_EQ(c["type"], "Failed");
  EXPECT_EQ(c["status"], "True");
  EXPECT_EQ(c["reason"], "SignerValidationFailure");
  EXPECT_EQ(c["message"], "usage x");
  EXPECT_EQ(c["lastUpdateTime"], "2026-01-10T12:00:00Z");
  EXPECT_EQ(c["lastTransitionTime"], "2026-01-10T12:00:00Z");
}

class CsrCleanerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
  }
  void TearDown() override {
    controller.reset();
    if (csrs) csrs->stop();
    apiServer.stop();
  }
  void startController(std::chrono::milliseconds period = std::chrono::hours(1)) {
    csrs = std::make_unique<client::Informer>(*rest, kCertificateSigningRequests);
    CsrCleanerOptions o;
    o.period = period;
    o.now = [this] { return now.load(); };
    controller = std::make_unique<CsrCleanerController>(*rest, *csrs, o);
    csrs->start();
    ASSERT_TRUE(csrs->waitForSync(5s));
  }
  // A CSR created now (the server's clock), then given `conditions` through /approval.
  void createCsr(const std::string& name, const std::vector<std::string>& conditions = {}) {
    auto key = pki::generateKey();
    ASSERT_TRUE(key.ok());
    pki::CertSpec spec;
    spec.commonName = name;
    auto req = pki::createCsr(*key, spec);
    ASSERT_TRUE(req.ok());
    json csr = {{"apiVersion", "certificates.k8s.io/v1"},
                {"kind", "CertificateSigningRequest"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"request", base64::encode(*req)},
                  {"signerName", "example.com/test"},
                  {"usages", {"client auth"}}}}};
    auto created = rest->create(kCertificateSigningRequests, "", csr);
    ASSERT_TRUE(created.ok()) << created.status().message();
    if (conditions.empty()) return;
    json updated = *created;
    const std::string t = formatRfc3339(WallClock::now());
    for (const auto& type : conditions) {
      updated["status"]["conditions"].push_back(
          {{"type", type}, {"status", "True"}, {"lastUpdateTime", t}, {"reason", "Test"}});
    }
    auto r = rest->update(kCertificateSigningRequests, updated, "approval");
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  bool exists(const std::string& name) {
    return rest->get(kCertificateSigningRequests, "", name).ok();
  }
  bool cacheHas(size_t n) {
    return testing::eventually([&] { return csrs->list().size() == n; });
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> csrs;
  std::unique_ptr<CsrCleanerController> controller;
  std::atomic<WallClock::time_point> now{WallClock::now()};
};

TEST_F(CsrCleanerTest, APassDeletesOnlyWhatTheRulesCondemn) {
  createCsr("pending");
  createCsr("denied", {"Denied"});
  createCsr("approved-unsigned", {"Approved"});
  startController();
  ASSERT_TRUE(cacheHas(3));
  auto n = controller->cleanOnce();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);  // all fresh
  now = WallClock::now() + 2h;
  n = controller->cleanOnce();
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(exists("denied"));
  EXPECT_TRUE(exists("pending"));
  EXPECT_TRUE(exists("approved-unsigned"));
  now = WallClock::now() + 25h;
  ASSERT_TRUE(testing::eventually([&] { return csrs->list().size() == 2; }));
  n = controller->cleanOnce();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_FALSE(exists("pending"));
  EXPECT_TRUE(exists("approved-unsigned"));
}

TEST_F(CsrCleanerTest, FirstPassAtStartThenEveryPeriod) {
  createCsr("old-denied", {"Denied"});
  now = WallClock::now() + 2h;
  startController(300ms);  // the period shortened (an hour by default)
  controller->start();
  EXPECT_TRUE(testing::eventually([&] { return !exists("old-denied"); }));
  // The cleaner does not react to CSR events: only a later periodic pass deletes this one.
  createCsr("later", {"Denied"});
  EXPECT_TRUE(testing::eventually([&] { return !exists("later"); }));
}

}  // namespace
}  // namespace minik8s::controllers::certificates
