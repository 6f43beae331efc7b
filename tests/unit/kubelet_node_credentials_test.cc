// The agent's TLS bootstrap end to end against an in-process API server that knows the join
// token, with the CSR approving and signing controllers running: the node gets a client and a
// serving certificate from the cluster CA, renews, and reports denial and timeouts clearly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "api/csr_rules.h"
#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/join_token.h"
#include "client/informer.h"
#include "common/base64.h"
#include "common/http.h"
#include "controllers/certificates/csr_approving_controller.h"
#include "controllers/certificates/csr_signing_controller.h"
#include "kubelet/certificate_manager.h"
#include "kubelet/node_credentials.h"
#include "storage/store.h"

namespace minik8s::kubelet {
namespace {

using namespace std::chrono_literals;
namespace certs = controllers::certificates;
namespace csr = api::csr;
namespace auth = apiserver::auth;

// Bearer tokens standing in for client certificates (the test server speaks plain HTTP):
// "node-<name>" is system:node:<name>, "admin" is in system:masters.
class FakeIdentities : public auth::TokenAuthenticator {
 public:
  std::optional<Result<auth::UserInfo>> authenticate(const std::string& token) override {
    auth::UserInfo u;
    if (token.rfind("node-", 0) == 0) {
      u.name = "system:node:" + token.substr(5);
      u.groups = {auth::kNodesGroup};
    } else if (token == "admin") {
      u.name = "kubernetes-admin";
      u.groups = {auth::kSystemMasters};
    } else {
      return std::nullopt;
    }
    return Result<auth::UserInfo>(u);
  }
};

class NodeBootstrapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("minik8s-node-creds-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto c = pki::createCA("minik8s-ca");
    ASSERT_TRUE(c.ok());
    ca = *c;
    auto t = makeJoinToken(ca.certPem);
    ASSERT_TRUE(t.ok());
    token = *t;

    auto s = storage::openStore("sqlite://" + dir + "/state.db");
    ASSERT_TRUE(s.ok());
    store = std::move(s.value());
    apiserver::ApiServerOptions o;
    o.tokenAuthenticators = {std::make_shared<apiserver::JoinTokenAuthenticator>(token),
                             std::make_shared<FakeIdentities>()};
    api = std::make_unique<apiserver::ApiServer>(*store, api::Scheme::builtin(), o);
    ASSERT_TRUE(api->start().ok());
    http = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { api->handle(req, w); });
    ASSERT_TRUE(http->start("127.0.0.1:0").ok());
    url = "http://127.0.0.1:" + std::to_string(http->port());

    controllerClient = clientAs("admin");
    csrs = std::make_unique<client::Informer>(*controllerClient,
                                              client::resources::kCertificateSigningRequests);
    approver = std::make_unique<certs::CsrApprovingController>(*controllerClient, *csrs);
    certs::CsrSigningOptions so;
    so.ca = ca;
    signer = std::make_unique<certs::CsrSigningController>(*controllerClient, *csrs, so);
    csrs->start();
    ASSERT_TRUE(csrs->waitForSync(5s));
    approver->start();
    signer->start();

    options.pkiDir = dir + "/agent/pki";
    options.nodeName = "n1";
    options.servingIps = {"10.0.0.5"};
    options.waitTimeout = 10s;
    options.pollInterval = 20ms;
  }

  void TearDown() override {
    if (approver) approver->stop();
    if (signer) signer->stop();
    if (csrs) csrs->stop();
    if (http) http->stop();
    if (api) api->stop();
    std::filesystem::remove_all(dir);
  }

  std::unique_ptr<client::RestClient> clientAs(const std::string& bearer) {
    auto c = std::make_unique<client::RestClient>(url);
    if (!bearer.empty()) c->setBearerToken(bearer);
    return c;
  }

  // The join token for the bootstrap; a certificate for system:node:<n> is the "node-<n>" token.
  ClientFactory factory() {
    return [this](const pki::KeyAndCert* cert) {
      if (!cert) return clientAs(token.toString());
      auto info = pki::parseCertificate(cert->certPem);
      EXPECT_TRUE(info.ok());
      ++certificateLogins;
      return clientAs("node-" + info->commonName.substr(std::string("system:node:").size()));
    };
  }

  size_t csrCount() {
    auto list = controllerClient->list(client::resources::kCertificateSigningRequests, "");
    return list.ok() ? (*list)["items"].size() : 0;
  }

