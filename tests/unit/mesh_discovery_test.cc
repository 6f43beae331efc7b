// The mesh control plane: the MeshConfig's wire form round-trips exactly, and the discovery
// server streams a real API server's registry (one ConfigWatcher, in process) to sidecar
// clients: the snapshot at connect, a deleted pod gone within a second, the last config kept
// while the server is down and replaced after the reconnect, strangers refused.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "client/rest_client.h"
#include "common/base64.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "common/yaml_json.h"
#include "in_process_api_server.h"
#include "mesh/config_watcher.h"
#include "mesh/discovery_client.h"
#include "mesh/discovery_server.h"
#include "mesh/mesh_config_wire.h"
#include "mesh/mesh_resources.h"

namespace minik8s::mesh {
namespace {

namespace res = client::resources;
using namespace std::chrono_literals;

json discoveryYaml(const std::string& text) {
  auto obj = parseYaml(text);
  EXPECT_TRUE(obj.ok()) << text;
  return obj.ok() ? *obj : json();
}

// ---- the wire form ----

std::shared_ptr<const MeshConfig> richConfig() {
  std::vector<std::string> errors;
  auto config = buildMeshConfig(MeshObjects{.services = {discoveryYaml(R"(
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.20, ports: [{name: http, port: 80}, {name: grpc, port: 9000, appProtocol: grpc}]}
)"),
                                                         discoveryYaml(R"(
metadata: {name: db, namespace: shop}
spec: {clusterIP: None, ports: [{name: tcp-db, port: 5432}]}
)")},
                                            .endpoints = {discoveryYaml(R"(
metadata: {name: web, namespace: shop}
subsets:
- addresses:
  - {ip: 10.244.1.7, targetRef: {kind: Pod, name: web-v2, namespace: shop}}
  - {ip: 10.244.2.5, targetRef: {kind: Pod, name: web-v1, namespace: shop}}
  ports: [{name: http, port: 8080}, {name: grpc, port: 9090}]
)")},
                                            .pods = {discoveryYaml(R"(
metadata: {name: web-v2, namespace: shop, labels: {app: web, version: v2}}
spec: {serviceAccountName: web, containers: [{name: web}, {name: istio-proxy}]}
status: {phase: Running, podIP: 10.244.1.7}
)"),
                                                     discoveryYaml(R"(
metadata: {name: web-v1, namespace: shop, labels: {app: web, version: v1}}
spec: {containers: [{name: web}]}
status: {phase: Pending, podIP: 10.244.2.5}
)")},
                                            .virtualServices = {discoveryYaml(R"(
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http:
  - name: firefox
    match:
    - headers: {user-agent: {regex: ".*Firefox.*"}, x-env: {exact: canary}}
    - uri: {prefix: /api/v2/}
    route: [{destination: {host: web, subset: v2, port: {number: 80}}}]
    timeout: 2s
    retries: {attempts: 4}
  - route:
    - {destination: {host: web, subset: v1}, weight: 90}
    - {destination: {host: web.shop.svc.cluster.local, subset: v2}, weight: 10}
)")},
                                            .destinationRules = {discoveryYaml(R"(
metadata: {name: web, namespace: shop}
spec:
  host: web
  trafficPolicy:
    loadBalancer: {simple: LEAST_REQUEST}
    outlierDetection: {consecutive5xxErrors: 3, interval: 5s, baseEjectionTime: 15s, maxEjectionPercent: 50}
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}, trafficPolicy: {loadBalancer: {simple: RANDOM}}}
)")},
                                            .peerAuthentications = {discoveryYaml(R"(
metadata: {name: default, namespace: istio-system, creationTimestamp: "2026-11-26T10:00:00Z"}
spec: {mtls: {mode: STRICT}}
)"),
                                                                    discoveryYaml(R"(
metadata: {name: web, namespace: shop, creationTimestamp: "2026-11-26T11:00:00Z"}
spec:
  selector: {matchLabels: {app: web}}
  mtls: {mode: PERMISSIVE}
  portLevelMtls: {"8080": {mode: DISABLE}}
)")}},
                                42, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return config;
}

TEST(MeshConfigWireTest, RoundTripsExactly) {
  auto config = richConfig();
  json wire = meshConfigToWire(*config);
  // Through text, as the stream sends it.
  auto back = meshConfigFromWire(json::parse(wire.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(meshConfigToWire(**back), wire);
  EXPECT_EQ(meshConfigToJson(**back), meshConfigToJson(*config));

  // It routes as the original: the regex is compiled again, subsets and policies are there.
  const MeshConfig& c = **back;
  EXPECT_EQ(c.version, 42);
  const MeshService* web = c.serviceAt("10.96.0.20", 80);
  ASSERT_NE(web, nullptr);
  ASSERT_EQ(web->routes.size(), 2u);
  auto header = [](std::string_view name) -> std::optional<std::string_view> {
    if (name == "user-agent") return std::string_view("Mozilla Firefox/120");
    if (name == "x-env") return std::string_view("canary");
    return std::nullopt;
  };
  const HttpRoute* r = matchRoute(web->routes, "/", header);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->name, "firefox");
  EXPECT_EQ(r->timeout, 2s);
  EXPECT_EQ(r->retryAttempts, 4);
  EXPECT_EQ(r->route[0].port, 80);
  EXPECT_EQ(web->routes[1].route[1].host, "shop/web");
  EXPECT_EQ(web->routes[1].route[1].weight, 10);
  EXPECT_EQ(web->trafficPolicy.loadBalancer, LoadBalancer::kLeastRequest);
  ASSERT_TRUE(web->trafficPolicy.outlierDetection.has_value());
  EXPECT_EQ(web->trafficPolicy.outlierDetection->baseEjectionTime, 15s);
  ASSERT_TRUE(web->subsets.at("v2").trafficPolicy.has_value());
  EXPECT_EQ(web->subsets.at("v2").trafficPolicy->loadBalancer, LoadBalancer::kRandom);
  EXPECT_EQ(subsetEndpoints(*web, *web->port(80), "v2").size(), 1u);
  const MeshEndpoint& v2 = *subsetEndpoints(*web, *web->port(80), "v2")[0];
  EXPECT_TRUE(v2.sidecar);
  EXPECT_EQ(v2.serviceAccount, "web");
  EXPECT_EQ(web->port(9000)->appProtocol, "grpc");
  ASSERT_NE(c.podAt("10.244.1.7"), nullptr);
  EXPECT_EQ(c.podAt("10.244.2.5"), nullptr);  // not Running
  EXPECT_EQ(c.mtlsMode("shop", {{"app", "web"}}, 8080), MtlsMode::kDisable);
  EXPECT_EQ(c.mtlsMode("shop", {{"app", "web"}}, 80), MtlsMode::kPermissive);
  EXPECT_EQ(c.mtlsMode("other", {}, 80), MtlsMode::kStrict);
}

TEST(MeshConfigWireTest, BadInputNamesTheField) {
  json wire = meshConfigToWire(*richConfig());
  wire["services"][1]["ports"][0]["endpoints"][0]["port"] = "8080";
  auto r = meshConfigFromWire(wire);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 400);
  EXPECT_NE(r.status().message().find("config.services[1].ports[0].endpoints[0].port"),
            std::string::npos)
      << r.status().message();

  wire = meshConfigToWire(*richConfig());
  wire["services"][1]["routes"][0]["match"][0]["headers"]["user-agent"] = {{"regex", "(("}};
  r = meshConfigFromWire(wire);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("headers.user-agent.regex"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(meshConfigFromWire(json::array()).ok());
}

TEST(MeshConfigWireTest, ADeltaCarriesOnlyTheChangesAndAppliesToItsBase) {
  auto base = richConfig();
  json wire = meshConfigToWire(*base);
  // Version 43: db goes, web loses an endpoint, web-v1's pod goes, one PeerAuthentication goes.
  wire["version"] = 43;
  wire["services"].erase(0);  // shop/db (sorted by key)
  wire["services"][0]["ports"][0]["endpoints"].erase(1);
  wire["pods"].erase(0);  // shop/web-v1
  wire["podByIp"]["10.244.9.9"] = "shop/web-v2";
  wire["byVip"].erase("10.96.0.20:9000");
  wire["peerAuthentications"].erase(1);
  auto to = meshConfigFromWire(wire);
  ASSERT_TRUE(to.ok()) << to.status().message();

  json delta = meshConfigDeltaToWire(*base, **to);
  EXPECT_EQ(delta["removedServices"], json::array({"shop/db"}));
  EXPECT_EQ(delta["services"].size(), 1u);
  EXPECT_EQ(delta["removedPods"], json::array({"shop/web-v1"}));
  EXPECT_TRUE(delta["pods"].empty());
  auto applied = applyMeshConfigDelta(*base, json::parse(delta.dump()));
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(meshConfigToWire(**applied), meshConfigToWire(**to));

  // Nothing changed but the version: an empty delta.
  json same = meshConfigDeltaToWire(**to, **to);
  EXPECT_TRUE(same["services"].empty() && same["pods"].empty() && same["byVip"].empty());

  // Only onto the version it was made from.
  auto wrong = applyMeshConfigDelta(**to, delta);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), 409);
  delta["services"][0]["ports"] = "x";
  auto bad = applyMeshConfigDelta(*base, delta);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("delta.services[0].ports"), std::string::npos)
      << bad.status().message();
}

// ---- the stream ----

// Tokens of this test: two sidecars' service accounts and a user.
class FakeAuthenticator : public DiscoveryAuthenticator {
 public:
  Result<DiscoveryPeer> authenticate(const std::string& token) override {
    if (token == "sa-token") return DiscoveryPeer{"system:serviceaccount:default:web", {}};
    if (token == "user-token") return DiscoveryPeer{"alice", {"system:authenticated"}};
    return Status::Unauthorized("the token was refused");
  }
};

class MeshDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().ok());
    rest_ = std::make_unique<client::RestClient>(api_.url());
    ASSERT_TRUE(ensureMeshResources(*rest_).ok());
    startServer(0);
    watcher_ = std::make_unique<ConfigWatcher>(
        *rest_, [this](auto config) { server_->setConfig(std::move(config)); });
    watcher_->start();
    ASSERT_TRUE(watcher_->waitForSync(10s));
  }
  void TearDown() override {
    for (auto& c : clients_) c->stop();
    watcher_->stop();
    server_->stop();
    api_.stop();
  }

  void startServer(int port) {
    server_ = std::make_unique<DiscoveryServer>(auth_);
    ASSERT_TRUE(server_->start("127.0.0.1:" + std::to_string(port)).ok());
    port_ = server_->port();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  struct Proxy {
    std::mutex mu;
    std::condition_variable cv;
    std::shared_ptr<const MeshConfig> config;
    int applied = 0;
    std::unique_ptr<DiscoveryClient> client;
    void stop() { client->stop(); }
    bool waitFor(std::function<bool(const MeshConfig&)> pred, std::chrono::milliseconds t) {
      std::unique_lock lock(mu);
      return cv.wait_for(lock, t, [&] { return config && pred(*config); });
    }
  };

  Proxy& connect(const std::string& pod) {
    auto p = std::make_unique<Proxy>();
    Proxy* raw = p.get();
    DiscoveryClientOptions o;
    o.url = url();
    o.token = [] { return std::string("sa-token"); };
    o.pod = pod;
    o.maxBackoff = 200ms;
    raw->client = std::make_unique<DiscoveryClient>(o, [raw](auto config) {
      std::lock_guard lock(raw->mu);
      raw->config = std::move(config);
      ++raw->applied;
      raw->cv.notify_all();
    });
    raw->client->start();
    clients_.push_back(std::move(p));
    return *raw;
  }

  void create(const client::Resource& r, const std::string& text) {
    auto created = rest_->create(r, "default", discoveryYaml(text));
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  // Service web with two pods' endpoints; its virtual IP.
  std::string createWeb() {
    for (const char* name : {"web-1", "web-2"}) {
      create(res::kPods, "metadata: {name: " + std::string(name) +
                             ", namespace: default, labels: {app: web}}\n"
                             "spec: {containers: [{name: web, image: minik8s/python}]}\n");
    }
    create(res::kServices, R"(
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 80, targetPort: 8080}], selector: {app: web}}
)");
    create(res::kEndpoints, R"(
metadata: {name: web, namespace: default}
subsets:
- addresses:
  - {ip: 10.1.0.1, targetRef: {kind: Pod, name: web-1, namespace: default}}
  - {ip: 10.1.0.2, targetRef: {kind: Pod, name: web-2, namespace: default}}
  ports: [{name: http, port: 8080}]
)");
    auto svc = rest_->get(res::kServices, "default", "web");
    EXPECT_TRUE(svc.ok());
    return svc.ok() ? (*svc)["spec"].value("clusterIP", "") : "";
  }

