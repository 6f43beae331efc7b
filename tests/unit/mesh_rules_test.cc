#include <gtest/gtest.h>

#include "common/yaml_json.h"
#include "mesh/mesh_config.h"
#include "mesh/rules.h"

namespace minik8s::mesh {
namespace {

json yaml(const std::string& text) {
  auto j = parseYaml(text);
  EXPECT_TRUE(j.ok()) << j.status().message();
  return *j;
}

const char* kReviewsVs = R"(
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews, namespace: shop}
spec:
  hosts: [reviews]
  http:
  - name: firefox
    match:
    - headers:
        user-agent: {regex: ".*Firefox.*"}
    - uri: {prefix: /api/v2/}
    route:
    - destination: {host: reviews, subset: v2}
    timeout: 1.5s
    retries: {attempts: 2}
  - match:
    - uri: {exact: /exact}
    route:
    - destination: {host: reviews.shop.svc.cluster.local, subset: v1}
  - route:
    - destination: {host: reviews, subset: v1}
      weight: 90
    - destination: {host: reviews, subset: v2}
      weight: 10
)";

HeaderLookup headers(std::map<std::string, std::string> h) {
  return [h = std::move(h)](std::string_view name) -> std::optional<std::string_view> {
    auto it = h.find(std::string(name));
    if (it == h.end()) return std::nullopt;
    return std::string_view(it->second);
  };
}

TEST(MeshRulesTest, ParsesTheVirtualServiceSubset) {
  auto vs = parseVirtualService(yaml(kReviewsVs));
  ASSERT_TRUE(vs.ok()) << vs.status().message();
  EXPECT_EQ(vs->ns, "shop");
  ASSERT_EQ(vs->http.size(), 3u);
  EXPECT_EQ(vs->http[0].timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(vs->http[0].retryAttempts, 2);
  EXPECT_EQ(vs->http[1].retryAttempts, kDefaultRetryAttempts);
  EXPECT_EQ(vs->http[2].route[0].weight, 90);
  EXPECT_EQ(vs->http[2].route[1].subset, "v2");
}

TEST(MeshRulesTest, RefusesWhatTheSubsetDoesNotKnowWithTheField) {
  auto bad = parseVirtualService(yaml(R"(
metadata: {name: x}
spec:
  hosts: [a]
  http:
  - match: [{uri: {suffix: /x}}]
    route: [{destination: {host: a}}]
)"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("spec.http[0].match[0].uri.suffix"), std::string::npos);
  auto badRegex = parseVirtualService(yaml(R"(
metadata: {name: x}
spec:
  hosts: [a]
  http: [{match: [{uri: {regex: "("}}], route: [{destination: {host: a}}]}]
)"));
  EXPECT_FALSE(badRegex.ok());
}

TEST(MeshRulesTest, MatchesUriAndHeadersInOrder) {
  auto vs = parseVirtualService(yaml(kReviewsVs));
  ASSERT_TRUE(vs.ok());
  const auto& routes = vs->http;
  auto firefox = headers({{"user-agent", "Mozilla/5.0 (X11; Linux) Gecko Firefox/120.0"}});
  auto curl = headers({{"user-agent", "curl/8.0"}});
  EXPECT_EQ(matchRoute(routes, "/", firefox), &routes[0]);
  EXPECT_EQ(matchRoute(routes, "/api/v2/items?x=1", curl), &routes[0]);
  EXPECT_EQ(matchRoute(routes, "/exact?q=1", curl), &routes[1]);
  EXPECT_EQ(matchRoute(routes, "/exact/more", curl), &routes[2]);
  EXPECT_EQ(matchRoute(routes, "/", headers({})), &routes[2]);
  std::vector<HttpRoute> onlyMatched(routes.begin(), routes.begin() + 2);
  EXPECT_EQ(matchRoute(onlyMatched, "/", curl), nullptr);
}

TEST(MeshRulesTest, RegexMatchesTheWholeValue) {
  StringMatch m;
  m.kind = StringMatch::Kind::kRegex;
  m.re = std::regex("/api/v[0-9]+");
  EXPECT_TRUE(m.matches("/api/v2"));
  EXPECT_FALSE(m.matches("/api/v2/x"));
}

TEST(MeshRulesTest, WeightedPickingFollowsTheWeights) {
  std::vector<RouteDestination> route(3);
  route[0].weight = 70;
  route[1].weight = 20;
  route[2].weight = 10;
  std::mt19937_64 rng(42);
  int counts[3] = {0, 0, 0};
  constexpr int kPicks = 10000;
  for (int i = 0; i < kPicks; ++i) ++counts[pickWeighted(route, rng)];
  EXPECT_NEAR(counts[0] / double(kPicks), 0.70, 0.02);
  EXPECT_NEAR(counts[1] / double(kPicks), 0.20, 0.02);
  EXPECT_NEAR(counts[2] / double(kPicks), 0.10, 0.02);
  route[2].weight = 0;
  for (int i = 0; i < 1000; ++i) EXPECT_NE(pickWeighted(route, rng), 2u);
  std::vector<RouteDestination> one(1);
  EXPECT_EQ(pickWeighted(one, rng), 0u);
}

TEST(MeshRulesTest, HostsNameServicesInTheRuleNamespace) {
  EXPECT_EQ(serviceKeyOfHost("reviews", "shop"), "shop/reviews");
  EXPECT_EQ(serviceKeyOfHost("reviews.other", "shop"), "other/reviews");
  EXPECT_EQ(serviceKeyOfHost("reviews.other.svc.cluster.local", "shop"), "other/reviews");
}

TEST(MeshConfigTest, BuildsTheRegistryWithSubsetsAndRoutes) {
  json svc = yaml(R"(
metadata: {name: reviews, namespace: shop}
spec:
  clusterIP: 10.96.0.20
  ports: [{name: http, port: 80, targetPort: 8080}]
)");
  json eps = yaml(R"(
metadata: {name: reviews, namespace: shop}
subsets:
- addresses:
  - {ip: 10.1.0.5, targetRef: {kind: Pod, name: reviews-v1-a, namespace: shop}}
  - {ip: 10.1.0.6, targetRef: {kind: Pod, name: reviews-v2-a, namespace: shop}}
  ports: [{name: http, port: 8080}]
)");
  json podV1 = yaml("metadata: {name: reviews-v1-a, namespace: shop, labels: {version: v1}}");
  json podV2 = yaml("metadata: {name: reviews-v2-a, namespace: shop, labels: {version: v2}}");
  json dr = yaml(R"(
metadata: {name: reviews, namespace: shop}
spec:
  host: reviews
  subsets:
  - {name: v1, labels: {version: v1}}
  - {name: v2, labels: {version: v2}}
)");
  std::vector<std::string> errors;
  json badVs = yaml("metadata: {name: bad, namespace: shop}\nspec: {hosts: [reviews], http: [{}]}");
  auto config = buildMeshConfig({.services = {svc},
                                 .endpoints = {eps},
                                 .pods = {podV1, podV2},
                                 .virtualServices = {yaml(kReviewsVs), badVs},
                                 .destinationRules = {dr}},
                                7, &errors);
  EXPECT_EQ(config->version, 7);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("VirtualService shop/bad"), std::string::npos);
  const MeshService* s = config->serviceAt("10.96.0.20", 80);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->key(), "shop/reviews");
  EXPECT_EQ(s->routes.size(), 3u);
  EXPECT_EQ(s->routes[1].route[0].host, "shop/reviews");
  const MeshServicePort* port = s->port(80);
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->appProtocol, "http");
  ASSERT_EQ(port->endpoints.size(), 2u);
  EXPECT_EQ(port->endpoints[0].port, 8080);
  auto v2 = subsetEndpoints(*s, *port, "v2");
  ASSERT_EQ(v2.size(), 1u);
  EXPECT_EQ(v2[0]->ip, "10.1.0.6");
  EXPECT_EQ(subsetEndpoints(*s, *port, "").size(), 2u);
  EXPECT_TRUE(subsetEndpoints(*s, *port, "v3").empty());
  json listed = meshConfigToJson(*config);
  EXPECT_EQ(listed["services"][0]["clusterIP"], "10.96.0.20");
  EXPECT_EQ(listed["services"][0]["ports"][0]["endpoints"].size(), 2u);
}

}  // namespace
}  // namespace minik8s::mesh

