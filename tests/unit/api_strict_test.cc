#include <gtest/gtest.h>

#include "api/strict_decoding.h"

namespace minik8s::api {
namespace {

const ResourceInfo& resource(const std::string& group, const std::string& version,
                             const std::string& kind) {
  const auto* r = Scheme::builtin().byKind(group, version, kind);
  EXPECT_NE(r, nullptr) << kind;
  return *r;
}

const ResourceInfo& deploymentInfo() { return resource("apps", "v1", "Deployment"); }

json validDeployment() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web", "anything.io/goes": "x"},
                 "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                 "creationTimestamp": null},
    "spec": {
      "replicas": 3,
      "selector": {"matchLabels": {"app": "web"}},
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
      "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
          "containers": [{
            "name": "web", "image": "nginx", "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "resources": {"limits": {"cpu": "500m", "memory": 128974848}, "requests": {"cpu": 0.25}},
            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
            "livenessProbe": {"tcpSocket": {"port": 80}},
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]
          }],
          "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}],
          "nodeSelector": {"disk": "ssd"},
          "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
        }
      }
    },
    "status": {"replicas": 1}
  })");
}

TEST(StrictDecodingTest, ValidObjectHasNoFindings) {
  auto f = checkAgainstSchema(deploymentInfo(), validDeployment());
  EXPECT_TRUE(f.unknownFields.empty()) << json(f.unknownFields).dump();
  EXPECT_TRUE(f.typeErrors.empty()) << json(f.typeErrors).dump();
  EXPECT_TRUE(f.empty());
}

TEST(StrictDecodingTest, UnknownFieldsAsDottedPathsWithIndexes) {
  json d = validDeployment();
  d["spec"]["foo"] = 1;
  d["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always";
  d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["contianerPort"] = 8080;
  d["spec"]["template"]["spec"]["volumes"][0]["configMap"]["nmae"] = "x";
  d["metadata"]["labelz"] = json::object();
  d["bogus"] = true;
  auto f = checkAgainstSchema(deploymentInfo(), d);
  EXPECT_EQ(f.unknownFields,
            (std::vector<std::string>{"bogus", "metadata.labelz", "spec.foo",
                                      "spec.template.spec.containers[0].imagePullPolcy",
                                      "spec.template.spec.containers[0].ports[0].contianerPort",
                                      "spec.template.spec.volumes[0].configMap.nmae"}));
  EXPECT_TRUE(f.typeErrors.empty());
}

TEST(StrictDecodingTest, MapsAcceptAnyKey) {
  auto cm = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c",
      "labels":{"a.b/c":"1","x":""},"annotations":{"whatever":"{\"a\":1}"}},
      "data":{"any key":"v","k.txt":"line\n"},"binaryData":{"b":"AAEC"}})");
  EXPECT_TRUE(checkAgainstSchema(resource("", "v1", "ConfigMap"), cm).empty());
  // ConfigMap has no status, yet status is a known field of every kind.
  cm["status"] = {{"x", 1}};
  EXPECT_TRUE(checkAgainstSchema(resource("", "v1", "ConfigMap"), cm).empty());
}

TEST(StrictDecodingTest, PreserveUnknownFieldsAcceptsAnything) {
  auto node = json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",
      "managedFields":[{"manager":"kubectl","fieldsType":"FieldsV1",
                        "fieldsV1":{"f:metadata":{"f:labels":{".":{}}}}}]},
      "status":{"features":{"anything":{"nested":[1,2]}}}})");
  auto f = checkAgainstSchema(resource("", "v1", "Node"), node);
  EXPECT_TRUE(f.empty()) << json(f.unknownFields).dump() << json(f.typeErrors).dump();
}

TEST(StrictDecodingTest, IntOrStringAcceptsBothButNotOtherTypes) {
  json d = validDeployment();
  auto& ru = d["spec"]["strategy"]["rollingUpdate"];
  ru["maxSurge"] = 1;
  ru["maxUnavailable"] = "10%";
  EXPECT_TRUE(checkAgainstSchema(deploymentInfo(), d).empty());
  ru["maxSurge"] = true;
  auto f = checkAgainstSchema(deploymentInfo(), d);
  ASSERT_EQ(f.typeErrors.size(), 1u);
  EXPECT_EQ(f.typeErrors[0],
            "json: cannot unmarshal bool into Go struct field "
            "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type "
            "intstr.IntOrString");
}

