#include <gtest/gtest.h>

#include "capturing_writer.h"
#include "monitoring/custom_metrics_api.h"

namespace minik8s::monitoring {
namespace {

class FakeCluster : public ObjectSource {
 public:
  std::vector<json> pods;
  std::map<std::string, json> objects;  // "resource/ns/name"
  bool ensureSynced(std::chrono::milliseconds) const override { return true; }
  std::vector<json> podsIn(const std::string& ns) const override {
    std::vector<json> out;
    for (const auto& p : pods)
      if (p["metadata"]["namespace"] == ns) out.push_back(p);
    return out;
  }
  Result<json> object(const std::string&, const std::string&, const std::string& resource,
                      const std::string& ns, const std::string& name) const override {
    auto it = objects.find(resource + "/" + ns + "/" + name);
    if (it == objects.end())
      return Status::NotFoundMessage(resource + " \"" + name + "\" not found");
    return it->second;
  }
};

// Answers queries by exact text; records them.
class FakePrometheus : public PrometheusClient {
 public:
  std::map<std::string, json> answers;
  std::vector<std::string> asked;
  Result<json> query(const std::string& promql) override {
    asked.push_back(promql);
    if (promql.find("((") != std::string::npos)
      return Status::BadRequest("Prometheus: parse error");
    auto it = answers.find(promql);
    return it == answers.end() ? json::array() : it->second;
  }
};

json pod(const std::string& name, const std::string& app) {
  return {{"metadata", {{"namespace", "shop"}, {"name", name}, {"labels", {{"app", app}}}}}};
}

json sample(const std::string& pod, const std::string& value) {
  return {{"metric", {{"pod", pod}}}, {"value", json::array({1700000000.0, value})}};
}

struct Fixture {
  std::shared_ptr<FakeCluster> cluster = std::make_shared<FakeCluster>();
  std::shared_ptr<FakePrometheus> prometheus = std::make_shared<FakePrometheus>();
  CustomMetricsApi api{cluster, prometheus};

  http::Response get(const std::string& path, const std::string& labelSelector = "") {
    http::Request req;
    req.method = "GET";
    req.path = req.target = path;
    if (!labelSelector.empty()) req.query.emplace("labelSelector", labelSelector);
    testing::CapturingWriter w;
    api.serve(req, w);
    return w.response;
  }
};

constexpr const char* kRate =
    "sum by (pod) (rate(app_requests_total{namespace=\"shop\",pod=~\"web-1|web-2\"}[1m]))";

TEST(CustomMetricsApiTest, PodsBySelectorAreTheCounterRatePerPod) {
  Fixture f;
  f.cluster->pods = {pod("web-1", "web"), pod("web-2", "web"), pod("db-1", "db")};
  f.prometheus->answers[kRate] = json::array({sample("web-1", "2.5"), sample("web-2", "0.75")});
  auto r =
      f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/app_requests", "app=web");
  ASSERT_EQ(r.status, 200) << r.body;
  json list = json::parse(r.body);
  EXPECT_EQ(list["kind"], "MetricValueList");
  EXPECT_EQ(list["apiVersion"], "custom.metrics.k8s.io/v1beta2");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(
      list["items"][0]["describedObject"],
      json({{"kind", "Pod"}, {"namespace", "shop"}, {"name", "web-1"}, {"apiVersion", "/v1"}}));
  EXPECT_EQ(list["items"][0]["metric"]["name"], "app_requests");
  EXPECT_EQ(list["items"][0]["value"], "2500m");
  EXPECT_EQ(list["items"][1]["value"], "750m");
  EXPECT_EQ(list["items"][0]["windowSeconds"], 60);
  EXPECT_EQ(f.prometheus->asked, std::vector<std::string>{kRate});
}

TEST(CustomMetricsApiTest, AGaugeWhenThereIsNoCounterAndV1beta1Names) {
  Fixture f;
  f.cluster->pods = {pod("web-1", "web")};
  f.prometheus->answers["sum by (pod) (queue_length{namespace=\"shop\",pod=~\"web-1\"})"] =
      json::array({sample("web-1", "12")});
  auto r = f.get("/apis/custom.metrics.k8s.io/v1beta1/namespaces/shop/pods/web-1/queue_length");
  ASSERT_EQ(r.status, 200) << r.body;
  json list = json::parse(r.body);
  EXPECT_EQ(list["items"][0]["metricName"], "queue_length");
  EXPECT_EQ(list["items"][0]["value"], "12");
  EXPECT_EQ(f.prometheus->asked.size(), 2u);  // the counter first, then the gauge
}

TEST(CustomMetricsApiTest, ObjectMetricOfADeploymentSumsItsPods) {
  Fixture f;
  f.cluster->pods = {pod("web-1", "web"), pod("web-2", "web"), pod("db-1", "db")};
  f.cluster->objects["deployments/shop/web"] = {
      {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}}}};
  f.prometheus->answers[kRate] = json::array({sample("web-1", "2.5"), sample("web-2", "0.75")});
  auto r =
      f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/deployments/web/app_requests");
  ASSERT_EQ(r.status, 200) << r.body;
  json v = json::parse(r.body);
  EXPECT_EQ(v["describedObject"]["kind"], "Deployment");
  EXPECT_EQ(v["describedObject"]["apiVersion"], "apps/v1");
  EXPECT_EQ(v["value"], "3250m");
  // A Service: the series labelled service="web".
  f.prometheus->answers["sum (rate(http_hits_total{namespace=\"shop\",service=\"web\"}[1m]))"] =
      json::array({{{"metric", json::object()}, {"value", json::array({1.0, "4"})}}});
  r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/services/web/http_hits");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["value"], "4");
}

