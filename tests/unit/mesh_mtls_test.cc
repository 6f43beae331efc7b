// Mutual TLS between sidecars: the workload-certificate rules (mesh/identity.h), PeerAuthentication
// resolution, and two real proxies on loopback talking TLS to each other with certificates from a
// CA made here (mTLS, STRICT refusing plain text, PERMISSIVE taking both, a foreign CA and a
// wrong identity refused, rotation).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "common/base64.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "common/pki.h"
#include "common/yaml_json.h"
#include "mesh/identity.h"
#include "mesh/mesh_config.h"
#include "mesh/peer_authentication.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "mesh_scripted_backend.h"
#include "raw_exchange.h"

namespace minik8s::mesh {
namespace {

json csrObject(const std::string& username, const std::string& csrPem,
               const std::string& signer = kWorkloadSigner) {
  return {{"metadata", {{"name", "c"}}},
          {"spec",
           {{"signerName", signer},
            {"username", username},
            {"request", base64::encode(csrPem)},
            {"usages", {"server auth", "client auth"}}}}};
}

std::string workloadCsr(const std::string& spiffe) {
  auto key = pki::generateKey();
  EXPECT_TRUE(key.ok());
  auto csr = createWorkloadCsr(*key, spiffe);
  EXPECT_TRUE(csr.ok()) << csr.status().message();
  return *csr;
}

TEST(MeshIdentityTest, SpiffeIdsAndServiceAccountUsers) {
  EXPECT_EQ(spiffeId({"shop", "web"}), "spiffe://cluster.local/ns/shop/sa/web");
  auto id = parseSpiffeId("spiffe://cluster.local/ns/shop/sa/web");
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, (WorkloadId{"shop", "web"}));
  EXPECT_FALSE(parseSpiffeId("spiffe://other.domain/ns/shop/sa/web"));
  EXPECT_FALSE(parseSpiffeId("spiffe://cluster.local/ns/shop/web"));
  EXPECT_FALSE(parseSpiffeId("spiffe://cluster.local/ns/Shop!/sa/web"));
  EXPECT_EQ(*serviceAccountOfUser("system:serviceaccount:shop:web"), (WorkloadId{"shop", "web"}));
  EXPECT_FALSE(serviceAccountOfUser("alice"));
  EXPECT_FALSE(serviceAccountOfUser("system:node:n1"));

