// The mesh's certificate signer (controllers/mesh/mesh_certificate_controller.h) against a real
// in-process API server: a service account's CSR for its own SPIFFE identity is approved and
// signed by the CA (the requester is set by the API server: here through impersonation); one for
// another identity is denied and never signed; other signers' CSRs are left alone.
#include <gtest/gtest.h>

#include <thread>

#include "common/base64.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "controllers/mesh/mesh_certificate_controller.h"
#include "in_process_api_server.h"
#include "mesh/identity.h"
#include "mesh/workload_certificate.h"

namespace minik8s::mesh {
namespace {

using namespace std::chrono_literals;

class MeshSignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer_.start().ok());
    rest_ = std::make_unique<client::RestClient>(apiServer_.url());
    auto ca = pki::createCA("mesh-signer-test");
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    csrs_ =
        std::make_unique<client::Informer>(*rest_, client::resources::kCertificateSigningRequests);
    controllers::MeshCertificateOptions o;
    o.ca = ca_;
    controller_ = std::make_unique<controllers::MeshCertificateController>(*rest_, *csrs_, o);
    csrs_->start();
    ASSERT_TRUE(csrs_->waitForSync(5s));
    controller_->start();
  }
  void TearDown() override {
    controller_->stop();
    csrs_->stop();
    apiServer_.stop();
  }

  // Creates a CSR as `user` (Impersonate-User) asking for `spiffe`.
  void request(const std::string& name, const std::string& user, const std::string& spiffe,
               const std::string& signer = kWorkloadSigner) {
    auto key = pki::generateKey();
    ASSERT_TRUE(key.ok());
    auto csr = createWorkloadCsr(*key, spiffe);
    ASSERT_TRUE(csr.ok());
    json body = {{"apiVersion", "certificates.k8s.io/v1"},
                 {"kind", "CertificateSigningRequest"},
                 {"metadata", {{"name", name}}},
                 {"spec",
                  {{"signerName", signer},
                   {"request", base64::encode(*csr)},
                   {"expirationSeconds", 3600},
                   {"usages", {"client auth", "server auth"}}}}};
    http::Client c(apiServer_.url());
    auto res =
        c.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", body.dump(),
                  {{"Content-Type", "application/json"}, {"Impersonate-User", user}});
    ASSERT_TRUE(res.ok());
    ASSERT_EQ(res->status, 201) << res->body;
  }

  // The CSR once it is issued or has a condition (5 s at most).
  json settled(const std::string& name) {
    json last;
    for (int i = 0; i < 500; ++i) {
      auto got = rest_->get(client::resources::kCertificateSigningRequests, "", name);
      if (got.ok()) {
        last = *got;
        const json status = last.value("status", json::object());
        bool denied = false;
        for (const auto& c : status.value("conditions", json::array())) {
          denied = denied || c.value("type", "") == "Denied";
        }
        if (denied || status.contains("certificate")) return last;
      }
      std::this_thread::sleep_for(10ms);
    }
    return last;
  }

  testing::InProcessApiServer apiServer_;
  std::unique_ptr<client::RestClient> rest_;
  pki::KeyAndCert ca_;
  std::unique_ptr<client::Informer> csrs_;
  std::unique_ptr<controllers::MeshCertificateController> controller_;
};

TEST_F(MeshSignerTest, SignsTheRequestersOwnIdentityOnly) {
  const std::string web = spiffeId({"shop", "web"});
  request("own", "system:serviceaccount:shop:web", web);
  request("other", "system:serviceaccount:shop:web", spiffeId({"shop", "admin"}));
  request("user", "alice", web);

  json own = settled("own");
  EXPECT_EQ(own["spec"]["username"], "system:serviceaccount:shop:web");
  ASSERT_TRUE(own["status"].contains("certificate")) << own.dump();
  auto pem = base64::decode(own["status"]["certificate"].get<std::string>());
  ASSERT_TRUE(pem.ok());
  EXPECT_TRUE(pki::verifyCertificate(ca_.certPem, *pem).ok());
  EXPECT_EQ(*certificateUris(*pem), std::vector<std::string>{web});
  auto info = pki::parseCertificate(*pem);
  ASSERT_TRUE(info.ok());
  auto life = info->notAfter - info->notBefore;
  EXPECT_GE(life, 3600s);
  EXPECT_LE(life, 3660s);
  EXPECT_EQ(own["status"]["conditions"][0]["type"], "Approved");

  for (const char* name : {"other", "user"}) {
    json denied = settled(name);
    ASSERT_TRUE(denied["status"].contains("conditions")) << denied.dump();
    EXPECT_EQ(denied["status"]["conditions"][0]["type"], "Denied") << name;
    EXPECT_EQ(denied["status"]["conditions"][0]["reason"], "MeshIdentityMismatch");
    EXPECT_FALSE(denied["status"].contains("certificate")) << name;
  }
}

TEST_F(MeshSignerTest, LeavesOtherSignersAlone) {
  request("kubelet", "system:serviceaccount:shop:web", spiffeId({"shop", "web"}),
          "kubernetes.io/kube-apiserver-client");
  request("mesh", "system:serviceaccount:shop:web", spiffeId({"shop", "web"}));
  settled("mesh");  // the controller has seen both by now
  auto other = rest_->get(client::resources::kCertificateSigningRequests, "", "kubelet");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->value("status", json::object()).contains("conditions")) << other->dump();
}

TEST_F(MeshSignerTest, TheSidecarsRequestIsDeniedWhenItIsNotThatServiceAccount) {
  // The sidecar's own loop, but the client is not the service account it claims (this test
  // server takes every unauthenticated caller as one user): denied, and said so.
  WorkloadCertificateOptions o;
  o.id = {"shop", "web"};
  o.podName = "web-1";
  o.caPem = ca_.certPem;
  o.waitLimit = 5s;
  WorkloadCertificateManager manager(*rest_, o, [](const WorkloadCredentials&) {});
  auto creds = manager.requestCertificate();
  ASSERT_FALSE(creds.ok());
  EXPECT_EQ(creds.status().code(), 403);
  EXPECT_NE(creds.status().message().find("Denied"), std::string::npos) << creds.status().message();
  EXPECT_NE(creds.status().message().find("mesh-shop-web-1-"), std::string::npos);
}

}  // namespace
}  // namespace minik8s::mesh
