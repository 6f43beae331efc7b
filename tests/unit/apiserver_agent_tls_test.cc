// The agent's API over TLS and the API server's relay to it: the agent admits only the
// identities it trusts (401 without a certificate, 403 for others, /healthz open, /metrics as
// the rest), and pods/log, pods/exec and the metrics request travel client -TLS-> API server
// -TLS-> agent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apiserver/node_proxy.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "common/tls.h"
#include "common/websocket.h"
#include "fake_store.h"
#include "kubelet/server/agent_server.h"

namespace minik8s::apiserver {
namespace {

namespace fs = std::filesystem;
using namespace kubelet::server;

class OnePod : public PodLookup {
 public:
  Result<ContainerLocation> findContainer(const std::string& ns, const std::string& pod,
                                          const std::string& container, bool previous) override {
    if (ns != "default" || pod != "web" || container != "app") {
      return Status::NotFoundMessage("container " + container + " not found");
    }
    return ContainerLocation{"c1", logPath, true};
  }
  std::string logPath;
};

class OneNodeStats : public StatsProvider {
 public:
  Result<StatsSummary> summary() override {
    StatsSummary s;
    s.nodeName = "n1";
    return s;
  }
};

pki::KeyAndCert issued(const pki::KeyAndCert& ca, const std::string& cn,
                       std::vector<std::string> orgs, bool server) {
  pki::CertSpec spec;
  spec.commonName = cn;
  spec.organizations = std::move(orgs);
  if (server) spec.ipAddresses = {"127.0.0.1"};
  spec.serverAuth = server;
  spec.clientAuth = !server;
  return pki::issue(ca, spec).value();
}

http::TlsClientConfig clientTls(const pki::KeyAndCert& ca, const pki::KeyAndCert* id) {
  http::TlsClientConfig c;
  c.caPem = ca.certPem;
  if (id) {
    c.certPem = id->certPem;
    c.keyPem = id->keyPem;
  }
  return c;
}

class AgentTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca = pki::createCA("cluster-ca").value();
    kubeletClient = issued(ca, "kube-apiserver-kubelet-client", {"system:masters"}, false);
    admin = issued(ca, "kubernetes-admin", {"system:masters"}, false);
    alice = issued(ca, "alice", {"devs"}, false);
    log = fs::temp_directory_path() / ("minik8s-agent-tls-" + std::to_string(::getpid()));
    std::ofstream(log) << "2024-05-01T10:00:00Z stdout F hello\n";
    pods.logPath = log.string();
    AgentServerOptions o;
    auto serving = issued(ca, "system:node:n1", {"system:nodes"}, true);
    o.tls = http::TlsServerConfig{serving.certPem, serving.keyPem, ca.certPem, false};
    o.allowedGroups = {};  // only the API server's identity
    agent = std::make_unique<AgentServer>(pods, exec, stats, o);
    ASSERT_TRUE(agent->start("127.0.0.1:0").ok());
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}};
    ASSERT_TRUE(registry.create(res("namespaces"), "", ns).ok());
  }
  void TearDown() override {
    agent->stop();
    fs::remove(log);
  }
  std::string agentUrl() const { return "https://127.0.0.1:" + std::to_string(agent->port()); }
  const api::ResourceInfo& res(const std::string& plural) {
    return *api::Scheme::builtin().byResource("", "v1", plural);
  }
  void addNodeAndPod() {
    json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}};
    auto created = registry.create(res("nodes"), "", node);
    ASSERT_TRUE(created.ok()) << created.status().toString();
    json withStatus = *created;
    withStatus["status"] = {{"addresses", {{{"type", "InternalIP"}, {"address", "127.0.0.1"}}}},
                            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", agent->port()}}}}}};
    ASSERT_TRUE(registry.update(res("nodes"), "", "n1", withStatus, "status").ok());
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", "web"}}},
        {"spec", {{"nodeName", "n1"}, {"containers", {{{"name", "app"}, {"image", "x"}}}}}}};
    ASSERT_TRUE(registry.create(res("pods"), "default", pod).ok());
  }

  pki::KeyAndCert ca, kubeletClient, admin, alice;
  fs::path log;
  OnePod pods;
  LocalExecBackend exec;
  OneNodeStats stats;
  std::unique_ptr<AgentServer> agent;
  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
};

