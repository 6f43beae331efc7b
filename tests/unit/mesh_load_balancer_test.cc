// DestinationRule trafficPolicy: parsing (loadBalancer.simple, outlierDetection), the balancer's
// choices and ejections on a fake clock, and a sidecar on loopback that stops sending to an
// endpoint answering 500 once outlier detection ejects it.
#include <gtest/gtest.h>

#include <map>

#include "common/http.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "common/yaml_json.h"
#include "mesh/load_balancer.h"
#include "mesh/proxy/sidecar_proxy.h"

namespace minik8s::mesh {
namespace {

using std::chrono::seconds;
using Clock = EndpointBalancer::Clock;

DestinationRule ruleFrom(const std::string& yaml) {
  auto obj = parseYaml(yaml);
  EXPECT_TRUE(obj.ok());
  auto dr = parseDestinationRule(*obj);
  EXPECT_TRUE(dr.ok()) << dr.status().message();
  return dr.ok() ? *dr : DestinationRule{};
}

TEST(MeshTrafficPolicyTest, ParsesLoadBalancerAndOutlierDetection) {
  DestinationRule dr = ruleFrom(R"(
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  trafficPolicy:
    loadBalancer: {simple: LEAST_REQUEST}
    outlierDetection: {consecutive5xxErrors: 3, interval: 5s, baseEjectionTime: 1m, maxEjectionPercent: 50}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {loadBalancer: {simple: RANDOM}}
  - {name: v2, labels: {version: v2}}
)");
  EXPECT_EQ(dr.trafficPolicy.loadBalancer, LoadBalancer::kLeastRequest);
  ASSERT_TRUE(dr.trafficPolicy.outlierDetection);
  EXPECT_EQ(dr.trafficPolicy.outlierDetection->consecutive5xxErrors, 3);
  EXPECT_EQ(dr.trafficPolicy.outlierDetection->interval, seconds(5));
  EXPECT_EQ(dr.trafficPolicy.outlierDetection->baseEjectionTime, seconds(60));
  EXPECT_EQ(dr.trafficPolicy.outlierDetection->maxEjectionPercent, 50);
  ASSERT_TRUE(dr.subsets[0].trafficPolicy);
  EXPECT_EQ(dr.subsets[0].trafficPolicy->loadBalancer, LoadBalancer::kRandom);
  EXPECT_FALSE(dr.subsets[1].trafficPolicy);
  // Istio's defaults for what is left out.
  DestinationRule defaults = ruleFrom(R"(
metadata: {name: r, namespace: shop}
spec: {host: r, trafficPolicy: {outlierDetection: {}}}
)");
  ASSERT_TRUE(defaults.trafficPolicy.outlierDetection);
  EXPECT_EQ(defaults.trafficPolicy.outlierDetection->consecutive5xxErrors, 5);
  EXPECT_EQ(defaults.trafficPolicy.outlierDetection->baseEjectionTime, seconds(30));
  EXPECT_EQ(defaults.trafficPolicy.outlierDetection->maxEjectionPercent, 10);
  EXPECT_EQ(defaults.trafficPolicy.loadBalancer, LoadBalancer::kRoundRobin);
}

TEST(MeshTrafficPolicyTest, RefusesWhatItDoesNotKnowWithTheFieldPath) {
  auto bad = [](const std::string& yaml) {
    auto obj = parseYaml(yaml);
    return parseDestinationRule(*obj).status().message();
  };
  EXPECT_EQ(bad("spec: {host: r, trafficPolicy: {loadBalancer: {simple: MAGLEV}}}"),
            "spec.trafficPolicy.loadBalancer.simple: unsupported value \"MAGLEV\" (ROUND_ROBIN, "
            "RANDOM, LEAST_REQUEST)");
  EXPECT_EQ(bad("spec: {host: r, subsets: [{name: a, trafficPolicy: {outlierDetection: "
                "{baseEjectionTime: 30}}}]}"),
            "spec.subsets[0].trafficPolicy.outlierDetection.baseEjectionTime: want a duration "
            "such as 2s");
  EXPECT_EQ(bad("spec: {host: r, trafficPolicy: {outlierDetection: {maxEjectionPercent: 101}}}"),
            "spec.trafficPolicy.outlierDetection.maxEjectionPercent: must be from 0 to 100");
}

TEST(MeshBalancerTest, RoundRobinRandomAndLeastRequest) {
  std::vector<std::string> eps = {"a:1", "b:1", "c:1"};
  std::mt19937_64 rng(7);
  Clock::time_point now{};
  EndpointBalancer rr;
  TrafficPolicy policy;
  std::vector<size_t> order;
  for (int i = 0; i < 6; ++i) order.push_back(rr.pick(eps, policy, now, rng));
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 0, 1, 2}));

  policy.loadBalancer = LoadBalancer::kRandom;
  EndpointBalancer random;
  std::map<size_t, int> seen;
  for (int i = 0; i < 3000; ++i) seen[random.pick(eps, policy, now, rng)]++;
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(seen[i], 1000, 150) << i;

  // Least request: an endpoint with requests stuck in flight gets (almost) nothing new.
  policy.loadBalancer = LoadBalancer::kLeastRequest;
  EndpointBalancer least;
  for (int i = 0; i < 5; ++i) least.started("a:1");
  seen.clear();
  for (int i = 0; i < 3000; ++i) {
    size_t k = least.pick(eps, policy, now, rng);
    seen[k]++;
    if (k != 0) {
      least.started(eps[k]);
      least.finished(eps[k], 200, policy, now);
    }
  }
  // "a" wins only when both random picks are "a": 1 in 9.
  EXPECT_NEAR(seen[0], 3000 / 9, 80);
  EXPECT_EQ(least.inFlight("a:1"), 5);
}