  std::string dir, url;
  pki::KeyAndCert ca;
  JoinToken token;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<apiserver::ApiServer> api;
  std::unique_ptr<http::Server> http;
  std::unique_ptr<client::RestClient> controllerClient;
  std::unique_ptr<client::Informer> csrs;
  std::unique_ptr<certs::CsrApprovingController> approver;
  std::unique_ptr<certs::CsrSigningController> signer;
  NodeCredentialsOptions options;
  int certificateLogins = 0;
};

TEST(CredentialState, TwentyPercentBeforeExpiryIsRenewalTime) {
  pki::CertInfo c;
  const auto start = std::chrono::system_clock::from_time_t(1'000'000);
  c.notBefore = start;
  c.notAfter = start + 100h;
  EXPECT_EQ(credentialState(c, start + 1h, 0.2), CredentialState::kValid);
  EXPECT_EQ(credentialState(c, start + 79h, 0.2), CredentialState::kValid);
  EXPECT_EQ(credentialState(c, start + 81h, 0.2), CredentialState::kRenewalDue);
  EXPECT_EQ(credentialState(c, start + 100h, 0.2), CredentialState::kExpired);
  EXPECT_EQ(credentialState(c, start - 1h, 0.2), CredentialState::kExpired);
}

TEST_F(NodeBootstrapTest, JoinTokenBuysAClientCertificateOnce) {
  NodeCredentials creds(options);
  EXPECT_EQ(creds.clientState(), CredentialState::kMissing);
  auto client = creds.ensureClientCertificate(factory());
  ASSERT_TRUE(client.ok()) << client.status().message();
  EXPECT_TRUE(pki::verifyCertificate(ca.certPem, client->certPem).ok());
  auto info = pki::parseCertificate(client->certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "system:node:n1");
  EXPECT_EQ(info->organizations, std::vector<std::string>{"system:nodes"});
  EXPECT_TRUE(info->clientAuth);
  EXPECT_EQ(*pki::readPemFile(creds.clientCertPath()), client->certPem);
  EXPECT_EQ(*pki::readPemFile(creds.clientKeyPath()), client->keyPem);
  EXPECT_EQ(
      std::filesystem::status(creds.clientKeyPath()).permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(creds.clientState(), CredentialState::kValid);

  // The CSR object says who asked and who approved.
  auto list = controllerClient->list(client::resources::kCertificateSigningRequests, "");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["items"].size(), 1u);
  const json& csr = (*list)["items"][0];
  EXPECT_EQ(csr["metadata"]["name"].get<std::string>().rfind("node-csr-", 0), 0u);
  EXPECT_EQ(csr["spec"]["username"], "system:bootstrap:" + token.id);
  EXPECT_EQ(csr["spec"]["signerName"], csr::kKubeletClientSigner);
  EXPECT_EQ(csr["status"]["conditions"][0]["reason"], "AutoApproved");

  // A second start keeps the stored certificate: no new CSR, no login.
  NodeCredentials again(options);
  auto kept = again.ensureClientCertificate(factory());
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->certPem, client->certPem);
  EXPECT_EQ(csrCount(), 1u);
  EXPECT_EQ(certificateLogins, 0);
}

TEST_F(NodeBootstrapTest, ServingCertificateForTheNodesAddresses) {
  NodeCredentials creds(options);
  auto client = creds.ensureClientCertificate(factory());
  ASSERT_TRUE(client.ok()) << client.status().message();
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "n1"}}},
               {"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.5"}}}}}}};
  auto created = controllerClient->create(client::resources::kNodes, "", node);
  ASSERT_TRUE(created.ok()) << created.status().message();
  if (!(*created)["status"].contains("addresses")) {  // status may be reset on create
    (*created)["status"] = node["status"];
    ASSERT_TRUE(controllerClient->update(client::resources::kNodes, *created, "status").ok());
  }
  auto serving = creds.ensureServingCertificate(factory(), *client);
  ASSERT_TRUE(serving.ok()) << serving.status().message();
  EXPECT_TRUE(pki::verifyCertificate(ca.certPem, serving->certPem).ok());
  auto info = pki::parseCertificate(serving->certPem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "system:node:n1");
  EXPECT_EQ(info->dnsNames, std::vector<std::string>{"n1"});
  EXPECT_EQ(info->ipAddresses, std::vector<std::string>{"10.0.0.5"});
  EXPECT_TRUE(info->serverAuth);
  EXPECT_EQ(certificateLogins, 1);  // asked as the node, not with the join token
  EXPECT_EQ(creds.servingState(), CredentialState::kValid);
}

