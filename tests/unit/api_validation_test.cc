#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "api/defaults.h"
#include "api/quantity.h"
#include "api/scheme.h"
#include "api/validation.h"
#include "validation_messages.h"

namespace minik8s::api {
namespace {

const ResourceInfo& info(const std::string& kind, const std::string& version = "v1") {
  static const std::vector<ResourceInfo> all = Scheme::builtin().resources();
  for (const auto& r : all) {
    if (r.kind == kind && r.version == version) return r;
  }
  ADD_FAILURE() << "no resource " << kind;
  return all.front();
}

std::vector<std::string> render(const std::vector<Cause>& causes) {
  std::vector<std::string> out;
  for (const auto& c : causes) out.push_back(c.reason + " " + c.field + ": " + c.message);
  return out;
}

// Validates `obj` as the server does: defaults first.
std::vector<std::string> check(const std::string& kind, json obj, const json* old = nullptr,
                               const std::string& version = "v1") {
  const ResourceInfo& r = info(kind, version);
  applyDefaults(r, obj);
  return render(validate(r, obj, old));
}

// Validates without defaulting, to reach states defaulting would repair.
std::vector<std::string> checkRaw(const std::string& kind, const json& obj,
                                  const json* old = nullptr) {
  return render(validate(info(kind), obj, old));
}

using Errors = std::vector<std::string>;

json pod() {
  return R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
    "spec":{"containers":[{"name":"web","image":"nginx:1.25",
      "ports":[{"name":"http","containerPort":80}],
      "resources":{"requests":{"cpu":"100m"},"limits":{"cpu":"200m","memory":"64Mi"}},
      "volumeMounts":[{"name":"data","mountPath":"/data"}],
      "livenessProbe":{"httpGet":{"port":"http"}},
      "env":[{"name":"MODE","value":"prod"}]}],
      "volumes":[{"name":"data","emptyDir":{}}]}})"_json;
}

json deployment() {
  return R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"web","image":"nginx"}]}}}})"_json;
}

json service() {
  return R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080}]}})"_json;
}

json job() {
  return R"({"apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"pi","namespace":"default","uid":"0b7c-1"},
    "spec":{"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"pi","image":"perl:5.34"}]}}}})"_json;
}

json hpa() {
  return R"({"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
      "minReplicas":2,"maxReplicas":5}})"_json;
}

json dns() {
  return R"({"apiVersion":"minik8s.io/v1","kind":"Dns","metadata":{"name":"app","namespace":"default"},
    "spec":{"host":"app.example.com","paths":[{"path":"/","serviceName":"web","servicePort":80},
      {"path":"/api","serviceName":"api","servicePort":8080}]}})"_json;
}

// Every valid sample object of every kind, with its kind and version.
std::vector<std::tuple<std::string, std::string, json>> samples() {
  return {
      {"Pod", "v1", pod()},
      {"Deployment", "v1", deployment()},
      {"ReplicaSet", "v1",
       [] {
         json rs = deployment();
         rs["kind"] = "ReplicaSet";
         return rs;
       }()},
      {"Service", "v1", service()},
      {"Job", "v1", job()},
      {"HorizontalPodAutoscaler", "v2", hpa()},
      {"HorizontalPodAutoscaler", "v1",
       R"({"metadata":{"name":"h","namespace":"d"},"spec":{"scaleTargetRef":{"kind":"Deployment",
         "name":"web"},"maxReplicas":3,"targetCPUUtilizationPercentage":50}})"_json},
      {"ConfigMap", "v1",
       R"({"metadata":{"name":"cfg","namespace":"d"},"data":{"a.conf":"x=1"},
         "binaryData":{"b.bin":"AAEC"}})"_json},
      {"Secret", "v1",
       R"({"metadata":{"name":"s","namespace":"d"},"data":{"password":"cGFzcw=="},
         "stringData":{"user":"admin"}})"_json},
      {"Namespace", "v1", R"({"metadata":{"name":"team-a"}})"_json},
      {"Node", "v1",
       R"({"metadata":{"name":"node-1","labels":{"kubernetes.io/hostname":"node-1"}},
         "spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"],
           "taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]},
         "status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"110"}}})"_json},
      {"Event", "v1",
       R"({"metadata":{"name":"web.1","namespace":"default"},"reason":"Started",
         "involvedObject":{"kind":"Pod","name":"web","namespace":"default"},"type":"Normal",
         "count":1})"_json},
      {"Endpoints", "v1",
       R"({"metadata":{"name":"web","namespace":"default"},"subsets":[{"addresses":[
         {"ip":"10.244.1.5","nodeName":"node-1"}],"ports":[{"port":8080}]}]})"_json},
      {"EndpointSlice", "v1",
       R"({"metadata":{"name":"web-abc","namespace":"default"},"addressType":"IPv4",
         "endpoints":[{"addresses":["10.244.1.5"],"conditions":{"ready":true}}],
         "ports":[{"name":"http","port":8080}]})"_json},
      {"Lease", "v1",
       R"({"metadata":{"name":"kube-scheduler","namespace":"kube-system"},
         "spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}})"_json},
      {"Dns", "v1", dns()},
      {"ServiceAccount", "v1", R"({"metadata":{"name":"default","namespace":"d"}})"_json},
      {"PersistentVolume", "v1",
       R"({"metadata":{"name":"local-1"},"spec":{"capacity":{"storage":"10Gi"},
         "accessModes":["ReadWriteOnce"],"storageClassName":"local","local":{"path":"/mnt/d1"},
         "claimRef":{"namespace":"default","name":"data"},
         "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[
           {"key":"kubernetes.io/hostname","operator":"In","values":["node-1"]}]}]}}}})"_json},
      {"PersistentVolume", "v1",
       R"({"metadata":{"name":"csi-1"},"spec":{"capacity":{"storage":"1Gi"},
         "accessModes":["ReadWriteOncePod"],"csi":{"driver":"hostpath.csi.k8s.io",
           "volumeHandle":"v-1","nodePublishSecretRef":{"name":"s","namespace":"d"}}}})"_json},
      {"PersistentVolumeClaim", "v1",
       R"({"metadata":{"name":"data","namespace":"default"},"spec":{
         "accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"8Gi"}},
         "storageClassName":"standard","selector":{"matchLabels":{"tier":"db"}}}})"_json},
      {"StorageClass", "v1",
       R"({"metadata":{"name":"standard"},"provisioner":"hostpath.csi.k8s.io",
         "parameters":{"type":"fast"},"allowVolumeExpansion":true,
         "allowedTopologies":[{"matchLabelExpressions":[
           {"key":"topology.kubernetes.io/zone","values":["a","b"]}]}]})"_json},
      {"CSIDriver", "v1",
       R"({"metadata":{"name":"hostpath.csi.k8s.io"},"spec":{"attachRequired":false,
         "tokenRequests":[{"audience":"vault","expirationSeconds":3600}],
         "volumeLifecycleModes":["Persistent","Ephemeral"]}})"_json},
  };
}