TEST_F(AgentTlsTest, OnlyTrustedCertificatesMayUseTheAgent) {
  http::Client apiServer(agentUrl(), clientTls(ca, &kubeletClient));
  auto r = apiServer.get("/stats/summary");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["node"]["nodeName"], "n1");

  http::Client anonymous(agentUrl(), clientTls(ca, nullptr));
  r = anonymous.get("/stats/summary");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(json::parse(r->body)["reason"], "Unauthorized");
  r = anonymous.get("/healthz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);

  http::Client stranger(agentUrl(), clientTls(ca, &alice));
  r = stranger.get("/containerLogs/default/web/app");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(json::parse(r->body)["message"],
            "Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)");
  // system:masters is not in this agent's allowed groups.
  http::Client adminClient(agentUrl(), clientTls(ca, &admin));
  r = adminClient.get("/stats/summary");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);

  auto tls = http::TlsContext::forClient(clientTls(ca, &alice));
  auto denied = ws::dial("127.0.0.1", agent->port(), "/exec/default/web/app?command=true",
                         {"v5.channel.k8s.io"}, tls->get());
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), 403);
}

TEST_F(AgentTlsTest, MetricsAreAuthorizedLikeTheRestOfTheAgent) {
  http::Client apiServer(agentUrl(), clientTls(ca, &kubeletClient));
  auto r = apiServer.get("/metrics");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  std::string contentType;
  for (const auto& [k, v] : r->headers) {
    if (k == "Content-Type") contentType = v;
  }
  EXPECT_EQ(contentType, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r->body.find("\n# TYPE process_resident_memory_bytes gauge\n"), std::string::npos);

  http::Client anonymous(agentUrl(), clientTls(ca, nullptr));
  r = anonymous.get("/metrics");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
  http::Client stranger(agentUrl(), clientTls(ca, &alice));
  r = stranger.get("/metrics");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403);
}

TEST_F(AgentTlsTest, TheDefaultTrustsTheKubeletClientUserAndSystemMasters) {
  AgentServerOptions defaults;
  EXPECT_EQ(defaults.allowedUsers, std::vector<std::string>{"kube-apiserver-kubelet-client"});
  EXPECT_EQ(defaults.allowedGroups, std::vector<std::string>{"system:masters"});
  AgentServerOptions noCa;
  noCa.tls = http::TlsServerConfig{ca.certPem, ca.keyPem, "", false};
  AgentServer bad(pods, exec, stats, noCa);
  EXPECT_FALSE(bad.start("127.0.0.1:0").ok());
}

TEST_F(AgentTlsTest, ApiServerRelaysLogsExecAndStatsOverTls) {
  addNodeAndPod();
  NodeProxyOptions options;
  options.agentTls = clientTls(ca, &kubeletClient);
  http::Server api([&](const http::Request& req, http::ResponseWriter& w) {
    proxyToNode(registry, req, w, parseRequestInfo(req, api::Scheme::builtin()), options);
  });
  auto apiServing = issued(ca, "kube-apiserver", {}, true);
  ASSERT_TRUE(api.enableTls({apiServing.certPem, apiServing.keyPem, ca.certPem, false}).ok());
  ASSERT_TRUE(api.start("127.0.0.1:0").ok());
  const std::string apiUrl = "https://127.0.0.1:" + std::to_string(api.port());

  http::Client client(apiUrl, clientTls(ca, &admin));
  auto r = client.get("/api/v1/namespaces/default/pods/web/log");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello\n");

  auto tls = http::TlsContext::forClient(clientTls(ca, &admin));
  auto c = ws::dial("127.0.0.1", api.port(),
                    "/api/v1/namespaces/default/pods/web/exec?container=app&command=sh&command=-c"
                    "&command=cat%3B%20exit%205&stdin=true&stdout=true&stderr=true",
                    {"v5.channel.k8s.io"}, tls->get());
  ASSERT_TRUE(c.ok()) << c.status().toString();
  ASSERT_TRUE((*c)->writeBinary(std::string("\0piped", 6)).ok());
  ASSERT_TRUE((*c)->writeBinary(std::string("\xff\0", 2)).ok());
  std::string out, status;
  for (;;) {
    auto m = (*c)->read();
    if (!m.ok() || m->opcode == ws::Opcode::kClose) break;
    if (m->payload[0] == 1) out += m->payload.substr(1);
    if (m->payload[0] == 3) status = m->payload.substr(1);
  }
  EXPECT_EQ(out, "piped");
  EXPECT_EQ(json::parse(status)["details"]["causes"][0]["message"], "5");

  auto ep = nodeAgentEndpoint(registry, "n1");
  ASSERT_TRUE(ep.ok());
  auto summary = requestAgent(*ep, "GET", "/stats/summary", options);
  ASSERT_TRUE(summary.ok()) << summary.status().toString();
  EXPECT_EQ(summary->status, 200);

  // Without the client certificate the agent refuses the relayed request.
  NodeProxyOptions noIdentity;
  noIdentity.agentTls = clientTls(ca, nullptr);
  summary = requestAgent(*ep, "GET", "/stats/summary", noIdentity);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->status, 401);
  // And a plain-HTTP proxy cannot talk to a TLS agent at all.
  EXPECT_TRUE(!requestAgent(*ep, "GET", "/stats/summary").ok());
  api.stop();
}

}  // namespace
}  // namespace minik8s::apiserver