TEST(StrictDecodingTest, TypeErrorsInGoWording) {
  json d = validDeployment();
  d["spec"]["replicas"] = "3";
  auto f = checkAgainstSchema(deploymentInfo(), d);
  ASSERT_EQ(f.typeErrors.size(), 1u);
  EXPECT_EQ(f.typeErrors[0],
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of "
            "type int32");

  d = validDeployment();
  d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "80";
  d["spec"]["template"]["spec"]["containers"][0]["image"] = 5;
  f = checkAgainstSchema(deploymentInfo(), d);
  EXPECT_EQ(f.typeErrors,
            (std::vector<std::string>{
                "json: cannot unmarshal number into Go struct field "
                "Container.spec.template.spec.containers.image of type string",
                "json: cannot unmarshal string into Go struct field "
                "ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"}));

  d = validDeployment();
  d["spec"] = "nope";
  f = checkAgainstSchema(deploymentInfo(), d);
  EXPECT_EQ(f.typeErrors,
            (std::vector<std::string>{"json: cannot unmarshal string into Go struct field "
                                      "Deployment.spec of type v1.DeploymentSpec"}));

  d = validDeployment();
  d["metadata"]["labels"]["n"] = 1;
  d["spec"]["template"]["spec"]["containers"] = json::object();
  f = checkAgainstSchema(deploymentInfo(), d);
  EXPECT_EQ(f.typeErrors,
            (std::vector<std::string>{
                "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
                "type string",
                "json: cannot unmarshal object into Go struct field "
                "PodSpec.spec.template.spec.containers of type []v1.Container"}));
}

TEST(StrictDecodingTest, IntegerRangesAndFractions) {
  json d = validDeployment();
  d["spec"]["replicas"] = 2.0;
  EXPECT_TRUE(checkAgainstSchema(deploymentInfo(), d).empty());
  d["spec"]["replicas"] = 1.5;
  auto f = checkAgainstSchema(deploymentInfo(), d);
  ASSERT_EQ(f.typeErrors.size(), 1u);
  EXPECT_EQ(
      f.typeErrors[0],
      "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of "
      "type int32");
  d["spec"]["replicas"] = 3000000000LL;
  EXPECT_EQ(checkAgainstSchema(deploymentInfo(), d).typeErrors.size(), 1u);
  d["spec"]["revisionHistoryLimit"] = nullptr;
  d["spec"]["replicas"] = 2;
  d["spec"]["progressDeadlineSeconds"] = -1;
  EXPECT_TRUE(checkAgainstSchema(deploymentInfo(), d).empty());
}

TEST(StrictDecodingTest, QuantitiesAcceptNumbersAndStrings) {
  json d = validDeployment();
  auto& res = d["spec"]["template"]["spec"]["containers"][0]["resources"];
  res["limits"]["cpu"] = 2;
  res["requests"]["memory"] = "1Gi";
  EXPECT_TRUE(checkAgainstSchema(deploymentInfo(), d).empty());
  res["limits"]["cpu"] = json::array();
  auto f = checkAgainstSchema(deploymentInfo(), d);
  ASSERT_EQ(f.typeErrors.size(), 1u);
  EXPECT_NE(f.typeErrors[0].find("of type resource.Quantity"), std::string::npos);
}

TEST(StrictDecodingTest, NullAcceptedForOptionalFields) {
  json d = validDeployment();
  d["spec"]["strategy"] = nullptr;
  d["spec"]["template"]["spec"]["containers"][0]["env"] = nullptr;
  d["metadata"]["labels"] = nullptr;
  EXPECT_TRUE(checkAgainstSchema(deploymentInfo(), d).empty());
}

TEST(StrictDecodingTest, OtherKinds) {
  auto hpa = json::parse(R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
      "metadata":{"name":"h"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web",
      "apiVersion":"apps/v1"},"minReplicas":1,"maxReplicas":5,"targetCPUUtilizationPercentage":50}})");
  EXPECT_TRUE(
      checkAgainstSchema(resource("autoscaling", "v1", "HorizontalPodAutoscaler"), hpa).empty());
  // targetCPUUtilizationPercentage is a v1 field only.
  auto f = checkAgainstSchema(resource("autoscaling", "v2", "HorizontalPodAutoscaler"), hpa);
  EXPECT_EQ(f.unknownFields, (std::vector<std::string>{"spec.targetCPUUtilizationPercentage"}));

  auto dns = json::parse(R"({"apiVersion":"minik8s.io/v1","kind":"Dns","metadata":{"name":"d"},
      "spec":{"host":"a.example.com","paths":[{"path":"/","serviceName":"web","servicePort":80,
      "extra":1}]}})");
  f = checkAgainstSchema(resource("minik8s.io", "v1", "Dns"), dns);
  EXPECT_EQ(f.unknownFields, (std::vector<std::string>{"spec.paths[0].extra"}));

  auto svc = json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
      "spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http"}],"tpye":"x"}})");
  f = checkAgainstSchema(resource("", "v1", "Service"), svc);
  EXPECT_EQ(f.unknownFields, (std::vector<std::string>{"spec.tpye"}));
}

}  // namespace
}  // namespace minik8s::api