TEST(ValidationTest, SamplesOfEveryKindAreValid) {
  for (const auto& [kind, version, obj] : samples()) {
    EXPECT_EQ(check(kind, obj, nullptr, version), Errors{}) << kind << " " << version;
    json stored = obj;
    applyDefaults(info(kind, version), stored);
    EXPECT_EQ(check(kind, obj, &stored, version), Errors{}) << kind << " update";
  }
}

// ---- metadata ----

using testing::kSubdomainMsg;
const std::string kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

TEST(ValidationTest, ObjectNames) {
  json p = pod();
  p["metadata"]["name"] = "Web_1";
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueInvalid metadata.name: Invalid value: \"Web_1\": " + kSubdomainMsg});
  p["metadata"]["name"] = std::string(254, 'a');
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueInvalid metadata.name: Invalid value: \"" + std::string(254, 'a') +
                   "\": must be no more than 253 characters"});
  EXPECT_EQ(check("Namespace", R"({"metadata":{"name":"Team"}})"_json),
            Errors{"FieldValueInvalid metadata.name: Invalid value: \"Team\": " + kLabelMsg});
  EXPECT_EQ(
      check("Namespace", R"({"metadata":{"name":"a.b"}})"_json),
      Errors{"FieldValueInvalid metadata.name: Invalid value: \"a.b\": must not contain dots"});
  json s = service();
  s["metadata"]["name"] = "1web";
  EXPECT_EQ(check("Service", s),
            Errors{"FieldValueInvalid metadata.name: Invalid value: \"1web\": a DNS-1035 label "
                   "must consist of lower case alphanumeric characters or '-', start with an "
                   "alphabetic character, and end with an alphanumeric character (e.g. "
                   "'my-name',  or 'abc-123', regex used for validation is "
                   "'[a-z]([-a-z0-9]*[a-z0-9])?')"});
}

TEST(ValidationTest, GenerateNameStandsInForName) {
  json p = pod();
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "web-";
  EXPECT_EQ(check("Pod", p), Errors{});
  p["metadata"].erase("generateName");
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueRequired metadata.name: Required value: name or generateName is "
                   "required"});
  p["metadata"]["generateName"] = "Web-";
  EXPECT_EQ(check("Pod", p).size(), 1u);
}

TEST(ValidationTest, NamespaceScope) {
  json p = pod();
  p["metadata"].erase("namespace");
  EXPECT_EQ(check("Pod", p), Errors{"FieldValueRequired metadata.namespace: Required value"});
  EXPECT_EQ(check("Node", R"({"metadata":{"name":"n","namespace":"default"}})"_json),
            Errors{"FieldValueForbidden metadata.namespace: Forbidden: not allowed on this type"});
}

TEST(ValidationTest, LabelsAndAnnotations) {
  json p = pod();
  p["metadata"]["labels"] = {{"bad key", "ok"}, {"app", "-web"}};
  EXPECT_EQ(
      check("Pod", p),
      (Errors{
          "FieldValueInvalid metadata.labels: Invalid value: \"-web\": a valid label must be "
          "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
          "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
          "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
          "FieldValueInvalid metadata.labels: Invalid value: \"bad key\": name part must "
          "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
          "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}));
  p["metadata"]["labels"] = {{"example.com/app", std::string(64, 'a')}};
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueInvalid metadata.labels: Invalid value: \"" + std::string(64, 'a') +
                   "\": must be no more than 63 characters"});
  p["metadata"]["labels"] = {{"Example.com/app", "x"}};
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueInvalid metadata.labels: Invalid value: \"Example.com/app\": prefix "
                   "part " +
                   kSubdomainMsg});
  p = pod();
  p["metadata"]["annotations"] = {{"big", std::string(256 * 1024, 'x')}};
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueTooLong metadata.annotations: Too long: may not be more than "
                   "262144 bytes"});
  p["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  EXPECT_EQ(check("Pod", p), Errors{});
}

