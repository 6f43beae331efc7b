#include <gtest/gtest.h>

#include "api/conversion.h"

namespace minik8s::api {
namespace {

json hpaV2() {
  return json::parse(R"({
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
    "spec": {
      "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
      "minReplicas": 1, "maxReplicas": 10,
      "metrics": [
        {"type": "Resource", "resource": {"name": "cpu",
          "target": {"type": "Utilization", "averageUtilization": 60}}},
        {"type": "Resource", "resource": {"name": "memory",
          "target": {"type": "AverageValue", "averageValue": "100Mi"}}}
      ],
      "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}
    },
    "status": {
      "currentReplicas": 2, "desiredReplicas": 3,
      "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu",
          "current": {"averageUtilization": 75, "averageValue": "150m"}}},
        {"type": "Resource", "resource": {"name": "memory",
          "current": {"averageValue": "90Mi"}}}
      ],
      "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]
    }
  })");
}

TEST(ConversionTest, HpaV2ToV1) {
  auto v1 = convertHpa(hpaV2(), "autoscaling/v1");
  ASSERT_TRUE(v1.ok()) << v1.status().toString();
  const json& o = *v1;
  EXPECT_EQ(o["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(o["kind"], "HorizontalPodAutoscaler");
  EXPECT_EQ(o["spec"]["targetCPUUtilizationPercentage"], 60);
  EXPECT_FALSE(o["spec"].contains("metrics"));
  EXPECT_FALSE(o["spec"].contains("behavior"));
  EXPECT_EQ(o["spec"]["maxReplicas"], 10);
  EXPECT_EQ(o["status"]["currentCPUUtilizationPercentage"], 75);
  EXPECT_EQ(o["status"]["desiredReplicas"], 3);
  EXPECT_FALSE(o["status"].contains("currentMetrics"));
  EXPECT_FALSE(o["status"].contains("conditions"));
  const json& ann = o["metadata"]["annotations"];
  EXPECT_EQ(ann["team"], "a");
  EXPECT_EQ(json::parse(ann["autoscaling.alpha.kubernetes.io/metrics"].get<std::string>()),
            json::array({hpaV2()["spec"]["metrics"][1]}));
  EXPECT_EQ(json::parse(ann["autoscaling.alpha.kubernetes.io/behavior"].get<std::string>()),
            hpaV2()["spec"]["behavior"]);
  EXPECT_EQ(json::parse(ann["autoscaling.alpha.kubernetes.io/current-metrics"].get<std::string>()),
            json::array({hpaV2()["status"]["currentMetrics"][1]}));
  EXPECT_EQ(json::parse(ann["autoscaling.alpha.kubernetes.io/conditions"].get<std::string>()),
            hpaV2()["status"]["conditions"]);
}

TEST(ConversionTest, HpaRoundTripsV2V1V2) {
  auto v1 = convertHpa(hpaV2(), "autoscaling/v1");
  ASSERT_TRUE(v1.ok());
  auto v2 = convertHpa(*v1, "autoscaling/v2");
  ASSERT_TRUE(v2.ok());
  json want = hpaV2();
  // The CPU current metric of v1 only knows utilization.
  want["status"]["currentMetrics"][0]["resource"]["current"].erase("averageValue");
  EXPECT_EQ(*v2, want) << v2->dump(2);
}

TEST(ConversionTest, HpaV1ToV2AndBack) {
  json v1 = json::parse(R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
      "metadata":{"name":"h"},
      "spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":4,
              "targetCPUUtilizationPercentage":50},
      "status":{"currentReplicas":1,"desiredReplicas":1,"currentCPUUtilizationPercentage":20}})");
  auto v2 = convertHpa(v1, "autoscaling/v2");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ((*v2)["apiVersion"], "autoscaling/v2");
  EXPECT_EQ((*v2)["spec"]["metrics"], json::parse(R"([{"type":"Resource","resource":{"name":"cpu",
                "target":{"type":"Utilization","averageUtilization":50}}}])"));
  EXPECT_EQ((*v2)["status"]["currentMetrics"],
            json::parse(R"([{"type":"Resource","resource":{"name":"cpu",
                "current":{"averageUtilization":20}}}])"));
  EXPECT_FALSE((*v2)["spec"].contains("targetCPUUtilizationPercentage"));
  EXPECT_FALSE((*v2)["metadata"].contains("annotations"));
  auto back = convertHpa(*v2, "autoscaling/v1");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v1);
}

TEST(ConversionTest, HpaWithoutCpuTargetHasNoMetrics) {
  json v1 = json::parse(R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
      "metadata":{"name":"h"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"w"},
      "maxReplicas":2}})");
  auto v2 = convertHpa(v1, "autoscaling/v2");
  ASSERT_TRUE(v2.ok());
  EXPECT_FALSE((*v2)["spec"].contains("metrics"));
  EXPECT_EQ((*v2)["spec"]["maxReplicas"], 2);
}

TEST(ConversionTest, HpaWithoutApiVersionIsRecognisedByFields) {
  json v1 = {{"kind", "HorizontalPodAutoscaler"},
             {"spec", {{"maxReplicas", 3}, {"targetCPUUtilizationPercentage", 70}}}};
  auto v2 = convertHpa(v1, "autoscaling/v2");
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ((*v2)["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"], 70);
}

TEST(ConversionTest, HpaListConvertsItems) {
  json list = {{"apiVersion", "autoscaling/v2"},
               {"kind", "HorizontalPodAutoscalerList"},
               {"metadata", {{"resourceVersion", "7"}}},
               {"items", json::array({hpaV2()})}};
  list["items"][0].erase("apiVersion");
  auto v1 = convertHpa(list, "autoscaling/v1");
  ASSERT_TRUE(v1.ok()) << v1.status().toString();
  EXPECT_EQ((*v1)["apiVersion"], "autoscaling/v1");
  EXPECT_EQ((*v1)["metadata"]["resourceVersion"], "7");
  ASSERT_EQ((*v1)["items"].size(), 1u);
  EXPECT_EQ((*v1)["items"][0]["spec"]["targetCPUUtilizationPercentage"], 60);
}

TEST(ConversionTest, HpaRejectsUnknownVersions) {
  EXPECT_EQ(convertHpa(hpaV2(), "autoscaling/v2beta2").status().code(), 400);
  json odd = hpaV2();
  odd["apiVersion"] = "autoscaling/v9";
  EXPECT_FALSE(convertHpa(odd, "autoscaling/v1").ok());
}

TEST(ConversionTest, ConvertToVersionDispatches) {
  const auto& scheme = Scheme::builtin();
  auto v1 = convertToVersion(scheme, hpaV2(), "autoscaling/v1");
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ((*v1)["spec"]["targetCPUUtilizationPercentage"], 60);

  json deploy = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"spec", {{"replicas", 2}}}};
  auto same = convertToVersion(scheme, deploy, "apps/v1");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, deploy);

  json pod = {{"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  auto labelled = convertToVersion(scheme, pod, "v1");
  ASSERT_TRUE(labelled.ok());
  EXPECT_EQ((*labelled)["apiVersion"], "v1");
  EXPECT_EQ((*labelled)["kind"], "Pod");

  EXPECT_FALSE(convertToVersion(scheme, deploy, "apps/v2").ok());
  EXPECT_FALSE(convertToVersion(scheme, pod, "apps/v1").ok());
  EXPECT_FALSE(convertToVersion(scheme, json::array(), "v1").ok());
}

}  // namespace
}  // namespace minik8s::api
