// The HPA controller against a real in-process API server, with a fake metrics source and a
// fake wall clock: the scale subresource is updated, status/conditions are written, a
// SuccessfulRescale Event is recorded, missing metrics disable scaling, the downscale
// stabilization window holds, and `kubectl get hpa` TARGETS read the status.
#include <gtest/gtest.h>

#include <thread>

#include "api/table.h"
#include "common/time_util.h"
#include "controllers/hpa/hpa_controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers::hpa {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class FakeMetrics : public MetricsSource {
 public:
  Result<PodMetrics> podMetrics(const std::string&, const std::string& resource,
                                const std::string& selector) override {
    std::lock_guard lock(mu);
    lastSelector = selector;
    if (failing) return Status::Unavailable("metrics API down");
    return samples[resource];
  }
  Result<PodMetrics> podCustomMetrics(const std::string&, const std::string& metric,
                                      const std::string& selector) override {
    std::lock_guard lock(mu);
    lastSelector = selector;
    if (failing) return Status::Unavailable("custom metrics API down");
    auto it = custom.find(metric);
    if (it == custom.end()) return Status::NotFoundMessage("no custom metric " + metric);
    return it->second;
  }
  Result<PodMetric> objectCustomMetric(const std::string&, const json& described,
                                       const std::string& metric) override {
    std::lock_guard lock(mu);
    lastObject = described;
    auto it = objects.find(metric);
    if (it == objects.end()) return Status::NotFoundMessage("no custom metric " + metric);
    return it->second;
  }
  std::mutex mu;
  std::map<std::string, PodMetrics> samples;
  std::map<std::string, PodMetrics> custom;  // by metric name
  std::map<std::string, PodMetric> objects;  // by metric name
  std::string lastSelector;
  json lastObject;
  bool failing = false;
};

class HpaControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    hpas = std::make_unique<client::Informer>(*rest, res::kHpas);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    addNamespaceIndex(*pods);
    HpaControllerOptions opts;
    opts.now = [this] { return now; };
    recorder = std::make_unique<client::ApiEventRecorder>(
        *rest,
        client::ApiEventRecorderOptions{.component = "horizontal-pod-autoscaler", .now = opts.now});
    opts.events = recorder.get();
    controller =
        std::make_unique<HorizontalPodAutoscalerController>(*rest, *hpas, *pods, metrics, opts);
    hpas->start();
    pods->start();
    ASSERT_TRUE(hpas->waitForSync(5s));
    ASSERT_TRUE(pods->waitForSync(5s));
  }
  void TearDown() override {
    controller.reset();
    recorder.reset();
    hpas->stop();
    pods->stop();
    apiServer.stop();
  }

  void createDeployment(int replicas) {
    json d = {{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata", {{"name", "web"}}},
              {"spec",
               {{"replicas", replicas},
                {"selector", {{"matchLabels", {{"app", "web"}}}}},
                {"template",
                 {{"metadata", {{"labels", {{"app", "web"}}}}},
                  {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
    ASSERT_TRUE(rest->create(res::kDeployments, "default", d).ok());
  }
  // A running, ready pod requesting 500m cpu and 100Mi memory, started an hour ago.
  void createPod(const std::string& name) {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"image", "busybox"},
                   {"resources", {{"requests", {{"cpu", "500m"}, {"memory", "100Mi"}}}}}}}}}}};
    ASSERT_TRUE(rest->create(res::kPods, "default", p).ok());
    json st = {{"status",
                {{"phase", "Running"},
                 {"startTime", formatRfc3339(now - 1h)},
                 {"conditions",
                  {{{"type", "Ready"},
                    {"status", "True"},
                    {"lastTransitionTime", formatRfc3339(now - 50min)}}}}}}};
    ASSERT_TRUE(rest->patch(res::kPods, "default", name, st, "merge", "status").ok());
  }
  void createHpa(json metrics, int minReplicas = 1, int maxReplicas = 10) {
    json h = {
        {"apiVersion", "autoscaling/v2"},
        {"kind", "HorizontalPodAutoscaler"},
        {"metadata", {{"name", "web"}}},
        {"spec",
         {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
          {"minReplicas", minReplicas},
          {"maxReplicas", maxReplicas},
          {"metrics", metrics}}}};
    auto r = rest->create(res::kHpas, "default", h);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  static json cpuUtilization(int percent) {
    return {{"type", "Resource"},
            {"resource",
             {{"name", "cpu"},
              {"target", {{"type", "Utilization"}, {"averageUtilization", percent}}}}}};
  }
  static json memoryUtilization(int percent) {
    return {{"type", "Resource"},
            {"resource",
             {{"name", "memory"},
              {"target", {{"type", "Utilization"}, {"averageUtilization", percent}}}}}};
  }
  void setSample(const std::string& resource, const std::string& pod, int64_t milli) {
    std::lock_guard lock(metrics.mu);
    metrics.samples[resource][pod] = {milli, now - 10s, 30s};
  }
  template <typename F>
  bool eventually(F f) {
    for (int i = 0; i < 250; ++i) {
      if (f()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  // Waits until the informers see the HPA and `podCount` ready pods, then syncs.
  Status syncWhenCached(size_t podCount) {
    EXPECT_TRUE(eventually([&] {
      auto h = hpas->get("default/web");
      if (!h) return false;
      size_t ready = 0;
      for (const auto& p : pods->list()) ready += isPodReady(p) ? 1 : 0;
      return ready == podCount;
    }));
    Status s = controller->sync("default/web");
    // Let the informer catch our own status write before the next sync reads it.
    auto rv = rest->get(res::kHpas, "default", "web");
    if (rv.ok()) {
      std::string want = (*rv)["metadata"]["resourceVersion"];
      EXPECT_TRUE(eventually([&] {
        auto h = hpas->get("default/web");
        return h && (*h)["metadata"]["resourceVersion"] == want;
      }));
    }
    return s;
  }
  json hpaStatus() { return (*rest->get(res::kHpas, "default", "web"))["status"]; }
  int64_t deploymentReplicas() {
    return (*rest->get(res::kDeployments, "default", "web"))["spec"]["replicas"];
  }
  static json condition(const json& status, const std::string& type) {
    for (const auto& c : status.value("conditions", json::array())) {
      if (c["type"] == type) return c;
    }
    return nullptr;
  }
  std::vector<json> events(const std::string& reason) {
    std::vector<json> out;
    recorder->flush();  // Events are written asynchronously
    auto l = rest->list(res::kEvents, "default");
    if (!l.ok()) return out;
    for (const auto& e : (*l)["items"]) {
      if (e["reason"] == reason) out.push_back(e);
    }
    return out;
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::ApiEventRecorder> recorder;
  std::unique_ptr<client::Informer> hpas, pods;
  FakeMetrics metrics;
  std::unique_ptr<HorizontalPodAutoscalerController> controller;
  WallClock::time_point now = WallClock::time_point(std::chrono::seconds(1'700'000'000));
};

TEST_F(HpaControllerTest, ScalesUpOnCpuWritesStatusAndRecordsAnEvent) {
  createDeployment(2);
  createPod("web-a");
  createPod("web-b");
  setSample("cpu", "web-a", 500);  // 100% of 500m
  setSample("cpu", "web-b", 500);
  createHpa(json::array({cpuUtilization(50)}));
  ASSERT_TRUE(syncWhenCached(2).ok());

  EXPECT_EQ(deploymentReplicas(), 4);
  EXPECT_EQ(metrics.lastSelector, "app=web");
  json st = hpaStatus();
  EXPECT_EQ(st["currentReplicas"], 2);
  EXPECT_EQ(st["desiredReplicas"], 4);
  EXPECT_EQ(st["lastScaleTime"], formatRfc3339(now));
  ASSERT_EQ(st["currentMetrics"].size(), 1u);
  EXPECT_EQ(st["currentMetrics"][0],
            json({{"type", "Resource"},
                  {"resource",
                   {{"name", "cpu"},
                    {"current", {{"averageUtilization", 100}, {"averageValue", "500m"}}}}}}));
  EXPECT_EQ(condition(st, "AbleToScale")["reason"], "SucceededRescale");
  EXPECT_EQ(condition(st, "AbleToScale")["status"], "True");
  EXPECT_EQ(condition(st, "ScalingActive")["reason"], "ValidMetricFound");
  EXPECT_EQ(condition(st, "ScalingActive")["message"],
            "the HPA was able to successfully calculate a replica count from cpu resource "
            "utilization (percentage of request)");
  EXPECT_EQ(condition(st, "ScalingLimited")["status"], "False");
  EXPECT_EQ(condition(st, "ScalingLimited")["reason"], "DesiredWithinRange");

  auto rescales = events("SuccessfulRescale");
  ASSERT_EQ(rescales.size(), 1u);
  EXPECT_EQ(rescales[0]["message"],
            "New size: 4; reason: cpu resource utilization (percentage of request) above target");
  EXPECT_EQ(rescales[0]["type"], "Normal");
  EXPECT_EQ(rescales[0]["involvedObject"]["kind"], "HorizontalPodAutoscaler");
  EXPECT_EQ(rescales[0]["involvedObject"]["name"], "web");

  // kubectl get hpa.
  json row =
      api::tableCells("HorizontalPodAutoscaler", *rest->get(res::kHpas, "default", "web"), now);
  EXPECT_EQ(row[1], "Deployment/web");
  EXPECT_EQ(row[2], "cpu: 100%/50%");
}

TEST_F(HpaControllerTest, PodsMetricFromTheCustomMetricsApi) {
  createDeployment(2);
  createPod("web-a");
  createPod("web-b");
  {
    std::lock_guard lock(metrics.mu);
    metrics.custom["app_requests"]["web-a"] = {2500, now - 10s, 60s};  // 2.5 requests/s
    metrics.custom["app_requests"]["web-b"] = {1500, now - 10s, 60s};
  }
  createHpa(json::array({{{"type", "Pods"},
                          {"pods",
                           {{"metric", {{"name", "app_requests"}}},
                            {"target", {{"type", "AverageValue"}, {"averageValue", "1"}}}}}}}));
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 4);  // ceil(4 requests/s / 1 per pod)
  EXPECT_EQ(metrics.lastSelector, "app=web");
  json st = hpaStatus();
  EXPECT_EQ(
      st["currentMetrics"][0],
      json({{"type", "Pods"},
            {"pods",
             {{"metric", {{"name", "app_requests"}}}, {"current", {{"averageValue", "2"}}}}}}));
  EXPECT_EQ(condition(st, "ScalingActive")["message"],
            "the HPA was able to successfully calculate a replica count from pods metric "
            "app_requests");
  // The metric gone: the HPA says so and keeps the size.
  {
    std::lock_guard lock(metrics.mu);
    metrics.custom.clear();
  }
  now += 1min;
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 4);
  st = hpaStatus();
  EXPECT_EQ(condition(st, "ScalingActive")["status"], "False");
  EXPECT_EQ(condition(st, "ScalingActive")["reason"], "FailedGetPodsMetric");
  EXPECT_EQ(events("FailedGetPodsMetric").size(), 1u);
}

TEST_F(HpaControllerTest, ObjectMetricValueAndAverageValueTargets) {
  createDeployment(2);
  createPod("web-a");
  createPod("web-b");
  const json svc = {{"apiVersion", "v1"}, {"kind", "Service"}, {"name", "web"}};
  {
    std::lock_guard lock(metrics.mu);
    metrics.objects["queue_length"] = {20'000, now - 10s, 60s};  // 20
  }
  // Value 10: usage/target = 2 -> 2 x 2 ready pods.
  createHpa(json::array({{{"type", "Object"},
                          {"object",
                           {{"metric", {{"name", "queue_length"}}},
                            {"describedObject", svc},
                            {"target", {{"type", "Value"}, {"value", "10"}}}}}}}));
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 4);
  EXPECT_EQ(metrics.lastObject, svc);
  json st = hpaStatus();
  EXPECT_EQ(st["currentMetrics"][0]["object"]["current"], json({{"value", "20"}}));
  EXPECT_EQ(st["currentMetrics"][0]["object"]["describedObject"], svc);
  // AverageValue 6 per pod: ceil(30 / 6) = 5.
  {
    std::lock_guard lock(metrics.mu);
    metrics.objects["queue_length"].milliValue = 30'000;
  }
  ASSERT_TRUE(rest->remove(res::kHpas, "default", "web").ok());
  createHpa(json::array({{{"type", "Object"},
                          {"object",
                           {{"metric", {{"name", "queue_length"}}},
                            {"describedObject", svc},
                            {"target", {{"type", "AverageValue"}, {"averageValue", "6"}}}}}}}),
            1, 20);
  const json created = *rest->get(res::kHpas, "default", "web");
  EXPECT_TRUE(eventually([&] {
    auto h = hpas->get("default/web");
    return h && (*h)["metadata"]["uid"] == created["metadata"]["uid"];
  }));
  now += 10min;
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 5);
  EXPECT_EQ(hpaStatus()["currentMetrics"][0]["object"]["current"],
            json({{"averageValue", "7500m"}}));  // 30 over the 4 current replicas
}

TEST_F(HpaControllerTest, TwoMetricsStabilizedScaleDownThenRescale) {
  createDeployment(2);
  createPod("web-a");
  createPod("web-b");
  setSample("cpu", "web-a", 100);  // 20% of 500m
  setSample("cpu", "web-b", 100);
  setSample("memory", "web-a", 30LL * 1024 * 1024 * 1000);  // 30% of 100Mi
  setSample("memory", "web-b", 30LL * 1024 * 1024 * 1000);
  createHpa(json::array({cpuUtilization(50), memoryUtilization(70)}));
  ASSERT_TRUE(syncWhenCached(2).ok());

  EXPECT_EQ(deploymentReplicas(), 2);
  json st = hpaStatus();
  EXPECT_EQ(st["desiredReplicas"], 2);
  EXPECT_FALSE(st.contains("lastScaleTime"));
  EXPECT_EQ(condition(st, "AbleToScale")["reason"], "ScaleDownStabilized");
  json row =
      api::tableCells("HorizontalPodAutoscaler", *rest->get(res::kHpas, "default", "web"), now);
  EXPECT_EQ(row[2], "cpu: 20%/50%, memory: 30%/70%");
  EXPECT_TRUE(events("SuccessfulRescale").empty());

  now += 301s;
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 1);
  st = hpaStatus();
  EXPECT_EQ(st["desiredReplicas"], 1);
  EXPECT_EQ(st["lastScaleTime"], formatRfc3339(now));
  auto rescales = events("SuccessfulRescale");
  ASSERT_EQ(rescales.size(), 1u);
  EXPECT_EQ(rescales[0]["message"], "New size: 1; reason: All metrics below target");
}

TEST_F(HpaControllerTest, MissingMetricsDisableScaling) {
  createDeployment(2);
  createPod("web-a");
  createPod("web-b");
  metrics.failing = true;
  createHpa(json::array({cpuUtilization(50)}));
  ASSERT_TRUE(syncWhenCached(2).ok());
  EXPECT_EQ(deploymentReplicas(), 2);
  json st = hpaStatus();
  EXPECT_EQ(st["currentReplicas"], 2);
  EXPECT_EQ(condition(st, "AbleToScale")["reason"], "SucceededGetScale");
  EXPECT_EQ(condition(st, "ScalingActive")["status"], "False");
  EXPECT_EQ(condition(st, "ScalingActive")["reason"], "FailedGetResourceMetric");
  auto warnings = events("FailedGetResourceMetric");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]["type"], "Warning");
  json row =
      api::tableCells("HorizontalPodAutoscaler", *rest->get(res::kHpas, "default", "web"), now);
  EXPECT_EQ(row[2], "cpu: <unknown>/50%");
  // The same failure again bumps the Event's count instead of adding one.
  ASSERT_TRUE(syncWhenCached(2).ok());
  warnings = events("FailedGetResourceMetric");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]["count"], 2);
}

TEST_F(HpaControllerTest, MinReplicasAndAMissingTarget) {
  createDeployment(1);
  createPod("web-a");
  setSample("cpu", "web-a", 100);
  createHpa(json::array({cpuUtilization(50)}), 3, 5);
  ASSERT_TRUE(syncWhenCached(1).ok());
  EXPECT_EQ(deploymentReplicas(), 3);
  auto rescales = events("SuccessfulRescale");
  ASSERT_EQ(rescales.size(), 1u);
  EXPECT_EQ(rescales[0]["message"],
            "New size: 3; reason: Current number of replicas below Spec.MinReplicas");

  ASSERT_TRUE(rest->remove(res::kDeployments, "default", "web").ok());
  ASSERT_TRUE(syncWhenCached(1).ok());
  json st = hpaStatus();
  EXPECT_EQ(condition(st, "AbleToScale")["status"], "False");
  EXPECT_EQ(condition(st, "AbleToScale")["reason"], "FailedGetScale");
}

}  // namespace
}  // namespace minik8s::controllers::hpa