TEST(ValidationTest, MetadataImmutableOnUpdate) {
  json old = deployment();
  old["metadata"]["uid"] = "u-1";
  json now = old;
  now["metadata"]["name"] = "other";
  now["metadata"]["uid"] = "u-2";
  EXPECT_EQ(check("Deployment", now, &old),
            (Errors{"FieldValueInvalid metadata.name: Invalid value: \"other\": field is immutable",
                    "FieldValueInvalid metadata.uid: Invalid value: \"u-2\": field is immutable"}));
  now = old;
  now["metadata"].erase("uid");  // left out: the stored one is kept
  EXPECT_EQ(check("Deployment", now, &old), Errors{});
}

// ---- Pod ----

TEST(ValidationTest, PodContainersRequiredAndNamesUnique) {
  json p = pod();
  p["spec"]["containers"] = json::array();
  EXPECT_EQ(check("Pod", p), Errors{"FieldValueRequired spec.containers: Required value"});
  p = pod();
  p["spec"]["initContainers"] = R"([{"name":"web","image":"busybox"}])"_json;
  EXPECT_EQ(check("Pod", p),
            Errors{"FieldValueDuplicate spec.initContainers[0].name: Duplicate value: \"web\""});
  p = pod();
  p["spec"]["containers"][0]["name"] = "Web";
  p["spec"]["containers"][0].erase("image");
  EXPECT_EQ(
      check("Pod", p),
      (Errors{"FieldValueInvalid spec.containers[0].name: Invalid value: \"Web\": " + kLabelMsg,
              "FieldValueRequired spec.containers[0].image: Required value"}));
}

TEST(ValidationTest, PodPorts) {
  json p = pod();
  p["spec"]["containers"][0]["ports"] =
      R"([{"containerPort":70000},{"containerPort":53,"protocol":"HTTP","hostPort":-1},
          {"containerPort":81,"name":"http_2"}])"_json;
  EXPECT_EQ(
      check("Pod", p),
      (Errors{"FieldValueInvalid spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
              "must be between 1 and 65535, inclusive",
              "FieldValueInvalid spec.containers[0].ports[1].hostPort: Invalid value: -1: must be "
              "between 1 and 65535, inclusive",
              "FieldValueNotSupported spec.containers[0].ports[1].protocol: Unsupported value: "
              "\"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
              "FieldValueInvalid spec.containers[0].ports[2].name: Invalid value: \"http_2\": must "
              "contain only alphanumeric characters (a-z, 0-9), and hyphens (-)"}));
}

TEST(ValidationTest, PodPolicies) {
  json p = pod();
  p["spec"]["restartPolicy"] = "Sometimes";
  p["spec"]["containers"][0]["imagePullPolicy"] = "Maybe";
  EXPECT_EQ(check("Pod", p),
            (Errors{"FieldValueNotSupported spec.containers[0].imagePullPolicy: Unsupported "
                    "value: \"Maybe\": supported values: \"Always\", \"IfNotPresent\", \"Never\"",
                    "FieldValueNotSupported spec.restartPolicy: Unsupported value: \"Sometimes\": "
                    "supported values: \"Always\", \"OnFailure\", \"Never\""}));
}

TEST(ValidationTest, PodEnv) {
  json p = pod();
  p["spec"]["containers"][0]["env"] =
      R"([{"name":"1A","value":"x"},{"value":"y"},{"name":"B","value":"v",
          "valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}])"_json;
  EXPECT_EQ(
      check("Pod", p),
      (Errors{"FieldValueInvalid spec.containers[0].env[0].name: Invalid value: \"1A\": a valid "
              "environment variable name must consist of alphabetic characters, digits, '_', '-', "
              "or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  "
              "or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
              "FieldValueRequired spec.containers[0].env[1].name: Required value",
              "FieldValueInvalid spec.containers[0].env[2].valueFrom: Invalid value: \"\": may not "
              "be specified when `value` is not empty"}));
}

TEST(ValidationTest, PodVolumes) {
  json p = pod();
  p["spec"]["volumes"] =
      R"([{"name":"data","emptyDir":{}},{"name":"data","emptyDir":{},"configMap":{"name":"c"}},
          {"name":"empty"}])"_json;
  p["spec"]["containers"][0]["volumeMounts"] =
      R"([{"name":"nope","mountPath":"/a"},{"name":"data","mountPath":"/a"}])"_json;
  EXPECT_EQ(
      checkRaw("Pod", p),
      (Errors{"FieldValueDuplicate spec.volumes[1].name: Duplicate value: \"data\"",
              "FieldValueForbidden spec.volumes[1].configMap: Forbidden: may not specify "
              "more than 1 volume type",
              "FieldValueRequired spec.volumes[2]: Required value: must specify a volume type",
              "FieldValueRequired spec.containers[0].imagePullPolicy: Required value",
              "FieldValueRequired spec.containers[0].ports[0].protocol: Required value",
              "FieldValueNotFound spec.containers[0].volumeMounts[0].name: Not found: \"nope\"",
              "FieldValueInvalid spec.containers[0].volumeMounts[1].mountPath: Invalid "
              "value: \"/a\": must be unique",
              "FieldValueRequired spec.restartPolicy: Required value",
              "FieldValueRequired spec.dnsPolicy: Required value"}));
}

