// The API server's node proxy (pods/log, pods/exec relayed to a real in-process agent server)
// and the metrics API (rates from cumulative counters, PodMetrics/NodeMetrics shapes).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "apiserver/metrics_api.h"
#include "apiserver/node_proxy.h"
#include "common/http_client.h"
#include "common/websocket.h"
#include "fake_store.h"
#include "kubelet/server/agent_server.h"

namespace minik8s::apiserver {
namespace {

namespace fs = std::filesystem;
using namespace kubelet::server;

class WebAppPod : public PodLookup {
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

class NoStats : public StatsProvider {
 public:
  Result<StatsSummary> summary() override { return Status::Unavailable("none"); }
};

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}};
    ASSERT_TRUE(registry.create(res("namespaces"), "", ns).ok());
  }
  const api::ResourceInfo& res(const std::string& plural) {
    return *api::Scheme::builtin().byResource("", "v1", plural);
  }
  void addNode(const std::string& name, int port) {
    json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
    auto created = registry.create(res("nodes"), "", node);
    ASSERT_TRUE(created.ok()) << created.status().toString();
    json withStatus = *created;
    withStatus["status"] = {{"addresses",
                             {{{"type", "Hostname"}, {"address", "ignored"}},
                              {{"type", "InternalIP"}, {"address", "127.0.0.1"}}}},
                            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", port}}}}}};
    ASSERT_TRUE(registry.update(res("nodes"), "", name, withStatus, "status").ok());
  }
  void addPod(const std::string& name, const std::string& node, json containers,
              json labels = json::object()) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", labels}}},
                {"spec", {{"containers", containers}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    auto r = registry.create(res("pods"), "default", pod);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  static json containers(std::initializer_list<const char*> names) {
    json out = json::array();
    for (const char* n : names) out.push_back({{"name", n}, {"image", "busybox"}});
    return out;
  }

  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
};

TEST(NodeEndpointTest, PrefersInternalIpAndReadsTheKubeletPort) {
  json node = json::parse(R"({"metadata":{"name":"n1"},"status":{"addresses":[
      {"type":"Hostname","address":"n1"},{"type":"InternalIP","address":"10.0.0.5"}],
      "daemonEndpoints":{"kubeletEndpoint":{"Port":10251}}}})");
  auto ep = nodeAgentEndpoint(node);
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "10.0.0.5");
  EXPECT_EQ(ep->port, 10251);
  node["status"].erase("daemonEndpoints");
  EXPECT_EQ(nodeAgentEndpoint(node)->port, 10250);
  EXPECT_EQ(nodeAgentEndpoint(json::parse(R"({"metadata":{"name":"x"}})")).status().code(), 400);
}

TEST(AgentTargetTest, BuildsLogExecAndPortForwardTargets) {
  json pod = json::parse(R"({"metadata":{"name":"web","namespace":"default"},
      "spec":{"containers":[{"name":"app"},{"name":"side"}]}})");
  http::Request req;
  req.query = http::parseQuery("container=side&follow=true&tailLines=10&pretty=1");
  EXPECT_EQ(*agentTarget(pod, req, "log"),
            "/containerLogs/default/web/side?follow=true&tailLines=10");
  req.query = http::parseQuery(
      "container=app&command=sh&command=-c&command=echo%20hi&stdin=true"
      "&tty=false");
  EXPECT_EQ(*agentTarget(pod, req, "exec"),
            "/exec/default/web/app?command=sh&command=-c&command=echo%20hi&stdin=true&tty=false");
  req.query = http::parseQuery("container=nope");
  EXPECT_EQ(agentTarget(pod, req, "log").status().code(), 400);
  // Port forwarding is per pod: no container to choose, the ports travel along.
  req.query = http::parseQuery("ports=80&ports=8080");
  EXPECT_EQ(*agentTarget(pod, req, "portforward"), "/portForward/default/web?ports=80&ports=8080");
  req.query = {};
  auto noChoice = selectContainer(pod, req);
  EXPECT_EQ(noChoice.status().message(),
            "a container name must be specified for pod web, choose one of: [app side]");
  pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] = "side";
  EXPECT_EQ(*selectContainer(pod, req), "side");
}