  // The endpoints of web:80 that `config` routes to.
  static std::vector<std::string> webEndpoints(const MeshConfig& c) {
    std::vector<std::string> out;
    const MeshService* s = c.service("default/web");
    if (s && s->port(80))
      for (const auto& e : s->port(80)->endpoints) out.push_back(e.ip);
    return out;
  }

  // web-2 goes: its pod and its address.
  void deleteWeb2() {
    auto ep = rest_->get(res::kEndpoints, "default", "web");
    ASSERT_TRUE(ep.ok());
    json obj = *ep;
    obj["subsets"][0]["addresses"] = json::array(
        {{{"ip", "10.1.0.1"},
          {"targetRef", {{"kind", "Pod"}, {"name", "web-1"}, {"namespace", "default"}}}}});
    ASSERT_TRUE(rest_->update(res::kEndpoints, obj).ok());
    ASSERT_TRUE(rest_->remove(res::kPods, "default", "web-2").ok());
  }

  testing::InProcessApiServer api_;
  std::unique_ptr<client::RestClient> rest_;
  FakeAuthenticator auth_;
  std::unique_ptr<DiscoveryServer> server_;
  int port_ = 0;
  std::unique_ptr<ConfigWatcher> watcher_;
  std::vector<std::unique_ptr<Proxy>> clients_;
};

TEST_F(MeshDiscoveryTest, SnapshotAtConnectThenAPodDeletedReachesEveryProxyWithinASecond) {
  std::string vip = createWeb();
  ASSERT_FALSE(vip.empty());
  std::vector<Proxy*> proxies;
  for (int i = 0; i < 5; ++i) proxies.push_back(&connect("default/client-" + std::to_string(i)));
  for (Proxy* p : proxies) {
    EXPECT_TRUE(p->waitFor(
        [&](const MeshConfig& c) {
          return c.serviceAt(vip, 80) != nullptr && webEndpoints(c).size() == 2;
        },
        5s));
  }
  const int64_t before = proxies[0]->client->version();
  deleteWeb2();
  for (Proxy* p : proxies) {
    EXPECT_TRUE(p->waitFor(
        [](const MeshConfig& c) {
          return webEndpoints(c) == std::vector<std::string>{"10.1.0.1"} &&
                 c.pod("default/web-2") == nullptr;
        },
        1s));
  }
  EXPECT_GT(proxies[0]->client->version(), before);
  EXPECT_GT(server_->deltasSent(), 0u);  // the change went as a delta

  // Every proxy acknowledged what it was sent.
  auto acked = [&] {
    auto conns = server_->connections();
    if (conns.size() != proxies.size()) return false;
    for (const auto& c : conns)
      if (c.acked != c.sent || c.acked < proxies[0]->client->version()) return false;
    return true;
  };
  for (int i = 0; i < 100 && !acked(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(acked());
}

TEST_F(MeshDiscoveryTest, ServerDownKeepsTheLastConfigAndTheReconnectBringsTheNewOne) {
  createWeb();
  Proxy& p = connect("default/client");
  ASSERT_TRUE(p.waitFor([](const MeshConfig& c) { return webEndpoints(c).size() == 2; }, 5s));
  std::shared_ptr<const MeshConfig> kept;
  int applied = 0;
  {
    std::lock_guard lock(p.mu);
    kept = p.config;
    applied = p.applied;
  }

  server_->stop();
  deleteWeb2();  // nobody tells the proxy while the server is down
  for (int i = 0; i < 50 && p.client->connected(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(p.client->connected());
  std::this_thread::sleep_for(300ms);  // several reconnect attempts fail meanwhile
  {
    std::lock_guard lock(p.mu);
    EXPECT_EQ(p.config, kept);
    EXPECT_EQ(p.applied, applied);
    EXPECT_EQ(webEndpoints(*p.config).size(), 2u);
  }
  EXPECT_GT(p.client->reconnects(), 0);

  // The server comes back on its port: the proxy reconnects and gets the current registry.
  watcher_->stop();  // a restarted server starts from a fresh watcher
  auto old = std::move(server_);
  startServer(port_);
  watcher_ = std::make_unique<ConfigWatcher>(
      *rest_, [this](auto config) { server_->setConfig(std::move(config)); });
  watcher_->start();
  EXPECT_TRUE(p.waitFor([](const MeshConfig& c) { return webEndpoints(c).size() == 1; }, 5s));
  EXPECT_TRUE(p.client->connected());
}

TEST_F(MeshDiscoveryTest, StrangersAreRefusedAndUsersMayReadTheRegistryOnly) {
  createWeb();
  http::Client c(url());
  auto stream = [&](const std::string& token) {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    auto r = c.request("GET", std::string(kDiscoveryConfigPath), "", headers);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->status : 0;
  };
  EXPECT_EQ(stream(""), 401);
  EXPECT_EQ(stream("forged"), 401);
  EXPECT_EQ(stream("user-token"), 403);
  // The one-shot form (no watch=1) for a sidecar.
  for (int i = 0; i < 100 && stream("sa-token") == 503; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(stream("sa-token"), 200);

  auto ack = c.request("POST", kDiscoveryAckPath, R"({"pod":"default/x","version":1})",
                       {{"Authorization", "Bearer user-token"}});
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->status, 403);

  auto registry =
      c.request("GET", "/debug/registryz", "", {{"Authorization", "Bearer user-token"}});
  ASSERT_TRUE(registry.ok());
  ASSERT_EQ(registry->status, 200) << registry->body;
  json body = json::parse(registry->body);
  bool found = false;
  for (const auto& s : body["services"]) found |= s.value("name", "") == "web";
  EXPECT_TRUE(found) << registry->body;
  auto anonymous = c.request("GET", "/debug/registryz");
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401);
  auto health = c.request("GET", "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
}

TEST_F(MeshDiscoveryTest, InstallDiscoveryCreatesIstiodAndNarrowsTheSidecarsRole) {
  const client::Resource roles{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
  auto rules = [&] {
    auto role = rest_->get(roles, "", "minik8s:mesh-proxy");
    EXPECT_TRUE(role.ok());
    return role.ok() ? (*role)["rules"].size() : 0u;
  };
  EXPECT_EQ(rules(), 4u);  // without istiod each sidecar reads the registry itself

  auto ca = pki::createCA("test-ca");
  ASSERT_TRUE(ca.ok());
  ASSERT_TRUE(
      installMeshDiscovery(*rest_, "minik8s/mesh-proxy:latest", ca->certPem, ca->keyPem).ok());
  EXPECT_EQ(rules(), 1u);  // the certificate's CSR only
  auto role = rest_->get(roles, "", "minik8s:mesh-proxy");
  ASSERT_TRUE(role.ok());
  EXPECT_EQ((*role)["rules"][0]["resources"][0], "certificatesigningrequests");

  auto deployment = rest_->get(res::kDeployments, "istio-system", "istiod");
  ASSERT_TRUE(deployment.ok()) << deployment.status().message();
  const json& container = (*deployment)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["args"][0], "mesh-discovery");
  EXPECT_EQ((*deployment)["spec"]["template"]["metadata"]["annotations"]["sidecar.istio.io/inject"],
            "false");
  auto secret = rest_->get(res::kSecrets, "istio-system", "istiod-tls");
  ASSERT_TRUE(secret.ok());
  auto cert = base64::decode((*secret)["data"]["tls.crt"].get<std::string>());
  ASSERT_TRUE(cert.ok());
  EXPECT_TRUE(pki::verifyCertificate(ca->certPem, *cert).ok());
  auto info = pki::parseCertificate(*cert);
  ASSERT_TRUE(info.ok());
  EXPECT_NE(std::find(info->dnsNames.begin(), info->dnsNames.end(), kDiscoveryHost),
            info->dnsNames.end());
  EXPECT_TRUE(rest_->get(res::kServices, "istio-system", "istiod").ok());

  // The controller manager's next start keeps the role narrow while istiod is there.
  ASSERT_TRUE(ensureMeshResources(*rest_).ok());
  EXPECT_EQ(rules(), 1u);
  // A CA that cannot sign is a clear error.
  Status bad = installMeshDiscovery(*rest_, "x", ca->certPem, "not a key");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cannot sign"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace minik8s::mesh
