// The agent's /metrics/cadvisor and /metrics/resource: the exact text rendered from a summary
// (cAdvisor's and the kubelet's names, HELP texts, labels, escaping, nanoseconds as seconds,
// network per interface on the sandbox's series), /proc/<pid>/net/dev parsing, and the endpoints
// through the agent server (content type, 405, scrape errors, authorization as /stats/summary).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <sstream>

#include "capturing_writer.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "kubelet/server/agent_server.h"
#include "kubelet/server/prometheus_stats.h"

namespace minik8s::kubelet::server {
namespace {

using ::testing::Contains;
using ::testing::Not;

const Clock::time_point kSampleTime = Clock::time_point(std::chrono::milliseconds(1700000000123));

Clock::time_point atMillis(int64_t millisSinceEpoch) {
  return Clock::time_point(std::chrono::milliseconds(millisSinceEpoch));
}

StatsSummary fixture() {
  StatsSummary s;
  s.nodeName = "n1";
  s.node.time = kSampleTime;
  s.node.usageCoreNanoSeconds = 12'500'000'000;
  s.node.workingSetBytes = 1 << 20;
  s.nodeNetwork = NetworkUsage{kSampleTime, {{"eth0", 100, 2, 0, 0, 200, 3, 0, 0}}};

  PodUsage p;
  p.name = "web";
  p.namespaceName = "default";
  p.uid = "u1";
  p.cgroupPath = "/kubepods/podu1";
  p.sandboxId = "sb1";
  p.sandboxImage = "registry.k8s.io/pause:3.9";
  p.sandboxStartTime = atMillis(1699999000500);
  p.network = NetworkUsage{
      kSampleTime, {{"eth0", 1000, 10, 1, 2, 2000, 20, 3, 4}, {"net1", 5, 1, 0, 0, 6, 1, 0, 0}}};
  ContainerUsage app;
  app.name = "app";
  app.id = "c1";
  app.image = "nginx:1.25";
  app.startTime = atMillis(1699999990500);  // exact as a double
  app.usage = {kSampleTime, 1'500'000'000, 7, 4096, 8192, 2048};
  ContainerUsage side;
  side.name = "side";
  side.id = "c2";
  side.image = "busybox";
  side.usage = {kSampleTime, 500'000'000, std::nullopt, 1024, std::nullopt, std::nullopt};
  p.containers = {app, side};
  s.pods.push_back(p);
  s.machine = MachineFacts{2, 24ULL << 30, "mid", "uuid", "boot"};
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Families appear once each, sorted by name, each with HELP then TYPE before its samples.
void expectWellFormed(const std::string& text) {
  std::vector<std::string> families;
  std::string current;
  for (const auto& line : lines(text)) {
    if (line.starts_with("# HELP ")) {
      current = line.substr(7, line.find(' ', 7) - 7);
      families.push_back(current);
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      EXPECT_TRUE(line.starts_with("# TYPE " + current + " ")) << line;
      continue;
    }
    std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(name, current) << line;
  }
  EXPECT_TRUE(std::is_sorted(families.begin(), families.end()));
  EXPECT_EQ(std::adjacent_find(families.begin(), families.end()), families.end());
}

TEST(ResourceMetrics, RendersTheKubeletsCollectorExactly) {
  const std::string expected =
      "# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the "
      "container in core-seconds\n"
      "# TYPE container_cpu_usage_seconds_total counter\n"
      "container_cpu_usage_seconds_total{container=\"app\",namespace=\"default\",pod=\"web\"} 1.5 "
      "1700000000123\n"
      "container_cpu_usage_seconds_total{container=\"side\",namespace=\"default\",pod=\"web\"} 0.5 "
      "1700000000123\n"
      "# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in "
      "bytes\n"
      "# TYPE container_memory_working_set_bytes gauge\n"
      "container_memory_working_set_bytes{container=\"app\",namespace=\"default\",pod=\"web\"} "
      "4096 "
      "1700000000123\n"
      "container_memory_working_set_bytes{container=\"side\",namespace=\"default\",pod=\"web\"} "
      "1024 1700000000123\n"
      "# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch "
      "in seconds\n"
      "# TYPE container_start_time_seconds gauge\n"
      "container_start_time_seconds{container=\"app\",namespace=\"default\",pod=\"web\"} "
      "1699999990.5\n"
      "# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in "
      "core-seconds\n"
      "# TYPE node_cpu_usage_seconds_total counter\n"
      "node_cpu_usage_seconds_total 12.5 1700000000123\n"
      "# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes\n"
      "# TYPE node_memory_working_set_bytes gauge\n"
      "node_memory_working_set_bytes 1048576 1700000000123\n"
      "# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in "
      "core-seconds\n"
      "# TYPE pod_cpu_usage_seconds_total counter\n"
      "pod_cpu_usage_seconds_total{namespace=\"default\",pod=\"web\"} 2 1700000000123\n"
      "# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes\n"
      "# TYPE pod_memory_working_set_bytes gauge\n"
      "pod_memory_working_set_bytes{namespace=\"default\",pod=\"web\"} 5120 1700000000123\n"
      "# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container "
      "metrics, 0 otherwise\n"
      "# TYPE resource_scrape_error gauge\n"
      "resource_scrape_error 0\n"
      "# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 "
      "otherwise\n"
      "# TYPE scrape_error gauge\n"
      "scrape_error 0\n";
  EXPECT_EQ(renderResourceMetrics(fixture()), expected);
}

TEST(ResourceMetrics, AFailedSummaryIsAScrapeError) {
  std::string text = renderResourceMetrics(Status::Unavailable("runtime down"));
  EXPECT_THAT(lines(text), Contains("scrape_error 1"));
  EXPECT_THAT(lines(text), Contains("resource_scrape_error 1"));
  EXPECT_EQ(text.find("node_"), std::string::npos);
  expectWellFormed(text);
}

TEST(ResourceMetrics, SamplesWithoutFiguresAreLeftOut) {
  StatsSummary s;
  PodUsage p{"web", "default", "u1", {}};
  p.containers.push_back({"app", {kSampleTime, std::nullopt, std::nullopt, 10}});
  s.pods.push_back(p);
  std::string text = renderResourceMetrics(s);
  EXPECT_EQ(text.find("cpu_usage_seconds_total"), std::string::npos) << text;
  EXPECT_EQ(text.find("node_memory"), std::string::npos) << text;
  EXPECT_THAT(lines(text),
              Contains("pod_memory_working_set_bytes{namespace=\"default\",pod=\"web\"} "
                       "10 1700000000123"));
}

TEST(CadvisorMetrics, RendersCadvisorsNamesLabelsAndSeries) {
  std::string text = renderCadvisorMetrics(fixture());
  expectWellFormed(text);
  auto l = lines(text);
  for (
      const char* line : {
          "# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.",
          "# TYPE container_cpu_usage_seconds_total counter",
          // The root cgroup: the node's own figures.
          "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/\",image=\"\","
          "name=\"\",namespace=\"\",pod=\"\"} 12.5 1700000000123",
          // The pod cgroup: sums over the containers.
          "container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/kubepods/podu1\","
          "image=\"\",name=\"\",namespace=\"default\",pod=\"web\"} 2 1700000000123",
          "container_cpu_usage_seconds_total{container=\"app\",cpu=\"total\",id=\"/kubepods/podu1/"
          "c1\",image=\"nginx:1.25\",name=\"c1\",namespace=\"default\",pod=\"web\"} 1.5 "
          "1700000000123",
          "container_cpu_usage_seconds_total{container=\"side\",cpu=\"total\",id=\"/kubepods/"
          "podu1/c2\",image=\"busybox\",name=\"c2\",namespace=\"default\",pod=\"web\"} 0.5 "
          "1700000000123",
          "# HELP container_memory_working_set_bytes Current working set in bytes.",
          "# TYPE container_memory_working_set_bytes gauge",
          "container_memory_working_set_bytes{container=\"\",id=\"/\",image=\"\",name=\"\","
          "namespace=\"\",pod=\"\"} 1048576 1700000000123",
          "container_memory_working_set_bytes{container=\"\",id=\"/kubepods/podu1\",image=\"\","
          "name=\"\",namespace=\"default\",pod=\"web\"} 5120 1700000000123",
          "container_memory_working_set_bytes{container=\"app\",id=\"/kubepods/podu1/c1\",image="
          "\"nginx:1.25\",name=\"c1\",namespace=\"default\",pod=\"web\"} 4096 1700000000123",
          "# HELP container_memory_usage_bytes Current memory usage in bytes, including all memory "
          "regardless of when it was accessed",
          "# TYPE container_memory_usage_bytes gauge",
          "container_memory_usage_bytes{container=\"app\",id=\"/kubepods/podu1/c1\",image=\"nginx:"
          "1.25\",name=\"c1\",namespace=\"default\",pod=\"web\"} 8192 1700000000123",
          "# HELP container_memory_rss Size of RSS in bytes.",
          "# TYPE container_memory_rss gauge",
          "container_memory_rss{container=\"app\",id=\"/kubepods/podu1/c1\",image=\"nginx:1.25\","
          "name=\"c1\",namespace=\"default\",pod=\"web\"} 2048 1700000000123",
          // Network: the pod's on its sandbox's series, per interface; the node's on the root.
          "# HELP container_network_receive_bytes_total Cumulative count of bytes received",
          "# TYPE container_network_receive_bytes_total counter",
          "container_network_receive_bytes_total{container=\"\",id=\"/\",image=\"\",interface="
          "\"eth0\",name=\"\",namespace=\"\",pod=\"\"} 100 1700000000123",
          "container_network_receive_bytes_total{container=\"\",id=\"/kubepods/podu1/sb1\",image="
          "\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace=\"default\","
          "pod=\"web\"} 1000 1700000000123",
          "container_network_receive_bytes_total{container=\"\",id=\"/kubepods/podu1/sb1\",image="
          "\"registry.k8s.io/pause:3.9\",interface=\"net1\",name=\"sb1\",namespace=\"default\","
          "pod=\"web\"} 5 1700000000123",
          "# HELP container_network_transmit_bytes_total Cumulative count of bytes transmitted",
          "container_network_transmit_bytes_total{container=\"\",id=\"/kubepods/podu1/sb1\",image="
          "\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace=\"default\","
          "pod=\"web\"} 2000 1700000000123",
          "# HELP container_network_receive_packets_total Cumulative count of packets received",
          "container_network_receive_packets_total{container=\"\",id=\"/kubepods/podu1/sb1\","
          "image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 10 1700000000123",
          "# HELP container_network_transmit_packets_total Cumulative count of packets transmitted",
          "container_network_transmit_packets_total{container=\"\",id=\"/kubepods/podu1/sb1\","
          "image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 20 1700000000123",
          "container_network_receive_errors_total{container=\"\",id=\"/kubepods/podu1/sb1\","
          "image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 1 1700000000123",
          "container_network_receive_packets_dropped_total{container=\"\",id=\"/kubepods/podu1/"
          "sb1\",image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 2 1700000000123",
          "container_network_transmit_errors_total{container=\"\",id=\"/kubepods/podu1/sb1\","
          "image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 3 1700000000123",
          "container_network_transmit_packets_dropped_total{container=\"\",id=\"/kubepods/podu1/"
          "sb1\",image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"sb1\",namespace="
          "\"default\",pod=\"web\"} 4 1700000000123",
          // Start times in whole seconds, without a sample timestamp.
          "# HELP container_start_time_seconds Start time of the container since unix epoch in "
          "seconds.",
          "# TYPE container_start_time_seconds gauge",
          "container_start_time_seconds{container=\"\",id=\"/kubepods/podu1/sb1\",image=\"registry"
          ".k8s.io/pause:3.9\",name=\"sb1\",namespace=\"default\",pod=\"web\"} 1699999000",
          "container_start_time_seconds{container=\"app\",id=\"/kubepods/podu1/c1\",image=\"nginx:"
          "1.25\",name=\"c1\",namespace=\"default\",pod=\"web\"} 1699999990",
          "# HELP container_scrape_error 1 if there was an error while getting container metrics, "
          "0 otherwise",
          "container_scrape_error 0",
          "# HELP machine_cpu_cores Number of logical CPU cores.",
          "machine_cpu_cores{boot_id=\"boot\",machine_id=\"mid\",system_uuid=\"uuid\"} 2",
          "# HELP machine_memory_bytes Amount of memory installed on the machine.",
          "machine_memory_bytes{boot_id=\"boot\",machine_id=\"mid\",system_uuid=\"uuid\"} "
          "25769803776",
      }) {
    EXPECT_THAT(l, Contains(std::string(line))) << text;
  }
  // Series of a family ordered by label values: the root, the pod, then the containers.
  auto pos = [&](const std::string& prefix) {
    return std::find_if(l.begin(), l.end(),
                        [&](const std::string& x) { return x.starts_with(prefix); }) -
           l.begin();
  };
  EXPECT_LT(pos("container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/\","),
            pos("container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/kubepods"));
  EXPECT_LT(pos("container_cpu_usage_seconds_total{container=\"\",cpu=\"total\",id=\"/kubepods"),
            pos("container_cpu_usage_seconds_total{container=\"app\""));
  // Figures a container lacks are left out rather than reported as 0.
  EXPECT_EQ(text.find("container_memory_usage_bytes{container=\"side\""), std::string::npos);
  // Network is the sandbox's only: no container series has it.
  EXPECT_EQ(text.find("container_network_receive_bytes_total{container=\"app\""),
            std::string::npos);
}

TEST(CadvisorMetrics, EscapesLabelValues) {
  StatsSummary s;
  PodUsage p{"web", "default", "u1", {}};
  ContainerUsage c;
  c.name = "app";
  c.id = "c1";
  c.image = "reg/img:\"q\"\\x\ny";
  c.usage = {kSampleTime, 1'000'000, std::nullopt, std::nullopt};
  p.containers.push_back(c);
  s.pods.push_back(p);
  std::string text = renderCadvisorMetrics(s);
  EXPECT_THAT(lines(text),
              Contains("container_cpu_usage_seconds_total{container=\"app\",cpu=\"total\",id=\"/"
                       "kubepods/podu1/c1\",image=\"reg/img:\\\"q\\\"\\\\x\\ny\",name=\"c1\","
                       "namespace=\"default\",pod=\"web\"} 0.001 1700000000123"))
      << text;
  // Without a cgroup from the runtime the pod's id is /kubepods/pod<uid>; without sandbox
  // figures no sandbox series appears.
  EXPECT_EQ(text.find("container_start_time_seconds"), std::string::npos) << text;
  EXPECT_EQ(text.find("machine_"), std::string::npos) << text;
  expectWellFormed(text);
}

TEST(CadvisorMetrics, AFailedSummaryIsAScrapeError) {
  std::string text = renderCadvisorMetrics(Status::Unavailable("runtime down"));
  EXPECT_EQ(
      text,
      "# HELP container_scrape_error 1 if there was an error while getting container "
      "metrics, 0 otherwise\n# TYPE container_scrape_error gauge\ncontainer_scrape_error 1\n");
}

// ---- /proc/<pid>/net/dev ----

const char* const kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:    1296      16    0    0    0     0          0         0     1296      16    0    0 "
    "   0     0       0          0\n"
    "  eth0: 1234567    8901    1    2    0     0          0         5   765432    4321    3    4 "
    "   0     0       0          0\n"
    "veth12ab:     10       1    0    0    0     0          0         0       20       2    0    0 "
    "   0     0       0          0\n"
    "vxlan0:12345678901234 7 0 0 0 0 0 0 98765432109876 8 0 0 0 0 0 0\n";

TEST(ProcNetDev, ParsesInterfacesAndSkipsLoopbackAndVeths) {
  auto parsed = parseProcNetDev(kNetDev);
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  ASSERT_EQ(parsed->size(), 2u);
  const InterfaceUsage& eth0 = (*parsed)[0];
  EXPECT_EQ(eth0.name, "eth0");
  EXPECT_EQ(eth0.rxBytes, 1234567u);
  EXPECT_EQ(eth0.rxPackets, 8901u);
  EXPECT_EQ(eth0.rxErrors, 1u);
  EXPECT_EQ(eth0.rxDropped, 2u);
  EXPECT_EQ(eth0.txBytes, 765432u);
  EXPECT_EQ(eth0.txPackets, 4321u);
  EXPECT_EQ(eth0.txErrors, 3u);
  EXPECT_EQ(eth0.txDropped, 4u);
  // Wide counters touch the colon.
  EXPECT_EQ((*parsed)[1].name, "vxlan0");
  EXPECT_EQ((*parsed)[1].rxBytes, 12345678901234u);
  EXPECT_EQ((*parsed)[1].txBytes, 98765432109876u);
}

TEST(ProcNetDev, RejectsMalformedFiles) {
  EXPECT_FALSE(parseProcNetDev("just one line\n").ok());
  std::string shortLine = std::string(kNetDev) + "  eth1: 1 2 3\n";
  EXPECT_FALSE(parseProcNetDev(shortLine).ok());
  std::string noName = std::string(kNetDev) + "  1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
  EXPECT_FALSE(parseProcNetDev(noName).ok());
  std::string words = std::string(kNetDev) + "eth2: a b c d e f g h i j k l m n o p\n";
  EXPECT_FALSE(parseProcNetDev(words).ok());
  EXPECT_EQ(readNetworkStats("/nonexistent/net/dev", kSampleTime).status().code(), 404);
}

TEST(ProcNetDev, ReadsThisProcessesNamespace) {
  auto net = readNetworkStats("/proc/self/net/dev", kSampleTime);
  ASSERT_TRUE(net.ok()) << net.status().toString();
  EXPECT_EQ(net->time, kSampleTime);
  for (const auto& i : net->interfaces) EXPECT_NE(i.name, "lo");
}

TEST(StatsSummaryJson, CarriesNetworkMemoryAndStartTime) {
  json s = summaryToJson(fixture());
  const json& pod = s["pods"][0];
  EXPECT_EQ(pod["network"]["name"], "eth0");
  EXPECT_EQ(pod["network"]["rxBytes"], 1000);
  EXPECT_EQ(pod["network"]["txErrors"], 3);
  EXPECT_EQ(pod["network"]["interfaces"].size(), 2u);
  EXPECT_EQ(pod["network"]["interfaces"][1]["name"], "net1");
  EXPECT_EQ(pod["memory"]["usageBytes"], 8192);
  EXPECT_EQ(pod["containers"][0]["memory"]["rssBytes"], 2048);
  EXPECT_EQ(pod["containers"][0]["startTime"], "2023-11-14T22:13:10Z");
  EXPECT_FALSE(pod["containers"][1].contains("startTime"));
  EXPECT_EQ(s["node"]["network"]["txBytes"], 200);
}

// ---- through the agent server ----

class FixtureStats : public StatsProvider {
 public:
  Result<StatsSummary> summary() override {
    ++calls;
    if (fail) return Status::Unavailable("runtime down");
    return fixture();
  }
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};
};

class NoPods : public PodLookup {
 public:
  Result<ContainerLocation> findContainer(const std::string&, const std::string&,
                                          const std::string&, bool) override {
    return Status::NotFoundMessage("no pods here");
  }
};

std::string contentType(const http::Response& r) {
  for (const auto& [k, v] : r.headers) {
    std::string key = k;
    std::transform(key.begin(), key.end(), key.begin(), ::tolower);
    if (key == "content-type") return v;
  }
  return "";
}

TEST(AgentServerStatsMetrics, ServesBothEndpointsOnGetOnly) {
  NoPods pods;
  LocalExecBackend exec;
  FixtureStats stats;
  AgentServer server(pods, exec, stats);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  http::Client client("http://127.0.0.1:" + std::to_string(server.port()));

  auto cadvisor = client.get("/metrics/cadvisor");
  ASSERT_TRUE(cadvisor.ok()) << cadvisor.status().toString();
  EXPECT_EQ(cadvisor->status, 200);
  EXPECT_EQ(contentType(*cadvisor), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(cadvisor->body, renderCadvisorMetrics(fixture()));
  EXPECT_EQ(stats.calls, 1);

  auto resource = client.get("/metrics/resource");
  ASSERT_TRUE(resource.ok());
  EXPECT_EQ(resource->status, 200);
  EXPECT_EQ(contentType(*resource), metrics::kExpositionContentType);
  EXPECT_EQ(resource->body, renderResourceMetrics(fixture()));
  EXPECT_EQ(stats.calls, 2);

  for (const char* path : {"/metrics/cadvisor", "/metrics/resource"}) {
    auto post = client.request("POST", path);
    ASSERT_TRUE(post.ok());
    EXPECT_EQ(post->status, 405) << path;
  }
  EXPECT_EQ(stats.calls, 2);  // refused before asking for stats

  // The runtime failing is a scrape error, not a failed scrape.
  stats.fail = true;
  auto failed = client.get("/metrics/resource");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, 200);
  EXPECT_THAT(lines(failed->body), Contains("scrape_error 1"));
  failed = client.get("/metrics/cadvisor");
  ASSERT_TRUE(failed.ok());
  EXPECT_THAT(lines(failed->body), Contains("container_scrape_error 1"));
  server.stop();
}

using minik8s::testing::CapturingWriter;

TEST(AgentServerStatsMetrics, AuthorizedAsTheStatsSummary) {
  NoPods pods;
  LocalExecBackend exec;
  FixtureStats stats;
  AgentServerOptions o;
  o.tls = http::TlsServerConfig{};  // not started: handle() is called directly
  o.allowedGroups = {};
  AgentServer server(pods, exec, stats, o);
  auto call = [&](const std::string& path, std::optional<http::PeerCertificate> who) {
    http::Request req;
    req.method = "GET";
    req.path = req.target = path;
    req.tls = true;
    req.clientCertificate = std::move(who);
    CapturingWriter w;
    server.handle(req, w);
    return w.response.status;
  };
  for (const char* path : {"/stats/summary", "/metrics/cadvisor", "/metrics/resource"}) {
    EXPECT_EQ(call(path, std::nullopt), 401) << path;
    EXPECT_EQ(call(path, http::PeerCertificate{"kube-apiserver-kubelet-client", {}, false}), 401)
        << path;
    EXPECT_EQ(call(path, http::PeerCertificate{"alice", {"system:masters"}, true}), 403) << path;
    EXPECT_EQ(call(path, http::PeerCertificate{"kube-apiserver-kubelet-client", {}, true}), 200)
        << path;
  }
  EXPECT_EQ(stats.calls, 3);  // only the allowed caller's requests read stats
}

}  // namespace
}  // namespace minik8s::kubelet::server