TEST(ValidationTest, PodResources) {
  json p = pod();
  p["spec"]["containers"][0]["resources"] =
      R"({"requests":{"cpu":"0.5","memory":"-1Mi"},"limits":{"cpu":"200m","memory":"lots","gpu":"1"}})"_json;
  std::string parseError = Quantity::parse("lots").status().message();
  EXPECT_EQ(check("Pod", p),
            (Errors{"FieldValueInvalid spec.containers[0].resources.limits[gpu]: Invalid value: "
                    "\"gpu\": must be a standard resource for containers",
                    "FieldValueInvalid spec.containers[0].resources.limits[memory]: Invalid value: "
                    "\"lots\": " +
                        parseError,
                    // Pods copy limits into missing requests, the bad name included.
                    "FieldValueInvalid spec.containers[0].resources.requests[gpu]: Invalid value: "
                    "\"gpu\": must be a standard resource for containers",
                    "FieldValueInvalid spec.containers[0].resources.requests[memory]: Invalid "
                    "value: \"-1Mi\": must be greater than or equal to 0",
                    "FieldValueInvalid spec.containers[0].resources.requests[cpu]: Invalid value: "
                    "\"500m\": must be less than or equal to cpu limit of 200m"}));
}

TEST(ValidationTest, PodProbes) {
  json p = pod();
  p["spec"]["containers"][0]["livenessProbe"] =
      R"({"httpGet":{"port":80},"tcpSocket":{"port":80},"successThreshold":2})"_json;
  p["spec"]["containers"][0]["readinessProbe"] = R"({"periodSeconds":-1})"_json;
  EXPECT_EQ(check("Pod", p),
            (Errors{"FieldValueForbidden spec.containers[0].livenessProbe.tcpSocket: Forbidden: "
                    "may not specify more than 1 handler type",
                    "FieldValueInvalid spec.containers[0].livenessProbe.successThreshold: Invalid "
                    "value: 2: must be 1",
                    "FieldValueRequired spec.containers[0].readinessProbe: Required value: must "
                    "specify a handler type",
                    "FieldValueInvalid spec.containers[0].readinessProbe.periodSeconds: Invalid "
                    "value: -1: must be greater than or equal to 0"}));
}

TEST(ValidationTest, PodUpdateMayOnlyChangeImagesAndBinding) {
  json old = pod();
  applyDefaults(info("Pod"), old);
  json now = old;
  now["spec"]["containers"][0]["image"] = "nginx:1.26";
  now["spec"]["nodeName"] = "node-1";  // binding a pending pod
  now["spec"]["tolerations"] = R"([{"key":"k","operator":"Exists"}])"_json;
  EXPECT_EQ(check("Pod", now, &old), Errors{});
  json moved = now;
  moved["spec"]["nodeName"] = "node-2";
  auto errs = check("Pod", moved, &now);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].rfind(
                "FieldValueForbidden spec: Forbidden: pod updates may not change fields other "
                "than `spec.containers[*].image`,`spec.initContainers[*].image`,"
                "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
                "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
                "was previously negative)\n  spec.nodeName: \"node-1\" -> \"node-2\"",
                0),
            0u)
      << errs[0];
  json removed = now;
  removed["spec"].erase("tolerations");
  EXPECT_EQ(check("Pod", removed, &now).size(), 1u);
}

// ---- Deployment / ReplicaSet ----

TEST(ValidationTest, DeploymentReplicasAndSelector) {
  json d = deployment();
  d["spec"]["replicas"] = -1;
  d["spec"]["template"]["metadata"]["labels"] = {{"app", "other"}};
  EXPECT_EQ(check("Deployment", d),
            (Errors{"FieldValueInvalid spec.replicas: Invalid value: -1: must be greater than or "
                    "equal to 0",
                    "FieldValueInvalid spec.template.metadata.labels: Invalid value: "
                    "{\"app\":\"other\"}: `selector` does not match template `labels`"}));
  d = deployment();
  d["spec"].erase("selector");
  EXPECT_EQ(check("Deployment", d),
            (Errors{"FieldValueRequired spec.selector: Required value",
                    "FieldValueInvalid spec.template.metadata.labels: Invalid value: "
                    "{\"app\":\"web\"}: `selector` does not match template `labels`"}));
  d["spec"]["selector"] = json::object();
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueInvalid spec.selector: Invalid value: {}: empty selector is invalid "
                   "for deployment"});
  d["spec"]["selector"] = R"({"matchExpressions":[{"key":"app","operator":"In"}]})"_json;
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueRequired spec.selector.matchExpressions[0].values: Required value: "
                   "must be specified when `operator` is 'In' or 'NotIn'"});
  d["spec"]["selector"] =
      R"({"matchExpressions":[{"key":"app","operator":"In","values":["web","api"]}]})"_json;
  EXPECT_EQ(check("Deployment", d), Errors{});
}