  std::string payload =
      base64::encode(R"({"sub":"system:serviceaccount:shop:web"})", base64::kRawUrl);
  auto fromToken = workloadOfToken("eyJhbGciOiJSUzI1NiJ9." + payload + ".c2ln");
  ASSERT_TRUE(fromToken.ok()) << fromToken.status().message();
  EXPECT_EQ(*fromToken, (WorkloadId{"shop", "web"}));
  EXPECT_FALSE(workloadOfToken("not-a-jwt").ok());
}

TEST(MeshIdentityTest, ApprovesOnlyTheRequestersOwnIdentity) {
  const std::string mine = spiffeId({"shop", "web"});
  auto ok = decideWorkloadCsr(csrObject("system:serviceaccount:shop:web", workloadCsr(mine)));
  EXPECT_TRUE(ok.ours);
  EXPECT_TRUE(ok.approve) << ok.reason;
  EXPECT_EQ(ok.validity, std::chrono::hours(24));

  // Another service account's identity, another namespace's, a user who is no service account.
  auto other = decideWorkloadCsr(
      csrObject("system:serviceaccount:shop:web", workloadCsr(spiffeId({"shop", "admin"}))));
  EXPECT_TRUE(other.ours);
  EXPECT_FALSE(other.approve);
  EXPECT_NE(other.reason.find("must name exactly " + mine), std::string::npos) << other.reason;
  EXPECT_FALSE(
      decideWorkloadCsr(csrObject("system:serviceaccount:bank:web", workloadCsr(mine))).approve);
  auto user = decideWorkloadCsr(csrObject("alice", workloadCsr(mine)));
  EXPECT_FALSE(user.approve);
  EXPECT_NE(user.reason.find("not a service account"), std::string::npos);

  // A subject or a DNS name besides the URI: refused (the subject would be an API user).
  auto key = pki::generateKey();
  pki::CertSpec spec;
  spec.commonName = "system:admin";
  auto withSubject = pki::createCsr(*key, spec);
  ASSERT_TRUE(withSubject.ok());
  EXPECT_FALSE(
      decideWorkloadCsr(csrObject("system:serviceaccount:shop:web", *withSubject)).approve);
  pki::CertSpec dns;
  dns.dnsNames = {"web.shop.svc"};
  auto withDns = pki::createCsr(*key, dns);
  ASSERT_TRUE(withDns.ok());
  EXPECT_FALSE(decideWorkloadCsr(csrObject("system:serviceaccount:shop:web", *withDns)).approve);

  // Another signer is not ours; the validity asked is kept within bounds.
  EXPECT_FALSE(decideWorkloadCsr(csrObject("system:serviceaccount:shop:web", workloadCsr(mine),
                                           "kubernetes.io/kube-apiserver-client"))
                   .ours);
  json shortLived = csrObject("system:serviceaccount:shop:web", workloadCsr(mine));
  shortLived["spec"]["expirationSeconds"] = 60;
  EXPECT_EQ(decideWorkloadCsr(shortLived).validity, kMinWorkloadCertTtl);
}

TEST(MeshIdentityTest, SignsACertificateWithTheUriSanAndNoSubject) {
  auto ca = pki::createCA("test-ca");
  ASSERT_TRUE(ca.ok());
  const std::string id = spiffeId({"shop", "web"});
  auto cert = signWorkloadCsr(*ca, workloadCsr(id), std::chrono::hours(1));
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  EXPECT_TRUE(pki::verifyCertificate(ca->certPem, *cert).ok());
  auto uris = certificateUris(*cert);
  ASSERT_TRUE(uris.ok());
  EXPECT_EQ(*uris, std::vector<std::string>{id});
  auto info = pki::parseCertificate(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->commonName, "");  // the API server authenticates nobody with it
  EXPECT_TRUE(info->serverAuth && info->clientAuth);
  EXPECT_FALSE(info->isCA);
  auto life = info->notAfter - info->notBefore;
  EXPECT_GE(life, std::chrono::minutes(60));
  EXPECT_LE(life, std::chrono::minutes(62));
}

TEST(MeshIdentityTest, ClassifiesTheFirstBytes) {
  EXPECT_EQ(classifyHello("GET / HTTP/1.1\r\n"), Hello::kPlain);
  EXPECT_EQ(classifyHello(""), Hello::kIncomplete);
  EXPECT_EQ(classifyHello(std::string("\x16\x03\x01\x00", 4)), Hello::kIncomplete);
  // A ClientHello with ALPN [h2, istio-peer-exchange], and one with h2 only.
  auto hello = [](const std::vector<std::string>& protocols) {
    std::string alpnList;
    for (const auto& p : protocols) alpnList += static_cast<char>(p.size()) + p;
    std::string ext = std::string("\x00\x10", 2);
    ext += static_cast<char>((alpnList.size() + 2) >> 8);
    ext += static_cast<char>((alpnList.size() + 2) & 0xff);
    ext += static_cast<char>(alpnList.size() >> 8);
    ext += static_cast<char>(alpnList.size() & 0xff);
    ext += alpnList;
    std::string body = std::string("\x03\x03", 2) + std::string(32, 'r');
    body += std::string("\x00", 1);              // session id
    body += std::string("\x00\x02\x13\x01", 4);  // one cipher suite
    body += std::string("\x01\x00", 2);          // null compression
    body += static_cast<char>(ext.size() >> 8);
    body += static_cast<char>(ext.size() & 0xff);
    body += ext;
    std::string hs = std::string("\x01", 1) + std::string(1, '\0') +
                     static_cast<char>(body.size() >> 8) + static_cast<char>(body.size() & 0xff) +
                     body;
    return std::string("\x16\x03\x01", 3) + static_cast<char>(hs.size() >> 8) +
           static_cast<char>(hs.size() & 0xff) + hs;
  };
  std::string mesh = hello({"h2", kMeshAlpn});
  EXPECT_EQ(classifyHello(mesh), Hello::kMeshTls);
  EXPECT_EQ(classifyHello(mesh.substr(0, mesh.size() - 3)), Hello::kIncomplete);
  EXPECT_EQ(classifyHello(hello({"h2", "http/1.1"})), Hello::kOtherTls);
}

PeerAuthentication policy(const std::string& yaml) {
  auto obj = parseYaml(yaml);
  EXPECT_TRUE(obj.ok());
  auto pa = parsePeerAuthentication(*obj);
  EXPECT_TRUE(pa.ok()) << pa.status().message();
  return *pa;
}

TEST(PeerAuthenticationTest, TheMostSpecificLevelWins) {
  const std::map<std::string, std::string> web = {{"app", "web"}};
  std::vector<PeerAuthentication> policies;
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 80), MtlsMode::kPermissive);  // default
  policies.push_back(policy(R"(
metadata: {name: default, namespace: istio-system, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {mtls: {mode: STRICT}})"));
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 80), MtlsMode::kStrict);  // mesh-wide
  EXPECT_EQ(resolveMtlsMode(policies, "bank", web, 80), MtlsMode::kStrict);
  policies.push_back(policy(R"(
metadata: {name: default, namespace: shop, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {mtls: {mode: PERMISSIVE}})"));
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 80), MtlsMode::kPermissive);  // namespace
  EXPECT_EQ(resolveMtlsMode(policies, "bank", web, 80), MtlsMode::kStrict);
  // A younger namespace-wide policy does not override the older one.
  policies.push_back(policy(R"(
metadata: {name: later, namespace: shop, creationTimestamp: "2026-01-03T00:00:00Z"}
spec: {mtls: {mode: DISABLE}})"));
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 80), MtlsMode::kPermissive);
  policies.push_back(policy(R"(
metadata: {name: web, namespace: shop, creationTimestamp: "2026-01-04T00:00:00Z"}
spec:
  selector: {matchLabels: {app: web}}
  mtls: {mode: STRICT}
  portLevelMtls: {"8080": {mode: DISABLE}})"));
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 80), MtlsMode::kStrict);     // workload
  EXPECT_EQ(resolveMtlsMode(policies, "shop", web, 8080), MtlsMode::kDisable);  // its port
  EXPECT_EQ(resolveMtlsMode(policies, "shop", {{"app", "db"}}, 80), MtlsMode::kPermissive);
  // UNSET inherits from the level above.
  policies.push_back(policy(R"(
metadata: {name: db, namespace: bank, creationTimestamp: "2026-01-05T00:00:00Z"}
spec: {selector: {matchLabels: {app: db}}, mtls: {mode: UNSET}})"));
  EXPECT_EQ(resolveMtlsMode(policies, "bank", {{"app", "db"}}, 80), MtlsMode::kStrict);
}