#include "mesh/interception.h"

namespace minik8s::mesh {
namespace {

TEST(MeshInterceptionTest, RedirectsAllButTheProxyAndLoopback) {
  std::string rules = interceptionRules({});
  EXPECT_NE(rules.find("-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 15001"), std::string::npos);
  EXPECT_NE(rules.find("-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006"),
            std::string::npos);
  EXPECT_NE(rules.find("--uid-owner 1337 -j RETURN"), std::string::npos);
  EXPECT_NE(rules.find("-A MESH_INBOUND -p tcp --dport 15090 -j RETURN"), std::string::npos);
  // The UID exclusion comes before the redirect.
  EXPECT_LT(rules.find("--uid-owner"), rules.find("-A MESH_OUTPUT -j MESH_REDIRECT"));
  EXPECT_EQ(rules.substr(rules.size() - 7), "COMMIT\n");
}

}  // namespace
}  // namespace minik8s::mesh

#include "mesh/mesh_resources.h"

namespace minik8s::mesh {
namespace {

TEST(MeshResourcesTest, TheKindsAreIstiosNames) {
  json vs = virtualServiceCrd();
  EXPECT_EQ(vs["metadata"]["name"], "virtualservices.networking.istio.io");
  EXPECT_EQ(vs["spec"]["names"]["shortNames"][0], "vs");
  ASSERT_EQ(vs["spec"]["versions"].size(), 3u);
  EXPECT_EQ(vs["spec"]["versions"][0]["name"], "v1");
  EXPECT_EQ(vs["spec"]["versions"][0]["storage"], true);
  EXPECT_EQ(destinationRuleCrd()["spec"]["names"]["kind"], "DestinationRule");
}

}  // namespace
}  // namespace minik8s::mesh