TEST(ValidationTest, DeploymentStrategy) {
  json d = deployment();
  d["spec"]["strategy"] = {{"type", "Blue"}};
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueNotSupported spec.strategy.type: Unsupported value: \"Blue\": "
                   "supported values: \"Recreate\", \"RollingUpdate\""});
  d["spec"]["strategy"] = R"({"rollingUpdate":{"maxSurge":0,"maxUnavailable":"0%"}})"_json;
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "
                   "\"0%\": may not be 0 when `maxSurge` is 0"});
  d["spec"]["strategy"] = R"({"rollingUpdate":{"maxSurge":"x","maxUnavailable":"110%"}})"_json;
  EXPECT_EQ(check("Deployment", d),
            (Errors{"FieldValueInvalid spec.strategy.rollingUpdate.maxSurge: Invalid value: \"x\": "
                    "a valid percent string must be a numeric string followed by an ending '%' "
                    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                    "FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "
                    "\"110%\": must not be greater than 100%"}));
  d["spec"]["strategy"] = R"({"type":"Recreate","rollingUpdate":{}})"_json;
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueForbidden spec.strategy.rollingUpdate: Forbidden: may not be "
                   "specified when strategy `type` is 'Recreate'"});
  d = deployment();
  d["spec"]["progressDeadlineSeconds"] = 10;
  d["spec"]["minReadySeconds"] = 10;
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueInvalid spec.progressDeadlineSeconds: Invalid value: 10: must be "
                   "greater than minReadySeconds"});
}

TEST(ValidationTest, DeploymentTemplateMustRestartAlways) {
  json d = deployment();
  d["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueNotSupported spec.template.spec.restartPolicy: Unsupported value: "
                   "\"Never\": supported values: \"Always\""});
  d = deployment();
  d["spec"]["template"]["spec"]["containers"][0]["ports"] = R"([{"containerPort":0}])"_json;
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueRequired spec.template.spec.containers[0].ports[0].containerPort: "
                   "Required value"});
}

TEST(ValidationTest, SelectorImmutableOnUpdate) {
  for (const char* kind : {"Deployment", "ReplicaSet"}) {
    json old = deployment();
    old["kind"] = kind;
    json now = old;
    now["spec"]["selector"]["matchLabels"]["app"] = "api";
    now["spec"]["template"]["metadata"]["labels"]["app"] = "api";
    EXPECT_EQ(check(kind, now, &old),
              Errors{"FieldValueInvalid spec.selector: Invalid value: "
                     "{\"matchLabels\":{\"app\":\"api\"}}: field is immutable"})
        << kind;
    now = old;
    now["spec"]["replicas"] = 5;
    EXPECT_EQ(check(kind, now, &old), Errors{}) << kind;
  }
}

// ---- Service ----

TEST(ValidationTest, ServicePorts) {
  json s = service();
  s["spec"]["ports"] = json::array();
  EXPECT_EQ(check("Service", s), Errors{"FieldValueRequired spec.ports: Required value"});
  s["spec"]["clusterIP"] = "None";  // headless: no ports needed
  EXPECT_EQ(check("Service", s), Errors{});
  s = service();
  s["spec"]["ports"] = R"([{"port":0},{"name":"web","port":80,"targetPort":"Bad_Name"},
                           {"name":"web","port":80,"protocol":"HTTP"}])"_json;
  EXPECT_EQ(check("Service", s),
            (Errors{"FieldValueRequired spec.ports[0].name: Required value",
                    "FieldValueInvalid spec.ports[0].port: Invalid value: 0: must be between 1 and "
                    "65535, inclusive",
                    "FieldValueInvalid spec.ports[0].targetPort: Invalid value: 0: must be "
                    "between 1 and 65535, inclusive",  // targetPort defaults to port
                    "FieldValueInvalid spec.ports[1].targetPort: Invalid value: \"Bad_Name\": must "
                    "contain only alphanumeric characters (a-z, 0-9), and hyphens (-)",
                    "FieldValueDuplicate spec.ports[2].name: Duplicate value: \"web\"",
                    "FieldValueNotSupported spec.ports[2].protocol: Unsupported value: \"HTTP\": "
                    "supported values: \"SCTP\", \"TCP\", \"UDP\""}));
}