TEST_F(NodeBootstrapTest, RenewalUsesTheCurrentCertificate) {
  NodeCredentials first(options);
  auto old = first.ensureClientCertificate(factory());
  ASSERT_TRUE(old.ok());
  // Ten months later (of a one-year certificate): renewal is due.
  NodeCredentialsOptions later = options;
  later.now = [] { return std::chrono::system_clock::now() + std::chrono::hours(24 * 300); };
  NodeCredentials creds(later);
  EXPECT_EQ(creds.clientState(), CredentialState::kRenewalDue);
  auto renewed = creds.ensureClientCertificate(factory());
  ASSERT_TRUE(renewed.ok()) << renewed.status().message();
  EXPECT_NE(renewed->certPem, old->certPem);
  EXPECT_NE(renewed->keyPem, old->keyPem);
  EXPECT_EQ(certificateLogins, 1);
  EXPECT_EQ(csrCount(), 2u);
  auto list = controllerClient->list(client::resources::kCertificateSigningRequests, "");
  bool renewalSeen = false;
  for (const auto& c : (*list)["items"]) renewalSeen |= c["spec"]["username"] == "system:node:n1";
  EXPECT_TRUE(renewalSeen);
}

TEST(CertificateRotation, DeadlineIsAJitteredSeventyToNinetyPercentOfTheLifetime) {
  pki::CertInfo c;
  const auto start = std::chrono::system_clock::from_time_t(1'000'000);
  c.notBefore = start;
  c.notAfter = start + 100s;
  EXPECT_EQ(pki::rotationDeadline(c, 0.0), start + 70s);
  EXPECT_EQ(pki::rotationDeadline(c, 0.5), start + 80s);
  EXPECT_EQ(pki::rotationDeadline(c, 1.0), start + 90s);
  EXPECT_EQ(nextBackoff(0ms, 1000ms, 5000ms), 1000ms);
  EXPECT_EQ(nextBackoff(1000ms, 1000ms, 5000ms), 2000ms);
  EXPECT_EQ(nextBackoff(4000ms, 1000ms, 5000ms), 5000ms);
}

std::string serialIn(const std::string& path) {
  return pki::parseCertificate(*pki::readPemFile(path))->serialHex;
}

TEST_F(NodeBootstrapTest, CertificateManagerRotatesBothCertificatesAtTheirDeadline) {
  NodeCredentials creds(options);
  auto client = creds.ensureClientCertificate(factory());
  ASSERT_TRUE(client.ok()) << client.status().message();
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "n1"}}},
               {"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.5"}}}}}}};
  auto created = controllerClient->create(client::resources::kNodes, "", node);
  ASSERT_TRUE(created.ok()) << created.status().message();
  if (!(*created)["status"].contains("addresses")) {
    (*created)["status"] = node["status"];
    ASSERT_TRUE(controllerClient->update(client::resources::kNodes, *created, "status").ok());
  }
  ASSERT_TRUE(creds.ensureServingCertificate(factory(), *client).ok());
  const std::string client1 = serialIn(creds.clientCertPath());
  const std::string serving1 = serialIn(creds.servingCertPath());
  const auto info = *pki::parseCertificate(client->certPem);

  CertificateRotationOptions ro;
  ro.random = [] { return 0.0; };  // the deadline at 70%
  CertificateManager manager(creds, factory(), ro);
  const auto deadline = pki::rotationDeadline(info, 0.0);
  // Before the deadline nothing is asked for; the next look is at the deadline.
  const size_t before = csrCount();
  EXPECT_LE(manager.rotateDue(deadline - 1h), deadline);
  EXPECT_EQ(serialIn(creds.clientCertPath()), client1);
  EXPECT_EQ(serialIn(creds.servingCertPath()), serving1);
  EXPECT_EQ(csrCount(), before);
  // At the deadline both are renewed (new keys, new CSRs, as the node) and the next deadline is
  // the new certificates'.
  const auto next = manager.rotateDue(deadline + 1min);
  EXPECT_NE(serialIn(creds.clientCertPath()), client1);
  EXPECT_NE(serialIn(creds.servingCertPath()), serving1);
  EXPECT_NE(*pki::readPemFile(creds.clientKeyPath()), client->keyPem);
  EXPECT_EQ(csrCount(), before + 2);
  EXPECT_GT(next, std::chrono::system_clock::now() + 24h * 200);
}