TEST_F(ProxyTest, RelaysLogsAndExecToTheNodeAgent) {
  fs::path log = fs::temp_directory_path() / ("minik8s-proxy-" + std::to_string(::getpid()));
  std::ofstream(log) << "2024-05-01T10:00:00Z stdout F hello\n2024-05-01T10:00:01Z stdout F bye\n";
  WebAppPod pods;
  pods.logPath = log.string();
  LocalExecBackend exec;
  NoStats stats;
  AgentServer agent(pods, exec, stats);
  ASSERT_TRUE(agent.start("127.0.0.1:0").ok());
  addNode("n1", agent.port());
  addPod("web", "n1", containers({"app"}));
  addPod("pending", "", containers({"app"}));

  http::Server api([&](const http::Request& req, http::ResponseWriter& w) {
    RequestInfo ri = parseRequestInfo(req, api::Scheme::builtin());
    proxyToNode(registry, req, w, ri);
  });
  ASSERT_TRUE(api.start("127.0.0.1:0").ok());
  http::Client client("http://127.0.0.1:" + std::to_string(api.port()));
  auto r = client.get("/api/v1/namespaces/default/pods/web/log?container=app&tailLines=1");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "bye\n");
  r = client.get("/api/v1/namespaces/default/pods/web/log");  // the only container
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "hello\nbye\n");
  r = client.get("/api/v1/namespaces/default/pods/pending/log");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["message"], "pod pending does not have a host assigned");
  r = client.get("/api/v1/namespaces/default/pods/ghost/log");
  EXPECT_EQ(r->status, 404);

  auto c = ws::dial("127.0.0.1", api.port(),
                    "/api/v1/namespaces/default/pods/web/exec?container=app&command=sh&command=-c"
                    "&command=cat%3B%20exit%205&stdin=true&stdout=true&stderr=true",
                    {"v5.channel.k8s.io"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ((*c)->protocol(), "v5.channel.k8s.io");
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
  api.stop();
  agent.stop();
  fs::remove(log);
}

TEST_F(ProxyTest, UnreachableAgentIs503) {
  addNode("gone", 1);  // nothing listens on port 1
  addPod("web", "gone", containers({"app"}));
  http::Request req;
  req.method = "GET";
  req.path = "/api/v1/namespaces/default/pods/web/log";
  RequestInfo ri = parseRequestInfo(req, api::Scheme::builtin());
  struct Capture : http::ResponseWriter {
    void send(http::Response r) override { resp = std::move(r); }
    bool beginStream(int, std::vector<std::pair<std::string, std::string>>) override {
      return false;
    }
    bool write(std::string_view) override { return false; }
    void end() override {}
    bool clientGone() override { return false; }
    http::Response resp;
  } w;
  proxyToNode(registry, req, w, ri);
  EXPECT_EQ(w.resp.status, 503);
}

TEST(CpuRateTest, NanocoresFromCumulativeCounters) {
  using std::chrono::seconds;
  CpuReading a{seconds(100), 1'000'000'000};
  CpuReading b{seconds(102), 1'500'000'000};  // 0.5 s of cpu in 2 s = 250m
  EXPECT_EQ(cpuRate(a, b), 250'000'000u);
  EXPECT_FALSE(cpuRate(a, CpuReading{std::chrono::milliseconds(100500), 2'000'000'000}));
  EXPECT_FALSE(cpuRate(b, CpuReading{seconds(110), 10}));  // counter reset
  EXPECT_EQ(formatNanoCores(1500000), "1500000n");
  EXPECT_EQ(formatBytes(10485760), "10240Ki");
  EXPECT_EQ(formatBytes(1000), "1000");
}

json summaryAt(int64_t secs, uint64_t nodeCpu, uint64_t appCpu, std::optional<uint64_t> nanoCores) {
  std::string t = formatRfc3339(Clock::time_point(std::chrono::seconds(secs)));
  json app = {{"name", "app"},
              {"cpu", {{"time", t}, {"usageCoreNanoSeconds", appCpu}}},
              {"memory", {{"time", t}, {"workingSetBytes", 2 * 1024 * 1024}}}};
  if (nanoCores) app["cpu"]["usageNanoCores"] = *nanoCores;
  return {{"node",
           {{"nodeName", "n1"},
            {"cpu", {{"time", t}, {"usageCoreNanoSeconds", nodeCpu}}},
            {"memory", {{"time", t}, {"workingSetBytes", 1024 * 1024 * 1024}}}}},
          {"pods",
           {{{"podRef", {{"name", "web"}, {"namespace", "default"}, {"uid", "u"}}},
             {"containers", {app}}}}}};
}

TEST_F(ProxyTest, MetricsApiComputesRatesAcrossScrapes) {
  addNode("n1", 10250);
  addPod("web", "n1", containers({"app"}), {{"app", "web"}});
  addPod("other", "n1", containers({"app"}), {{"app", "other"}});
  std::vector<json> scrapes = {summaryAt(1000, 0, 0, 7),
                               summaryAt(1010, 5'000'000'000, 1'000'000'000, std::nullopt)};
  size_t next = 0;
  MetricsApi metrics(registry, [&](const NodeEndpoint& ep) -> Result<json> {
    EXPECT_EQ(ep.host, "127.0.0.1");
    return scrapes[std::min(next, scrapes.size() - 1)];
  });
  auto get = [&](const std::string& target) {
    http::Request req;
    req.method = "GET";
    size_t q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = http::parseQuery(target.substr(q + 1));
    struct Capture : http::ResponseWriter {
      void send(http::Response r) override { resp = std::move(r); }
      bool beginStream(int, std::vector<std::pair<std::string, std::string>>) override {
        return false;
      }
      bool write(std::string_view) override { return false; }
      void end() override {}
      bool clientGone() override { return false; }
      http::Response resp;
    } w;
    EXPECT_TRUE(metrics.handle(req, w));
    return std::make_pair(w.resp.status, json::parse(w.resp.body));
  };

  // First scrape: no history, so the agent's own rate is used.
  auto [code, pm] = get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web");
  ASSERT_EQ(code, 200) << pm.dump();
  EXPECT_EQ(pm["kind"], "PodMetrics");
  EXPECT_EQ(pm["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(pm["containers"][0]["usage"]["cpu"], "7n");
  EXPECT_EQ(pm["containers"][0]["usage"]["memory"], "2048Ki");
  get("/apis/metrics.k8s.io/v1beta1/nodes/n1");

  next = 1;  // ten seconds later: 1 s of cpu for the container, 5 s for the node
  auto [code2, list] =
      get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb");
  ASSERT_EQ(code2, 200);
  EXPECT_EQ(list["kind"], "PodMetricsList");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["containers"][0]["usage"]["cpu"], "100000000n");
  EXPECT_EQ(list["items"][0]["window"], "10s");
  auto [code3, node] = get("/apis/metrics.k8s.io/v1beta1/nodes/n1");
  ASSERT_EQ(code3, 200);
  EXPECT_EQ(node["kind"], "NodeMetrics");
  EXPECT_EQ(node["usage"]["cpu"], "500000000n");
  EXPECT_EQ(node["usage"]["memory"], "1048576Ki");
  auto [code4, nodes] = get("/apis/metrics.k8s.io/v1beta1/nodes");
  EXPECT_EQ(nodes["kind"], "NodeMetricsList");
  EXPECT_EQ(nodes["items"].size(), 1u);

  EXPECT_EQ(get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/ghost").first, 404);
  EXPECT_EQ(get("/apis/metrics.k8s.io/v1beta1").second["resources"].size(), 2u);
  EXPECT_EQ(get("/apis/metrics.k8s.io").second["preferredVersion"]["version"], "v1beta1");
  EXPECT_EQ(MetricsApi::aggregatedGroup()["versions"][0]["resources"][1]["responseKind"]["kind"],
            "PodMetrics");
}

TEST_F(ProxyTest, MetricsApiNodeCpuFromQueriesUnderASecondApart) {
  addNode("n1", 10250);
  // The node's /proc/stat figures carry no rate of their own: `kubectl top node` twice in a row
  // (500 ms apart) must still show one, not 0.
  auto at = [](int64_t ms, uint64_t cpu) {
    std::string t = formatRfc3339Micro(Clock::time_point(std::chrono::milliseconds(ms)));
    return json{{"node",
                 {{"nodeName", "n1"},
                  {"cpu", {{"time", t}, {"usageCoreNanoSeconds", cpu}}},
                  {"memory", {{"time", t}, {"workingSetBytes", 1024 * 1024}}}}},
                {"pods", json::array()}};
  };
  std::vector<json> scrapes = {at(1'000'000, 0), at(1'000'500, 250'000'000),
                               at(1'000'600, 260'000'000)};
  size_t next = 0;
  MetricsApi metrics(registry, [&](const NodeEndpoint&) -> Result<json> { return scrapes[next]; });
  auto nodeCpu = [&] {
    http::Request req;
    req.method = "GET";
    req.path = "/apis/metrics.k8s.io/v1beta1/nodes/n1";
    struct Capture : http::ResponseWriter {
      void send(http::Response r) override { resp = std::move(r); }
      bool beginStream(int, std::vector<std::pair<std::string, std::string>>) override {
        return false;
      }
      bool write(std::string_view) override { return false; }
      void end() override {}
      bool clientGone() override { return false; }
      http::Response resp;
    } w;
    EXPECT_TRUE(metrics.handle(req, w));
    return json::parse(w.resp.body)["usage"]["cpu"].get<std::string>();
  };
  EXPECT_EQ(nodeCpu(), "0n");  // nothing to compare with yet
  next = 1;
  EXPECT_EQ(nodeCpu(), "500000000n");  // 250 ms of cpu in 500 ms
  next = 2;
  EXPECT_EQ(nodeCpu(), "433333333n");  // from the oldest reading: 260 ms in 600 ms
}

}  // namespace
}  // namespace minik8s::apiserver