TEST(PeerAuthenticationTest, BadFieldsAreNamed) {
  auto bad = parseYaml("metadata: {name: x, namespace: shop}\nspec: {mtls: {mode: strict}}");
  auto pa = parsePeerAuthentication(*bad);
  ASSERT_FALSE(pa.ok());
  EXPECT_NE(pa.status().message().find("spec.mtls.mode: Unsupported value"), std::string::npos);
  auto noSelector = parseYaml(
      "metadata: {name: x, namespace: shop}\nspec: {portLevelMtls: {\"80\": {mode: "
      "STRICT}}}");
  EXPECT_NE(parsePeerAuthentication(*noSelector).status().message().find("spec.portLevelMtls"),
            std::string::npos);
  auto badPort = parseYaml(
      "metadata: {name: x, namespace: shop}\nspec: {selector: {matchLabels: {a: b}}, "
      "portLevelMtls: {http: {mode: STRICT}}}");
  EXPECT_NE(parsePeerAuthentication(*badPort).status().message().find("spec.portLevelMtls[http]"),
            std::string::npos);
}

// --- two proxies on loopback -----------------------------------------------------------------

WorkloadCredentials credentialsFor(const pki::KeyAndCert& ca, const WorkloadId& id) {
  WorkloadCredentials c;
  auto key = pki::generateKey();
  EXPECT_TRUE(key.ok());
  c.keyPem = *key;
  c.spiffeId = spiffeId(id);
  auto csr = createWorkloadCsr(c.keyPem, c.spiffeId);
  auto cert = signWorkloadCsr(ca, *csr, std::chrono::hours(1));
  EXPECT_TRUE(cert.ok());
  c.certPem = *cert;
  c.caPem = ca.certPem;
  c.notBefore = std::chrono::system_clock::now();
  c.notAfter = c.notBefore + std::chrono::hours(1);
  return c;
}