TEST_F(NodeBootstrapTest, FailedRotationKeepsTheCertificateAndBacksOff) {
  NodeCredentials creds(options);
  auto client = creds.ensureClientCertificate(factory());
  ASSERT_TRUE(client.ok()) << client.status().message();
  const std::string client1 = serialIn(creds.clientCertPath());
  // An API server that is gone: every request fails.
  ClientFactory unreachable = [](const pki::KeyAndCert*) {
    client::ClientConfig c;
    c.servers = "http://127.0.0.1:1";
    return std::make_unique<client::RestClient>(c);
  };
  CertificateRotationOptions ro;
  ro.random = [] { return 0.0; };
  ro.rotateServing = false;
  CertificateManager manager(creds, unreachable, ro);
  const auto due = pki::parseCertificate(client->certPem)->notAfter - 1h;
  EXPECT_EQ(manager.rotateDue(due), due + 1s);
  EXPECT_EQ(manager.rotateDue(due + 1s), due + 3s);  // 2 s more
  EXPECT_EQ(serialIn(creds.clientCertPath()), client1);
  EXPECT_EQ(*pki::readPemFile(creds.clientKeyPath()), client->keyPem);
}

TEST_F(NodeBootstrapTest, DeniedRequestIsAClearError) {
  // An anonymous request is never approved automatically; an admin denies it.
  std::atomic<bool> done{false};
  std::thread admin([&] {
    while (!done) {
      auto list = controllerClient->list(client::resources::kCertificateSigningRequests, "");
      if (list.ok() && !(*list)["items"].empty()) {
        json csr = (*list)["items"][0];
        csr["status"]["conditions"] = {{{"type", "Denied"},
                                        {"status", "True"},
                                        {"reason", "NotOurNode"},
                                        {"message", "who are you"}}};
        if (controllerClient
                ->update(client::resources::kCertificateSigningRequests, csr, "approval")
                .ok())
          return;
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  auto key = pki::generateKey();
  pki::CertSpec spec;
  spec.commonName = "system:node:n1";
  spec.organizations = {"system:nodes"};
  auto csrPem = pki::createCsr(*key, spec);
  auto anonymous = clientAs("");
  auto r =
      requestCertificate(*anonymous, *csrPem, csr::kKubeletClientSigner, {"client auth"}, options);
  done = true;
  admin.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 403);
  EXPECT_NE(r.status().message().find("Denied (NotOurNode): who are you"), std::string::npos)
      << r.status().message();
}

TEST_F(NodeBootstrapTest, PendingRequestTimesOutNamingTheCsr) {
  auto key = pki::generateKey();
  pki::CertSpec spec;
  spec.commonName = "system:node:n1";
  spec.organizations = {"system:nodes"};
  auto csrPem = pki::createCsr(*key, spec);
  NodeCredentialsOptions quick = options;
  quick.waitTimeout = 1s;
  auto anonymous = clientAs("");
  auto r =
      requestCertificate(*anonymous, *csrPem, csr::kKubeletClientSigner, {"client auth"}, quick);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 504);
  EXPECT_NE(r.status().message().find("kubectl certificate approve node-csr-"), std::string::npos)
      << r.status().message();
}

TEST_F(NodeBootstrapTest, AdminApprovalGetsAnyOfOurSignersSigned) {
  // `kubectl certificate approve` on a kube-apiserver-client CSR: the signer issues it.
  auto key = pki::generateKey();
  pki::CertSpec spec;
  spec.commonName = "alice";
  spec.organizations = {"dev"};
  auto csrPem = pki::createCsr(*key, spec);
  json csr = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", "alice"}}},
              {"spec",
               {{"request", base64::encode(*csrPem)},
                {"signerName", csr::kApiServerClientSigner},
                {"usages", {"client auth"}}}}};
  auto admin = clientAs("admin");
  ASSERT_TRUE(admin->create(client::resources::kCertificateSigningRequests, "", csr).ok());
  std::this_thread::sleep_for(200ms);
  auto pending = admin->get(client::resources::kCertificateSigningRequests, "", "alice");
  ASSERT_TRUE(pending.ok());
  EXPECT_FALSE(csr::isIssued(*pending)) << "nobody approved it yet";
  json approved = *pending;
  approved["status"]["conditions"] = {{{"type", "Approved"},
                                       {"status", "True"},
                                       {"reason", "KubectlApprove"},
                                       {"message", "approved by kubectl"}}};
  ASSERT_TRUE(
      admin->update(client::resources::kCertificateSigningRequests, approved, "approval").ok());
  std::optional<json> issued;
  for (int i = 0; i < 250 && !issued; ++i) {
    auto got = admin->get(client::resources::kCertificateSigningRequests, "", "alice");
    if (got.ok() && csr::isIssued(*got)) issued = *got;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(issued.has_value());
  auto pem = base64::decode((*issued)["status"]["certificate"].get<std::string>());
  ASSERT_TRUE(pem.ok());
  EXPECT_TRUE(pki::verifyCertificate(ca.certPem, *pem).ok());
  EXPECT_EQ(pki::parseCertificate(*pem)->commonName, "alice");
}

// A TLS server answering /cacerts with `servedCa`, its certificate issued by `ca`.
class CaDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca = *pki::createCA("cluster-ca");
    other = *pki::createCA("impostor-ca");
    token = makeJoinToken(ca.certPem)->toString();
    pki::CertSpec spec;
    spec.commonName = "kube-apiserver";
    spec.ipAddresses = {"127.0.0.1"};
    spec.serverAuth = true;
    auto serving = pki::issue(ca, spec);
    ASSERT_TRUE(serving.ok());
    server =
        std::make_unique<http::Server>([this](const http::Request& req, http::ResponseWriter& w) {
          w.send(req.path == "/cacerts" ? http::Response::text(200, servedCa)
                                        : http::Response::text(404, "no"));
        });
    http::TlsServerConfig tls;
    tls.certPem = serving->certPem;
    tls.keyPem = serving->keyPem;
    ASSERT_TRUE(server->enableTls(tls).ok());
    ASSERT_TRUE(server->start("127.0.0.1:0").ok());
    url = "https://127.0.0.1:" + std::to_string(server->port());
    servedCa = ca.certPem;
  }
  void TearDown() override { server->stop(); }

  pki::KeyAndCert ca, other;
  std::string token, url, servedCa;
  std::unique_ptr<http::Server> server;
};