TEST(ValidationTest, ServiceTypesAndNodePorts) {
  json s = service();
  s["spec"]["type"] = "Magic";
  EXPECT_EQ(check("Service", s),
            Errors{"FieldValueNotSupported spec.type: Unsupported value: \"Magic\": supported "
                   "values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""});
  s = service();
  s["spec"]["type"] = "NodePort";
  s["spec"]["ports"][0]["nodePort"] = 80;
  EXPECT_EQ(check("Service", s),
            Errors{"FieldValueInvalid spec.ports[0].nodePort: Invalid value: 80: provided port is "
                   "not in the valid range. The range of valid ports is 30000-32767"});
  s["spec"]["ports"][0]["nodePort"] = 30080;
  EXPECT_EQ(check("Service", s), Errors{});
  s["spec"]["type"] = "ClusterIP";
  s["spec"].erase("externalTrafficPolicy");
  EXPECT_EQ(check("Service", s),
            Errors{"FieldValueForbidden spec.ports[0].nodePort: Forbidden: may not be used when "
                   "`type` is 'ClusterIP'"});
}

TEST(ValidationTest, ServiceTypeChangeKeepsLeftOverNodePortFields) {
  json old = service();
  old["spec"]["type"] = "NodePort";
  old["spec"]["ports"][0]["nodePort"] = 30080;
  applyDefaults(info("Service"), old);
  json now = old;
  now["spec"]["type"] = "ClusterIP";  // as `kubectl apply` patches the stored object
  EXPECT_EQ(check("Service", now, &old), Errors{});
  now["spec"]["ports"][0]["nodePort"] = 30081;
  EXPECT_EQ(check("Service", now, &old),
            Errors{"FieldValueForbidden spec.ports[0].nodePort: Forbidden: may not be used when "
                   "`type` is 'ClusterIP'"});
}

TEST(ValidationTest, ServiceClusterIP) {
  json s = service();
  s["spec"]["clusterIP"] = "10.0.0.300";
  EXPECT_EQ(check("Service", s),
            Errors{"FieldValueInvalid spec.clusterIPs[0]: Invalid value: \"10.0.0.300\": must be "
                   "a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"});
  json old = service();
  old["spec"]["clusterIP"] = "10.96.0.10";
  applyDefaults(info("Service"), old);
  json now = old;
  now["spec"]["clusterIP"] = "10.96.0.11";
  EXPECT_EQ(check("Service", now, &old),
            Errors{"FieldValueInvalid spec.clusterIPs[0]: Invalid value: [\"10.96.0.11\"]: may "
                   "not change once set"});
  now["spec"].erase("clusterIP");
  EXPECT_EQ(check("Service", now, &old), Errors{});
}

// ---- HPA ----

TEST(ValidationTest, HorizontalPodAutoscaler) {
  json h = hpa();
  h["spec"]["minReplicas"] = 0;
  EXPECT_EQ(check("HorizontalPodAutoscaler", h, nullptr, "v2"),
            Errors{"FieldValueInvalid spec.minReplicas: Invalid value: 0: must be greater than or "
                   "equal to 1"});
  h = hpa();
  h["spec"]["maxReplicas"] = 1;
  EXPECT_EQ(check("HorizontalPodAutoscaler", h, nullptr, "v2"),
            Errors{"FieldValueInvalid spec.maxReplicas: Invalid value: 1: must be greater than or "
                   "equal to `minReplicas`"});
  h = hpa();
  h["spec"]["scaleTargetRef"].erase("kind");
  h["spec"]["scaleTargetRef"]["name"] = "a/b";
  EXPECT_EQ(check("HorizontalPodAutoscaler", h, nullptr, "v2"),
            (Errors{"FieldValueRequired spec.scaleTargetRef.kind: Required value",
                    "FieldValueInvalid spec.scaleTargetRef.name: Invalid value: \"a/b\": may not "
                    "contain '/'"}));
  h = hpa();
  h["spec"]["metrics"] = R"([{"type":"Bogus"},{"type":"Resource","resource":{"name":"cpu",
    "target":{"type":"Utilization","averageUtilization":0}}}])"_json;
  EXPECT_EQ(check("HorizontalPodAutoscaler", h, nullptr, "v2"),
            (Errors{"FieldValueNotSupported spec.metrics[0].type: Unsupported value: \"Bogus\": "
                    "supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", "
                    "\"Resource\"",
                    "FieldValueInvalid spec.metrics[1].resource.target.averageUtilization: Invalid "
                    "value: 0: must be greater than 0"}));
}

// ---- ConfigMap / Secret ----

TEST(ValidationTest, ConfigMapKeysAndSize) {
  json cm = R"({"metadata":{"name":"c","namespace":"d"},"data":{"bad key":"v"}})"_json;
  EXPECT_EQ(check("ConfigMap", cm),
            Errors{"FieldValueInvalid data[bad key]: Invalid value: \"bad key\": a valid config "
                   "key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
                   "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                   "'[-._a-zA-Z0-9]+')"});
  cm["data"] = {{"..x", "v"}};
  EXPECT_EQ(
      check("ConfigMap", cm),
      Errors{"FieldValueInvalid data[..x]: Invalid value: \"..x\": must not start with '..'"});
  cm["data"] = {{"a", std::string(600 * 1024, 'x')}, {"b", std::string(600 * 1024, 'x')}};
  EXPECT_EQ(check("ConfigMap", cm),
            Errors{"FieldValueTooLong : Too long: may not be more than 1048576 bytes"});
}

TEST(ValidationTest, SecretDataIsBase64) {
  json s = R"({"metadata":{"name":"s","namespace":"d"},
              "data":{"ok":"YWJj","bad":"not base64!","short":"YWJ"}})"_json;
  EXPECT_EQ(check("Secret", s),
            (Errors{"FieldValueInvalid data[bad]: Invalid value: \"<secret contents redacted>\": "
                    "illegal base64 data at input byte 3",
                    "FieldValueInvalid data[short]: Invalid value: \"<secret contents redacted>\": "
                    "illegal base64 data at input byte 0"}));
  json tls = R"({"metadata":{"name":"s","namespace":"d"},"type":"kubernetes.io/tls",
                "data":{"tls.crt":"YWJj"}})"_json;
  EXPECT_EQ(check("Secret", tls), Errors{"FieldValueRequired data[tls.key]: Required value"});
  json immutable = R"({"metadata":{"name":"s","namespace":"d"},"immutable":true,
                      "data":{"a":"YWJj"},"type":"Opaque"})"_json;
  json changed = immutable;
  changed["data"]["a"] = "YWJk";
  EXPECT_EQ(check("Secret", changed, &immutable),
            Errors{"FieldValueForbidden data: Forbidden: field is immutable when `immutable` is "
                   "set"});
}