TEST(CustomMetricsApiTest, RefusalsAreStatusesAndNothingOddReachesPromQL) {
  Fixture f;
  f.cluster->pods = {pod("web-1", "web")};
  auto r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/missing", "app=web");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(
      json::parse(r.body)["message"].get<std::string>().find("no series missing_total or missing"),
      std::string::npos);
  const size_t asked = f.prometheus->asked.size();
  r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/up})or(vector(1)", "");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("invalid metric name"), std::string::npos);
  r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/sh\"op/pods/x/m");
  EXPECT_EQ(r.status, 400);
  r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/pods/*/m", "app in (");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(f.prometheus->asked.size(), asked) << "refused before any query";
  r = f.get("/apis/custom.metrics.k8s.io/v1beta2/namespaces/shop/widgets/w/m");
  EXPECT_EQ(r.status, 404);
  r = f.get("/apis/custom.metrics.k8s.io/v1beta3");
  EXPECT_EQ(r.status, 404);
  http::Request post;
  post.method = "POST";
  post.path = "/apis/custom.metrics.k8s.io/v1beta2";
  testing::CapturingWriter w;
  f.api.serve(post, w);
  EXPECT_EQ(w.response.status, 405);
}

TEST(CustomMetricsApiTest, DiscoveryListsPodMetricsWithoutTotal) {
  Fixture f;
  f.prometheus->answers["count by (__name__) ({namespace!=\"\",pod!=\"\"})"] = json::array(
      {{{"metric", {{"__name__", "app_requests_total"}}}, {"value", json::array({1.0, "2"})}},
       {{"metric", {{"__name__", "queue_length"}}}, {"value", json::array({1.0, "1"})}}});
  json group = json::parse(f.get("/apis/custom.metrics.k8s.io").body);
  EXPECT_EQ(group["preferredVersion"]["groupVersion"], "custom.metrics.k8s.io/v1beta2");
  json list = json::parse(f.get("/apis/custom.metrics.k8s.io/v1beta2").body);
  ASSERT_EQ(list["resources"].size(), 2u);
  EXPECT_EQ(list["resources"][0]["name"], "pods/app_requests");
  EXPECT_EQ(list["resources"][1]["name"], "pods/queue_length");
}

}  // namespace
}  // namespace minik8s::monitoring