TEST(MeshBalancerTest, OutlierDetectionEjectsAndBringsBack) {
  std::vector<std::string> eps = {"a:1", "b:1"};
  std::mt19937_64 rng(1);
  TrafficPolicy policy;
  policy.outlierDetection = OutlierDetection{};
  policy.outlierDetection->consecutive5xxErrors = 2;
  policy.outlierDetection->baseEjectionTime = seconds(30);
  Clock::time_point now{};
  EndpointBalancer lb;
  auto fail = [&](const std::string& e, int status) {
    lb.started(e);
    lb.finished(e, status, policy, now);
  };
  fail("b:1", 503);
  EXPECT_FALSE(lb.ejected("b:1", now));  // one is not a run
  fail("b:1", 200);
  fail("b:1", 500);
  EXPECT_FALSE(lb.ejected("b:1", now));  // the success broke the run
  fail("b:1", 0);                        // no answer counts too
  EXPECT_TRUE(lb.ejected("b:1", now));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(lb.pick(eps, policy, now, rng), 0u);
  // maxEjectionPercent 10 of 2 endpoints: still one may go, but not the second.
  fail("a:1", 500);
  fail("a:1", 500);
  EXPECT_FALSE(lb.ejected("a:1", now));
  // Back after baseEjectionTime; a second ejection lasts twice as long.
  now += seconds(30);
  EXPECT_FALSE(lb.ejected("b:1", now));
  fail("b:1", 500);
  fail("b:1", 500);
  EXPECT_TRUE(lb.ejected("b:1", now + seconds(59)));
  EXPECT_FALSE(lb.ejected("b:1", now + seconds(60)));
  // Every endpoint out (100% allowed): all are chosen again rather than none.
  policy.outlierDetection->maxEjectionPercent = 100;
  fail("a:1", 500);
  fail("a:1", 500);
  EXPECT_TRUE(lb.ejected("a:1", now));
  std::map<size_t, int> seen;
  for (int i = 0; i < 4; ++i) seen[lb.pick(eps, policy, now, rng)]++;
  EXPECT_EQ(seen[0], 2);
  EXPECT_EQ(seen[1], 2);
}

// A sidecar in front of two endpoints, one answering 500: with outlierDetection it stops
// sending there after consecutive5xxErrors answers; without it every other request fails.
class Endpoint {
 public:
  explicit Endpoint(int status)
      : server_([status](const http::Request&, http::ResponseWriter& w) {
          w.send(http::Response::text(status, std::to_string(status)));
        }) {
    EXPECT_TRUE(server_.start("127.0.0.1:0").ok());
  }
  int port() const { return server_.port(); }

 private:
  http::Server server_;
};

int failuresThroughTheProxy(const std::string& trafficPolicyYaml) {
  Endpoint good(200), bad(500);
  metrics::Registry registry;
  ProxyOptions o;
  o.bindAddress = "127.0.0.1";
  o.outboundPort = o.inboundPort = o.metricsPort = 0;
  o.seed = 1;
  o.registry = &registry;
  o.originalDestination = [](int) -> std::optional<std::pair<std::string, int>> {
    return std::make_pair(std::string("10.96.0.10"), 80);
  };
  SidecarProxy proxy(o);
  EXPECT_TRUE(proxy.start().ok());
  json svc = {
      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
      {"spec", {{"clusterIP", "10.96.0.10"}, {"ports", {{{"name", "http"}, {"port", 80}}}}}}};
  json eps = {{"metadata", {{"name", "web"}, {"namespace", "default"}}},
              {"subsets",
               {{{"addresses", {{{"ip", "127.0.0.1"}}}}, {"ports", {{{"port", good.port()}}}}},
                {{"addresses", {{{"ip", "127.0.0.1"}}}}, {"ports", {{{"port", bad.port()}}}}}}}};
  auto dr = parseYaml("metadata: {name: web, namespace: default}\nspec: {host: web, " +
                      trafficPolicyYaml + "}");
  EXPECT_TRUE(dr.ok());
  proxy.setConfig(
      buildMeshConfig({.services = {svc}, .endpoints = {eps}, .destinationRules = {*dr}}, 1));
  http::Client client("http://127.0.0.1:" + std::to_string(proxy.outboundPort()));
  int failures = 0;
  for (int i = 0; i < 20; ++i) {
    auto res = client.get("/");
    EXPECT_TRUE(res.ok());
    if (res.ok() && res->status != 200) ++failures;
  }
  proxy.stop();
  return failures;
}

TEST(MeshBalancerTest, TheSidecarStopsSendingToAnEjectedEndpoint) {
  EXPECT_EQ(failuresThroughTheProxy("trafficPolicy: {outlierDetection: {consecutive5xxErrors: 2, "
                                    "maxEjectionPercent: 50}}"),
            2);
  EXPECT_EQ(failuresThroughTheProxy("trafficPolicy: {loadBalancer: {simple: ROUND_ROBIN}}"), 10);
}

}  // namespace
}  // namespace minik8s::mesh