// ---- cluster objects ----

TEST(ValidationTest, NodeTaintsAndCIDR) {
  json n = R"({"metadata":{"name":"n1"},"spec":{"podCIDR":"10.244.1.0/33",
    "taints":[{"key":"a","effect":"Sometimes"},{"key":"b"}]}})"_json;
  EXPECT_EQ(check("Node", n),
            (Errors{"FieldValueInvalid spec.podCIDR: Invalid value: \"10.244.1.0/33\": must be a "
                    "valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    "FieldValueNotSupported spec.taints[0].effect: Unsupported value: "
                    "\"Sometimes\": supported values: \"NoExecute\", \"NoSchedule\", "
                    "\"PreferNoSchedule\"",
                    "FieldValueRequired spec.taints[1].effect: Required value"}));
}

TEST(ValidationTest, EventInvolvedObjectNamespace) {
  json e = R"({"metadata":{"name":"e","namespace":"default"},
              "involvedObject":{"kind":"Pod","name":"p","namespace":"other"}})"_json;
  EXPECT_EQ(check("Event", e),
            Errors{"FieldValueInvalid involvedObject.namespace: Invalid value: \"other\": does not "
                   "match event.namespace"});
  e["involvedObject"] = R"({"kind":"Node","name":"n1"})"_json;  // cluster-scoped: "default"
  EXPECT_EQ(check("Event", e), Errors{});
}

TEST(ValidationTest, EndpointsAndSlices) {
  json ep = R"({"metadata":{"name":"e","namespace":"d"},"subsets":[{"addresses":[
    {"ip":"999.1.1.1"},{"ip":"127.0.0.1"}],"ports":[{"port":80},{"name":"b","port":81}]}]})"_json;
  EXPECT_EQ(check("Endpoints", ep),
            (Errors{"FieldValueInvalid subsets[0].addresses[0].ip: Invalid value: \"999.1.1.1\": "
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    "FieldValueInvalid subsets[0].addresses[1].ip: Invalid value: \"127.0.0.1\": "
                    "may not be in the loopback range (127.0.0.0/8, ::1/128)",
                    "FieldValueRequired subsets[0].ports[0].name: Required value"}));
  json slice = R"({"metadata":{"name":"s","namespace":"d"},"addressType":"IPv5",
    "endpoints":[{"addresses":[]}]})"_json;
  EXPECT_EQ(check("EndpointSlice", slice),
            (Errors{"FieldValueNotSupported addressType: Unsupported value: \"IPv5\": supported "
                    "values: \"FQDN\", \"IPv4\", \"IPv6\"",
                    "FieldValueRequired endpoints[0].addresses: Required value: must contain at "
                    "least 1 address"}));
  slice["addressType"] = "IPv4";
  slice["endpoints"][0]["addresses"] = {"10.0.0.1", "fe80::1"};
  EXPECT_EQ(check("EndpointSlice", slice),
            Errors{"FieldValueInvalid endpoints[0].addresses[1]: Invalid value: \"fe80::1\": must "
                   "be a valid IPv4 address"});
  slice.erase("addressType");
  EXPECT_EQ(check("EndpointSlice", slice).front(),
            "FieldValueRequired addressType: Required value");
}

TEST(ValidationTest, Lease) {
  json l = R"({"metadata":{"name":"l","namespace":"d"},
              "spec":{"leaseDurationSeconds":0,"leaseTransitions":-1}})"_json;
  EXPECT_EQ(check("Lease", l),
            (Errors{"FieldValueInvalid spec.leaseDurationSeconds: Invalid value: 0: must be "
                    "greater than 0",
                    "FieldValueInvalid spec.leaseTransitions: Invalid value: -1: must be greater "
                    "than or equal to 0"}));
}

// ---- Job ----

TEST(ValidationTest, Job) {
  json j = job();
  j["spec"]["template"]["spec"].erase("restartPolicy");
  j["spec"]["parallelism"] = -1;
  EXPECT_EQ(check("Job", j),
            (Errors{"FieldValueInvalid spec.parallelism: Invalid value: -1: must be greater than "
                    "or equal to 0",
                    "FieldValueRequired spec.template.spec.restartPolicy: Required value: valid "
                    "values: \"OnFailure\", \"Never\""}));
  j = job();
  j["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes";
  EXPECT_EQ(check("Job", j),
            Errors{"FieldValueNotSupported spec.template.spec.restartPolicy: Unsupported value: "
                   "\"Sometimes\": supported values: \"OnFailure\", \"Never\""});
  j = job();
  j["spec"]["manualSelector"] = true;
  j["spec"]["selector"] = R"({"matchLabels":{"app":"pi"}})"_json;
  EXPECT_EQ(check("Job", j),
            Errors{"FieldValueInvalid spec.template.metadata.labels: Invalid value: null: "
                   "`selector` does not match template `labels`"});
  json old = job();
  applyDefaults(info("Job"), old);
  json now = old;
  now["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:5.36";
  auto errs = check("Job", now, &old);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].substr(0, 44), "FieldValueInvalid spec.template: Invalid val");
  EXPECT_NE(errs[0].find("field is immutable"), std::string::npos);
}

