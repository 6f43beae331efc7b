// The sidecar against real sockets on loopback: fake endpoints (HTTP servers answering their
// name), a faked SO_ORIGINAL_DST (the tests dial the proxy directly), the registry built in the
// test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "common/http.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "common/yaml_json.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "mesh_scripted_backend.h"
#include "raw_exchange.h"

namespace minik8s::mesh {
namespace {

using testing::rawExchange;

class Backend {
 public:
  explicit Backend(std::string name)
      : name_(std::move(name)), server_([this](const http::Request& req, http::ResponseWriter& w) {
          w.send(http::Response::text(200, name_ + " " + req.method + " " + req.target + " " +
                                               std::to_string(req.body.size())));
        }) {
    EXPECT_TRUE(server_.start("127.0.0.1:0").ok());
  }
  int port() const { return server_.port(); }

 private:
  std::string name_;
  http::Server server_;
};

class MeshProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ProxyOptions o = loopbackOptions(registry_);
    o.seed = 1;
    proxy_ = std::make_unique<SidecarProxy>(o);
    ASSERT_TRUE(proxy_->start().ok());
    setRules({});
    redirectTo("10.96.0.10", 80);
  }

  // A sidecar on free loopback ports whose original destination is the one redirectTo() set.
  ProxyOptions loopbackOptions(metrics::Registry& registry) {
    ProxyOptions o;
    o.bindAddress = "127.0.0.1";
    o.outboundPort = o.inboundPort = o.metricsPort = 0;
    o.registry = &registry;
    o.originalDestination = [this](int) -> std::optional<std::pair<std::string, int>> {
      std::lock_guard lock(mu_);
      return dst_;
    };
    return o;
  }

  void redirectTo(std::string ip, int port) {
    std::lock_guard lock(mu_);
    dst_ = std::make_pair(std::move(ip), port);
  }