double metricValue(metrics::Registry& registry, const std::string& series) {
  std::string text = registry.exposition();
  size_t at = text.find(series + " ");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + series.size() + 1));
}

class MeshMtlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = pki::createCA("mesh-test-ca");
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    ASSERT_TRUE(backend_.start("127.0.0.1:0").ok());

    ProxyOptions server;  // the sidecar of pod shop/web-1, service account web
    server.bindAddress = "127.0.0.1";
    server.outboundPort = server.inboundPort = server.metricsPort = 0;
    server.registry = &serverMetrics_;
    server.podNamespace = "shop";
    server.podName = "web-1";
    appPort_ = backend_.port();
    server.originalDestination = [this](int) -> std::optional<std::pair<std::string, int>> {
      return std::make_pair(std::string("127.0.0.1"), appPort_.load());
    };
    server_ = std::make_unique<SidecarProxy>(server);
    ASSERT_TRUE(server_->start().ok());

    ProxyOptions client;  // the sidecar of pod shop/client-1, service account client
    client.bindAddress = "127.0.0.1";
    client.outboundPort = client.inboundPort = client.metricsPort = 0;
    client.registry = &clientMetrics_;
    client.podNamespace = "shop";
    client.podName = "client-1";
    client.seed = 1;
    client.originalDestination = [](int) -> std::optional<std::pair<std::string, int>> {
      return std::make_pair(std::string("10.96.0.10"), 80);
    };
    client_ = std::make_unique<SidecarProxy>(client);
    ASSERT_TRUE(client_->start().ok());

    ASSERT_TRUE(server_->setCredentials(credentialsFor(ca_, {"shop", "web"})).ok());
    ASSERT_TRUE(client_->setCredentials(credentialsFor(ca_, {"shop", "client"})).ok());
    setPolicies({});
  }

  // The service shop/web (10.96.0.10:80) whose one endpoint is the server sidecar's inbound port
  // (standing for the pod's port, which the pod's nat rules would redirect there).
  void setPolicies(std::vector<json> peerAuthentications, bool serverHasSidecar = true) {
    MeshObjects o = objects(serverHasSidecar);
    o.peerAuthentications = std::move(peerAuthentications);
    apply(o);
  }

  MeshObjects objects(bool serverHasSidecar = true) {
    json svc = {
        {"metadata", {{"name", "web"}, {"namespace", "shop"}}},
        {"spec", {{"clusterIP", "10.96.0.10"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
    json eps = {{"metadata", {{"name", "web"}, {"namespace", "shop"}}},
                {"subsets",
                 {{{"addresses",
                    {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web-1"}}}}}},
                   {"ports", {{{"name", "http"}, {"port", server_->inboundPort()}}}}}}}};
    json containers = json::array({{{"name", "app"}}});
    if (serverHasSidecar) containers.push_back({{"name", "istio-proxy"}});
    json web = {
        {"metadata", {{"name", "web-1"}, {"namespace", "shop"}, {"labels", {{"app", "web"}}}}},
        {"spec", {{"serviceAccountName", "web"}, {"containers", containers}}}};
    json cl = {{"metadata", {{"name", "client-1"}, {"namespace", "shop"}}},
               {"spec",
                {{"serviceAccountName", "client"},
                 {"containers", {{{"name", "app"}}, {{"name", "istio-proxy"}}}}}}};
    MeshObjects o;
    o.services = {svc};
    o.endpoints = {eps};
    o.pods = {web, cl};
    return o;
  }

  void apply(const MeshObjects& o) {
    auto config = buildMeshConfig(o, ++version_);
    server_->setConfig(config);
    client_->setConfig(config);
  }

  json strict(const std::string& mode = "STRICT") {
    return {{"metadata", {{"name", "default"}, {"namespace", "shop"}}},
            {"spec", {{"mtls", {{"mode", mode}}}}}};
  }

  Result<http::Response> viaClientSidecar(const std::string& path) {
    http::Client c("http://127.0.0.1:" + std::to_string(client_->outboundPort()));
    return c.get(path);
  }

  // A client without a sidecar dialling the server pod's port (its nat rule -> inbound).
  std::string plainToServer() { return plainTo(server_->inboundPort()); }
  std::string plainTo(int port) {
    return testing::rawExchange(port,
                                "GET /plain HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n");
  }

  double inbound(const std::string& security, const std::string& principal) {
    return metricValue(serverMetrics_, "mesh_inbound_connections_total{security=\"" + security +
                                           "\",source_principal=\"" + principal + "\"}");
  }

  pki::KeyAndCert ca_;
  http::Server backend_{[](const http::Request& req, http::ResponseWriter& w) {
    w.send(http::Response::text(200, "web " + req.target));
  }};
  std::atomic<int> appPort_{0};  // where the server pod's application listens: backend_'s
  metrics::Registry serverMetrics_, clientMetrics_;
  std::unique_ptr<SidecarProxy> server_, client_;
  int64_t version_ = 0;
};

TEST_F(MeshMtlsTest, SidecarsTalkMutualTlsWithTheirIdentities) {
  auto res = viaClientSidecar("/hello");
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "web /hello");
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 1);
  EXPECT_EQ(metricValue(clientMetrics_, "mesh_outbound_connections_total{security=\"mutual_tls\"}"),
            1);
  // The server's certificate: /certs on its metrics port.
  http::Client scrape("http://127.0.0.1:" + std::to_string(server_->metricsPort()));
  auto certs = scrape.get("/certs");
  ASSERT_TRUE(certs.ok());
  EXPECT_EQ(json::parse(certs->body)["spiffeId"], "spiffe://cluster.local/ns/shop/sa/web");
}

// An upgrade through both sidecars over mutual TLS, with the server's AuthorizationPolicy read
// per request: TCP from the 101 on, TLS on the hop between them.
TEST_F(MeshMtlsTest, AnUpgradeContinuesOverMutualTls) {
  testing::ScriptedBackend app(testing::serveUpgradeThenEcho, 1);
  appPort_ = app.port();
  MeshObjects o = objects();
  // The application's own port as an HTTP service port, so that the policy is read per request.
  o.services.push_back(
      {{"metadata", {{"name", "app"}, {"namespace", "shop"}}},
       {"spec", {{"clusterIP", "10.96.0.11"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}});
  o.endpoints.push_back(
      {{"metadata", {{"name", "app"}, {"namespace", "shop"}}},
       {"subsets",
        {{{"addresses",
           {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web-1"}}}}}},
          {"ports", {{{"name", "http"}, {"port", app.port()}}}}}}}});
  o.authorizationPolicies = {*parseYaml(
      "metadata: {name: ws, namespace: shop}\n"
      "spec: {rules: [{from: [{source: {principals: ['cluster.local/ns/shop/sa/client']}}],"
      " to: [{operation: {paths: ['/ws']}}]}]}")};
  apply(o);
  std::string seen = testing::upgradeThenEcho(client_->outboundPort(), "/ws");
  EXPECT_NE(seen.find("Connection: Upgrade"), std::string::npos) << seen;
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 1);
}

TEST_F(MeshMtlsTest, FiftyConcurrentConnections) {
  // As wrk -c 50: every downstream connection gets its own upstream TLS connection.
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) {
    clients.emplace_back([this, &ok] {
      http::Client c("http://127.0.0.1:" + std::to_string(client_->outboundPort()));
      for (int j = 0; j < 20; ++j) {
        auto res = c.get("/c");
        if (res.ok() && res->status == 200) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 1000);
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 50);
  std::printf(
      "1,000 requests on 50 connections through two sidecars with mTLS: %.0f ms\n",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

TEST_F(MeshMtlsTest, PermissiveTakesPlainTextToo) {
  std::string out = plainToServer();
  EXPECT_NE(out.find("web /plain"), std::string::npos) << out;
  EXPECT_EQ(inbound("plaintext", "unknown"), 1);
  ASSERT_TRUE(viaClientSidecar("/").ok());
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 1);
}

TEST_F(MeshMtlsTest, StrictRefusesPlainTextButNotTheMeshedClient) {
  setPolicies({strict()});
  EXPECT_EQ(plainToServer(), "");  // reset before any byte
  EXPECT_EQ(metricValue(serverMetrics_, "mesh_inbound_refused_total{reason=\"plaintext\"}"), 1);
  auto res = viaClientSidecar("/strict");
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->body, "web /strict");
  // DISABLE: the client sidecar sends plain text, the server takes it.
  setPolicies({strict("DISABLE")});
  auto plain = viaClientSidecar("/disabled");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->body, "web /disabled");
  EXPECT_EQ(inbound("plaintext", "unknown"), 1);
}

TEST_F(MeshMtlsTest, StrictLetsTheNodesProbesIn) {
  // A second sidecar for the same pod that knows 127.0.0.1 as its node's address.
  ProxyOptions o;
  o.bindAddress = "127.0.0.1";
  o.outboundPort = o.inboundPort = o.metricsPort = 0;
  metrics::Registry registry;
  o.registry = &registry;
  o.podNamespace = "shop";
  o.podName = "web-1";
  o.probeSources = {"127.0.0.1"};
  o.originalDestination = [this](int) -> std::optional<std::pair<std::string, int>> {
    return std::make_pair(std::string("127.0.0.1"), backend_.port());
  };
  SidecarProxy probed(o);
  ASSERT_TRUE(probed.start().ok());
  setPolicies({strict()});
  probed.setConfig(server_->config());
  EXPECT_NE(plainTo(probed.inboundPort()).find("web /plain"), std::string::npos);
  EXPECT_EQ(plainToServer(), "");  // the other one still refuses
}

TEST_F(MeshMtlsTest, ACertificateOfAnotherCaIsRefused) {
  auto other = pki::createCA("intruder-ca");
  ASSERT_TRUE(other.ok());
  WorkloadCredentials forged = credentialsFor(*other, {"shop", "client"});
  forged.caPem = ca_.certPem;  // it trusts the right CA, but its own chain is foreign
  ASSERT_TRUE(client_->setCredentials(forged).ok());
  setPolicies({strict()});
  auto res = viaClientSidecar("/");
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 503);
  EXPECT_GE(metricValue(serverMetrics_, "mesh_inbound_refused_total{reason=\"handshake_failed\"}"),
            1);
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 0);
}

TEST_F(MeshMtlsTest, TheServerMustBeTheEndpointsServiceAccount) {
  // The server sidecar holds a valid certificate, but for another service account than its pod.
  ASSERT_TRUE(server_->setCredentials(credentialsFor(ca_, {"shop", "impostor"})).ok());
  auto res = viaClientSidecar("/");
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 503);
  EXPECT_GE(metricValue(clientMetrics_,
                        "mesh_outbound_connections_total{security=\"mutual_tls_failed\"}"),
            1);
}

TEST_F(MeshMtlsTest, PodsWithoutASidecarGetPlainText) {
  setPolicies({}, /*serverHasSidecar=*/false);
  ASSERT_TRUE(viaClientSidecar("/").ok());
  EXPECT_EQ(metricValue(clientMetrics_, "mesh_outbound_connections_total{security=\"plaintext\"}"),
            1);
  EXPECT_EQ(inbound("plaintext", "unknown"), 1);
}

TEST_F(MeshMtlsTest, RotationKeepsServing) {
  http::Client c("http://127.0.0.1:" + std::to_string(client_->outboundPort()));
  ASSERT_TRUE(c.get("/before").ok());
  ASSERT_TRUE(server_->setCredentials(credentialsFor(ca_, {"shop", "web"})).ok());
  ASSERT_TRUE(client_->setCredentials(credentialsFor(ca_, {"shop", "client"})).ok());
  auto again = c.get("/same-connection");  // the pooled TLS connection keeps its session
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->body, "web /same-connection");
  auto fresh = viaClientSidecar("/new-connection");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->body, "web /new-connection");
  http::Client scrape("http://127.0.0.1:" + std::to_string(server_->metricsPort()));
  auto certs = scrape.get("/certs");
  ASSERT_TRUE(certs.ok());
  EXPECT_EQ(json::parse(certs->body)["rotations"], 1);
  EXPECT_EQ(inbound("mutual_tls", "spiffe://cluster.local/ns/shop/sa/client"), 2);
}

}  // namespace
}  // namespace minik8s::mesh