TEST_F(CaDiscoveryTest, FetchesTheCaTheTokenNames) {
  auto trust = discoverServerTrust(url, "", token, false);
  ASSERT_TRUE(trust.ok()) << trust.status().message();
  EXPECT_EQ(trust->caPem, ca.certPem);
  EXPECT_FALSE(trust->insecureSkipVerify);
  // And the CA really verifies the server.
  http::TlsClientConfig verified;
  verified.caPem = trust->caPem;
  http::Client c(url, verified);
  auto r = c.get("/cacerts");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

TEST_F(CaDiscoveryTest, RefusesAnotherCa) {
  servedCa = other.certPem;  // a server pretending to be ours
  auto trust = discoverServerTrust(url, "", token, false);
  ASSERT_FALSE(trust.ok());
  EXPECT_EQ(trust.status().code(), 401);
}

TEST_F(CaDiscoveryTest, CaFileMustMatchTheToken) {
  auto trust = discoverServerTrust(url, ca.certPem, token, false);
  ASSERT_TRUE(trust.ok());
  EXPECT_EQ(trust->caPem, ca.certPem);
  EXPECT_FALSE(discoverServerTrust(url, other.certPem, token, false).ok());
  // A token without hash trusts the CA file alone.
  auto plain = discoverServerTrust(url, other.certPem, "abcdef.0123456789abcdef", false);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->caPem, other.certPem);
}

TEST_F(CaDiscoveryTest, TokenWithoutHashNeedsInsecureFlag) {
  auto refused = discoverServerTrust(url, "", "abcdef.0123456789abcdef", false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--insecure-skip-tls-verify"), std::string::npos);
  auto insecure = discoverServerTrust(url, "", "K10legacy", true);
  ASSERT_TRUE(insecure.ok());
  EXPECT_TRUE(insecure->insecureSkipVerify);
  EXPECT_EQ(insecure->caPem, ca.certPem);  // what the server says, unverified
  // Plain HTTP servers need no trust at all.
  auto http = discoverServerTrust("http://127.0.0.1:1", "", "whatever", false);
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(http->caPem, "");
}

}  // namespace
}  // namespace minik8s::kubelet