  void setRules(std::vector<json> virtualServices, bool withEndpoints = true,
                std::vector<json> otherPods = {}) {
    json svc = {
        {"metadata", {{"name", "web"}, {"namespace", "default"}}},
        {"spec", {{"clusterIP", "10.96.0.10"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
    json eps = {{"metadata", {{"name", "web"}, {"namespace", "default"}}},
                {"subsets",
                 {{{"addresses",
                    {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web-v1"}}}}}},
                   {"ports", {{{"name", "http"}, {"port", v1_.port()}}}}},
                  {{"addresses",
                    {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web-v2"}}}}}},
                   {"ports", {{{"name", "http"}, {"port", v2_.port()}}}}}}}};
    json p1 = {{"metadata",
                {{"name", "web-v1"}, {"namespace", "default"}, {"labels", {{"version", "v1"}}}}}};
    json p2 = {{"metadata",
                {{"name", "web-v2"}, {"namespace", "default"}, {"labels", {{"version", "v2"}}}}}};
    auto dr = parseYaml(R"(
metadata: {name: web, namespace: default}
spec: {host: web, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]}
)");
    std::vector<json> endpoints;
    if (withEndpoints) endpoints.push_back(eps);
    std::vector<json> pods = {p1, p2};
    pods.insert(pods.end(), otherPods.begin(), otherPods.end());
    proxy_->setConfig(buildMeshConfig({.services = {svc},
                                       .endpoints = std::move(endpoints),
                                       .pods = std::move(pods),
                                       .virtualServices = std::move(virtualServices),
                                       .destinationRules = {*dr}},
                                      1));
  }

  std::string outboundUrl() const {
    return "http://127.0.0.1:" + std::to_string(proxy_->outboundPort());
  }

  metrics::Registry registry_;
  Backend v1_{"v1"}, v2_{"v2"};
  std::mutex mu_;
  std::optional<std::pair<std::string, int>> dst_;
  std::unique_ptr<SidecarProxy> proxy_;
};

TEST_F(MeshProxyTest, RoundRobinsOverTheEndpointsOnOneKeepAliveConnection) {
  http::Client client(outboundUrl());
  std::map<std::string, int> seen;
  for (int i = 0; i < 10; ++i) {
    auto res = client.get("/hello");
    ASSERT_TRUE(res.ok()) << res.status().message();
    EXPECT_EQ(res->status, 200);
    seen[res->body.substr(0, 2)]++;
  }
  EXPECT_EQ(seen["v1"], 5);
  EXPECT_EQ(seen["v2"], 5);
}

TEST_F(MeshProxyTest, RoutesByHeaderRegexAndWeight) {
  auto vs = parseYaml(R"(
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http:
  - match: [{headers: {user-agent: {regex: ".*Firefox.*"}}}]
    route: [{destination: {host: web, subset: v2}}]
  - route:
    - {destination: {host: web, subset: v1}, weight: 90}
    - {destination: {host: web, subset: v2}, weight: 10}
)");
  setRules({*vs});
  http::Client client(outboundUrl());
  for (int i = 0; i < 5; ++i) {
    auto res = client.request("GET", "/", "", {{"User-Agent", "Mozilla/5.0 Firefox/120"}});
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->body.substr(0, 2), "v2");
  }
  int v2 = 0;
  constexpr int kRequests = 500;
  for (int i = 0; i < kRequests; ++i) {
    auto res = client.get("/");
    ASSERT_TRUE(res.ok());
    v2 += res->body.substr(0, 2) == "v2";
  }
  EXPECT_NEAR(v2 / double(kRequests), 0.10, 0.04);
}

TEST_F(MeshProxyTest, ForwardsChunkedBodiesAndClosesWhenAsked) {
  std::string out = rawExchange(proxy_->outboundPort(),
                                "POST /up HTTP/1.1\r\nHost: web\r\nTransfer-Encoding: chunked\r\n"
                                "Connection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  EXPECT_NE(out.find("HTTP/1.1 200"), std::string::npos) << out;
  EXPECT_NE(out.find("POST /up 11"), std::string::npos) << out;
}

TEST_F(MeshProxyTest, NoEndpointIsA503) {
  setRules({}, /*withEndpoints=*/false);
  http::Client client(outboundUrl());
  auto res = client.get("/");
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("no healthy upstream"), std::string::npos);
}

TEST_F(MeshProxyTest, UnknownDestinationsPassThroughAsTcp) {
  redirectTo("127.0.0.1", v1_.port());
  std::string out = rawExchange(proxy_->outboundPort(),
                                "GET /direct HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(out.find("v1 GET /direct"), std::string::npos) << out;
}

TEST_F(MeshProxyTest, InboundGoesToTheOriginalPortOnLoopback) {
  redirectTo("10.1.2.3", v2_.port());
  std::string out = rawExchange(proxy_->inboundPort(),
                                "GET /in HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(out.find("v2 GET /in"), std::string::npos) << out;
}

TEST_F(MeshProxyTest, InboundFallsBackToTheOriginalAddress) {
  // An application listening on one address only (here 127.0.0.2, standing for the pod IP).
  http::Server podIpOnly([](const http::Request& req, http::ResponseWriter& w) {
    w.send(http::Response::text(200, "pod-ip " + req.target));
  });
  ASSERT_TRUE(podIpOnly.start("127.0.0.2:0").ok());
  redirectTo("127.0.0.2", podIpOnly.port());
  std::string out = rawExchange(proxy_->inboundPort(),
                                "GET /only HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(out.find("pod-ip /only"), std::string::npos) << out;
}

// The requests a sidecar routes are counted by their source: its pod's namespace and workload
// (the pod's app label in the registry, else the pod's name).
TEST_F(MeshProxyTest, CountsRequestsBySourceWorkload) {
  setRules({}, true,
           {{{"metadata",
              {{"name", "shop-7d9f"}, {"namespace", "default"}, {"labels", {{"app", "shop"}}}}}}});
  for (std::string podName : {"shop-7d9f", "lone"}) {
    metrics::Registry registry;
    ProxyOptions o = loopbackOptions(registry);
    o.podNamespace = "default";
    o.podName = podName;
    SidecarProxy sidecar(o);
    ASSERT_TRUE(sidecar.start().ok());
    sidecar.setConfig(proxy_->config());
    http::Client client("http://127.0.0.1:" + std::to_string(sidecar.outboundPort()));
    ASSERT_TRUE(client.get("/").ok());
    ASSERT_TRUE(client.get("/").ok());
    http::Client scrape("http://127.0.0.1:" + std::to_string(sidecar.metricsPort()));
    auto res = scrape.get("/metrics");
    ASSERT_TRUE(res.ok());
    const std::string workload = podName == "lone" ? "lone" : "shop";
    EXPECT_NE(res->body.find(R"(mesh_requests_total{destination_service="default/web",)"
                             R"(response_code="200",source_namespace="default",source_workload=")" +
                             workload + "\"} 2"),
              std::string::npos)
        << res->body;
    sidecar.stop();
  }
}

TEST_F(MeshProxyTest, ServesMetrics) {
  http::Client client(outboundUrl());
  ASSERT_TRUE(client.get("/").ok());
  http::Client scrape("http://127.0.0.1:" + std::to_string(proxy_->metricsPort()));
  auto res = scrape.get("/metrics");
  ASSERT_TRUE(res.ok());
  EXPECT_NE(
      res->body.find(R"(mesh_requests_total{destination_service="default/web",response_code="200",)"
                     R"(source_namespace="unknown",source_workload="unknown"} 1)"),
      std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find("mesh_request_duration_seconds_bucket"), std::string::npos);
  // By the answering pod's version label too (what `mesh rollout` reads an error rate from).
  const bool v1 =
      res->body.find(R"(mesh_destination_requests_total{destination_service="default/web",)"
                     R"(destination_version="v1",response_code="200"} 1)") != std::string::npos;
  const bool v2 =
      res->body.find(R"(mesh_destination_requests_total{destination_service="default/web",)"
                     R"(destination_version="v2",response_code="200"} 1)") != std::string::npos;
  EXPECT_TRUE(v1 != v2) << res->body;
  auto registry = scrape.get("/registry");
  ASSERT_TRUE(registry.ok());
  json listed = json::parse(registry->body);
  EXPECT_EQ(listed["services"][0]["clusterIP"], "10.96.0.10");
  EXPECT_EQ(listed["services"][0]["ports"][0]["endpoints"].size(), 2u);
}

}  // namespace
}  // namespace minik8s::mesh

namespace minik8s::mesh {
namespace {

TEST_F(MeshProxyTest, AnEndpointThatRefusesIsRetriedOnAnother) {
  // A third endpoint that refuses connections (a port nobody listens on).
  int closed = 0;
  {
    http::Server gone([](const http::Request&, http::ResponseWriter& w) {
      w.send(http::Response::text(200, "x"));
    });
    ASSERT_TRUE(gone.start("127.0.0.1:0").ok());
    closed = gone.port();
  }
  auto config = std::make_shared<MeshConfig>(*proxy_->config());
  auto& port = config->services["default/web"].ports[0];
  port.endpoints.push_back({"127.0.0.1", closed, "web-gone", {}});
  proxy_->setConfig(config);
  http::Client client(outboundUrl());
  for (int i = 0; i < 9; ++i) {
    auto res = client.get("/");
    ASSERT_TRUE(res.ok());
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(res->body[0], 'v') << res->body;  // answered by web-v1 or web-v2
  }
}

}  // namespace
}  // namespace minik8s::mesh

#include <thread>

namespace minik8s::mesh {
namespace {

// A WebSocket-like upgrade: the endpoint answers 101, then echoes bytes.
TEST_F(MeshProxyTest, UpgradesContinueAsTcpToTheEndpoint) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  int echoPort = ntohs(addr.sin_port);
  std::thread echo([listener] {
    int fd = ::accept(listener, nullptr, nullptr);
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) head += c;
    std::string answer =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n";
    ::write(fd, answer.data(), answer.size());
    char buf[256];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) ::write(fd, buf, n);
    ::close(fd);
  });
  auto config = std::make_shared<MeshConfig>(*proxy_->config());
  config->services["default/web"].ports[0].endpoints = {{"127.0.0.1", echoPort, "echo", {}}};
  proxy_->setConfig(config);

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in proxyAddr{};
  proxyAddr.sin_family = AF_INET;
  proxyAddr.sin_port = htons(static_cast<uint16_t>(proxy_->outboundPort()));
  proxyAddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&proxyAddr), sizeof proxyAddr), 0);
  std::string request =
      "GET /ws HTTP/1.1\r\nHost: web\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n";
  ::write(fd, request.data(), request.size());
  std::string got;
  char buf[512];
  while (got.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    ASSERT_GT(n, 0);
    got.append(buf, n);
  }
  EXPECT_NE(got.find("101 Switching Protocols"), std::string::npos) << got;
  EXPECT_NE(got.find("Connection: Upgrade"), std::string::npos) << got;
  ::write(fd, "ping", 4);
  std::string echoed;
  while (echoed.size() < 4) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    ASSERT_GT(n, 0);
    echoed.append(buf, n);
  }
  EXPECT_EQ(echoed, "ping");
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
  echo.join();
  ::close(listener);
}

}  // namespace
}  // namespace minik8s::mesh