// ---- Dns ----

TEST(ValidationTest, Dns) {
  json d = dns();
  d["spec"].erase("host");
  d["spec"]["paths"] = R"([{"path":"api","serviceName":"Web","servicePort":0},
    {"path":"/x","serviceName":"web","servicePort":80},{"path":"/x","serviceName":"web",
     "servicePort":70000}])"_json;
  EXPECT_EQ(
      check("Dns", d),
      (Errors{"FieldValueRequired spec.host: Required value",
              "FieldValueInvalid spec.paths[0].path: Invalid value: \"api\": must start "
              "with '/'",
              "FieldValueInvalid spec.paths[0].serviceName: Invalid value: \"Web\": " + kLabelMsg,
              "FieldValueInvalid spec.paths[0].servicePort: Invalid value: 0: must be "
              "between 1 and 65535, inclusive",
              "FieldValueDuplicate spec.paths[2].path: Duplicate value: \"/x\"",
              "FieldValueInvalid spec.paths[2].servicePort: Invalid value: 70000: must be "
              "between 1 and 65535, inclusive"}));
  d = dns();
  d["spec"]["host"] = "App.example.com";
  d["spec"]["paths"] = json::array();
  EXPECT_EQ(
      check("Dns", d),
      (Errors{"FieldValueInvalid spec.host: Invalid value: \"App.example.com\": " + kSubdomainMsg,
              "FieldValueRequired spec.paths: Required value"}));
}

// ---- wrong JSON types anywhere ----

TEST(ValidationTest, WrongTypesAreReportedNotThrown) {
  json d = deployment();
  d["spec"]["replicas"] = "three";
  EXPECT_EQ(check("Deployment", d),
            Errors{"FieldValueTypeInvalid spec.replicas: Invalid value: \"three\": must be of "
                   "type integer"});
  EXPECT_EQ(checkRaw("Pod", json("pod")),
            Errors{"FieldValueTypeInvalid : Invalid value: \"pod\": must be of type object"});
}

// Replaces one subtree of a value by `replacement`, at the index-th node in pre-order.
void replaceNode(json& node, size_t& index, const json& replacement, bool& done) {
  if (done) return;
  if (index-- == 0) {
    node = replacement;
    done = true;
    return;
  }
  if (node.is_object() || node.is_array()) {
    for (auto& child : node) replaceNode(child, index, replacement, done);
  }
}

size_t countNodes(const json& node) {
  size_t n = 1;
  if (node.is_object() || node.is_array()) {
    for (const auto& child : node) n += countNodes(child);
  }
  return n;
}

TEST(ValidationTest, FuzzedShapesNeverThrowOrCrash) {
  const std::vector<json> replacements = {json("x"),
                                          json(""),
                                          json(7),
                                          json(-1),
                                          json(0),
                                          json(1.5),
                                          json(nullptr),
                                          json(true),
                                          json::array(),
                                          json::object(),
                                          json::array({1, "a", nullptr}),
                                          json({{"k", json::array()}}),
                                          json(18446744073709551615ull)};
  std::mt19937 rng(12345);
  size_t runs = 0;
  for (const auto& [kind, version, sample] : samples()) {
    const ResourceInfo& r = info(kind, version);
    json base = sample;
    applyDefaults(r, base);
    size_t nodes = countNodes(base);
    // Every node once with each replacement, then random multi-node mutations.
    for (size_t i = 0; i < nodes; ++i) {
      for (const auto& rep : replacements) {
        json mutated = base;
        size_t idx = i;
        bool done = false;
        replaceNode(mutated, idx, rep, done);
        std::vector<Cause> causes;
        ASSERT_NO_THROW(causes = validate(r, mutated, nullptr)) << kind << " node " << i;
        ASSERT_NO_THROW(causes = validate(r, mutated, &base));
        ASSERT_NO_THROW(causes = validate(r, base, &mutated));
        for (const auto& c : causes) EXPECT_NE(c.reason, "InternalError") << c.message;
        json defaulted = mutated;
        ASSERT_NO_THROW(applyDefaults(r, defaulted)) << kind << " node " << i;
        ASSERT_NO_THROW(causes = validate(r, defaulted, nullptr));
        for (const auto& c : causes) EXPECT_NE(c.reason, "InternalError") << c.message;
        ++runs;
      }
    }
    for (int round = 0; round < 200; ++round) {
      json mutated = base;
      for (int k = 0; k < 3; ++k) {
        size_t idx = rng() % countNodes(mutated);
        bool done = false;
        replaceNode(mutated, idx, replacements[rng() % replacements.size()], done);
      }
      std::vector<Cause> causes;
      ASSERT_NO_THROW(causes = validate(r, mutated, &base)) << mutated.dump();
      for (const auto& c : causes) EXPECT_NE(c.reason, "InternalError") << c.message;
      ASSERT_NO_THROW(applyDefaults(r, mutated));
    }
  }
  EXPECT_GT(runs, 1000u);
}

}  // namespace
}  // namespace minik8s::api