namespace minik8s::mesh {
namespace {

// The bytes either side sent right behind its HTTP part (in the same segment as the request
// head, and as the 101) are not lost when the connection becomes TCP.
TEST_F(MeshProxyTest, AnUpgradeKeepsTheBytesSentWithTheHeads) {
  testing::ScriptedBackend backend(testing::serveUpgradeThenEcho, 1);
  auto config = std::make_shared<MeshConfig>(*proxy_->config());
  config->services["default/web"].ports[0].endpoints = {{"127.0.0.1", backend.port(), "echo", {}}};
  proxy_->setConfig(config);
  std::string seen = testing::upgradeThenEcho(proxy_->outboundPort(), "/ws");
  EXPECT_NE(seen.find("Connection: Upgrade"), std::string::npos) << seen;
}

}  // namespace
}  // namespace minik8s::mesh

namespace minik8s::mesh {
namespace {

// The request's head and body (Content-Length or chunked) from `fd`; false at EOF.
bool readRequest(int fd, std::string& head, std::string& body) {
  head = testing::readHead(fd);
  if (head.empty()) return false;
  body.clear();
  auto at = head.find("Content-Length: ");
  if (at != std::string::npos) {
    const size_t length = std::stoul(head.substr(at + 16));
    char buf[4096];
    while (body.size() < length) {
      ssize_t n = ::read(fd, buf, std::min(sizeof buf, length - body.size()));
      if (n <= 0) return false;
      body.append(buf, static_cast<size_t>(n));
    }
  } else if (head.find("Transfer-Encoding: chunked") != std::string::npos) {
    return testing::readUntil(fd, body, "0\r\n\r\n");
  }
  return true;
}

// Three requests on one kept-alive connection, each with another body (one larger than a read
// buffer and than a TLS record, one chunked): the endpoint gets each head and body as sent, the
// client each answer's status line, reason, fields and body as the endpoint wrote them. (The
// endpoint serves one connection: a second one would never be answered.)
TEST_F(MeshProxyTest, KeptAliveRequestsKeepTheirHeadsAndBodies) {
  const std::string big(100 * 1024, 'b');
  std::vector<std::string> heads, bodies;
  testing::ScriptedBackend backend(
      [&](int fd) {
        std::string head, body;
        const std::string answers[] = {
            "HTTP/1.1 200 Fine Thanks\r\nX-Answer: one, two\r\nContent-Length: 3\r\n\r\nabc",
            "HTTP/1.1 201 Created\r\nContent-Length: " + std::to_string(big.size()) + "\r\n\r\n" +
                big,
            "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: "
            "chunked\r\n\r\n3\r\nxyz\r\n2\r\n!!\r\n0\r\n\r\n"};
        for (const auto& answer : answers) {
          if (!readRequest(fd, head, body)) return;
          heads.push_back(head);
          bodies.push_back(body);
          testing::writeAll(fd, answer);
        }
      },
      1);
  auto config = std::make_shared<MeshConfig>(*proxy_->config());
  config->services["default/web"].ports[0].endpoints = {{"127.0.0.1", backend.port(), "b", {}}};
  proxy_->setConfig(config);

  int fd = testing::connectTo(proxy_->outboundPort());
  std::string seen;
  testing::writeAll(fd,
                    "POST /one?q=1 HTTP/1.1\r\nHost: web\r\nX-Trace: a b\r\n"
                    "Content-Length: 5\r\n\r\nhello");
  ASSERT_TRUE(testing::readUntil(fd, seen, "abc")) << seen;
  EXPECT_EQ(seen.rfind("HTTP/1.1 200 Fine Thanks\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("X-Answer: one, two\r\n"), std::string::npos) << seen;
  seen.clear();
  testing::writeAll(fd, "PUT /two HTTP/1.1\r\nHost: web\r\nContent-Length: " +
                            std::to_string(big.size()) + "\r\n\r\n" + big);
  ASSERT_TRUE(testing::readUntil(fd, seen, "\r\n\r\n" + big)) << seen.substr(0, 200);
  EXPECT_EQ(seen.rfind("HTTP/1.1 201 Created\r\n", 0), 0u) << seen.substr(0, 200);
  seen.clear();
  testing::writeAll(fd,
                    "POST /three HTTP/1.1\r\nHost: web\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "4\r\nchun\r\n3\r\nked\r\n0\r\n\r\n");
  ASSERT_TRUE(testing::readUntil(fd, seen, "0\r\n\r\n")) << seen;
  EXPECT_EQ(seen.rfind("HTTP/1.1 202 Accepted\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("xyz!!"), std::string::npos) << seen;  // one chunk of the decoded body
  ::close(fd);

  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[0].rfind("POST /one?q=1 HTTP/1.1\r\n", 0), 0u) << heads[0];
  EXPECT_NE(heads[0].find("X-Trace: a b\r\n"), std::string::npos) << heads[0];
  EXPECT_EQ(bodies[0], "hello");
  EXPECT_EQ(heads[1].rfind("PUT /two HTTP/1.1\r\n", 0), 0u) << heads[1];
  EXPECT_EQ(bodies[1], big);
  EXPECT_EQ(heads[2].rfind("POST /three HTTP/1.1\r\n", 0), 0u) << heads[2];
  EXPECT_NE(bodies[2].find("chunked"), std::string::npos) << bodies[2];
}

// A route's timeout bounds its own requests only: a request on another route over the same kept
// connection may take longer, and a timed request that takes longer is a 504.
TEST_F(MeshProxyTest, ARouteTimeoutBoundsOnlyItsOwnRequests) {
  auto vs = parseYaml(R"(
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http:
  - match: [{headers: {x-timed: {exact: "1"}}}]
    timeout: 0.3s
    route: [{destination: {host: web}}]
  - route: [{destination: {host: web}}]
)");
  setRules({*vs});
  testing::ScriptedBackend backend(
      [](int fd) {
        for (;;) {
          std::string head = testing::readHead(fd);
          if (head.empty()) return;
          if (head.find("/slow") != std::string::npos) {
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
          }
          // The proxy may have given up on this connection: no SIGPIPE.
          constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
          if (::send(fd, kOk.data(), kOk.size(), MSG_NOSIGNAL) != ssize_t(kOk.size())) return;
        }
      },
      2);
  auto config = std::make_shared<MeshConfig>(*proxy_->config());
  config->services["default/web"].ports[0].endpoints = {{"127.0.0.1", backend.port(), "b", {}}};
  proxy_->setConfig(config);
  http::Client client(outboundUrl());
  auto fast = client.request("GET", "/fast", "", {{"x-timed", "1"}});
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(fast->status, 200);
  auto untimed = client.get("/slow");  // past the first request's deadline
  ASSERT_TRUE(untimed.ok());
  EXPECT_EQ(untimed->status, 200) << untimed->body;
  auto timed = client.request("GET", "/slow", "", {{"x-timed", "1"}});
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ(timed->status, 504) << timed->body;
}

}  // namespace
}  // namespace minik8s::mesh
