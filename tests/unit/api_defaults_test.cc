#include <gtest/gtest.h>

#include "api/defaults.h"
#include "api/scheme.h"

namespace minik8s::api {
namespace {

const ResourceInfo& info(const std::string& group, const std::string& version,
                         const std::string& kind) {
  const ResourceInfo* r = Scheme::builtin().byKind(group, version, kind);
  EXPECT_NE(r, nullptr) << kind;
  return *r;
}

json defaulted(const std::string& group, const std::string& version, const std::string& kind,
               json obj) {
  applyDefaults(info(group, version, kind), obj);
  return obj;
}

// What kube-apiserver 1.32 stores for `kubectl create deployment web --image=nginx:1.25
// --port=80` (server-set metadata left out).
TEST(DefaultsTest, MinimalDeploymentMatchesKubernetes) {
  json in = R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
    "spec":{"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"nginx","image":"nginx:1.25",
                               "ports":[{"containerPort":80}]}]}}}})"_json;
  json want = R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
    "spec":{"replicas":1,"revisionHistoryLimit":10,"progressDeadlineSeconds":600,
      "selector":{"matchLabels":{"app":"web"}},
      "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"nginx","image":"nginx:1.25","imagePullPolicy":"IfNotPresent",
                               "ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},
                               "terminationMessagePath":"/dev/termination-log",
                               "terminationMessagePolicy":"File"}],
                "dnsPolicy":"ClusterFirst","restartPolicy":"Always",
                "schedulerName":"default-scheduler","securityContext":{},
                "terminationGracePeriodSeconds":30}}}})"_json;
  EXPECT_EQ(defaulted("apps", "v1", "Deployment", in), want);
}

TEST(DefaultsTest, DeploymentLabelsComeFromTemplateWhenEmpty) {
  json in = R"({"metadata":{"name":"web"},"spec":{"template":{"metadata":{"labels":{"app":"x"}},
    "spec":{"containers":[]}}}})"_json;
  json out = defaulted("apps", "v1", "Deployment", in);
  EXPECT_EQ(out["metadata"]["labels"], R"({"app":"x"})"_json);
  json own =
      R"({"metadata":{"labels":{"team":"a"}},"spec":{"template":{"metadata":{"labels":{"app":"x"}}}}})"_json;
  EXPECT_EQ(defaulted("apps", "v1", "ReplicaSet", own)["metadata"]["labels"],
            R"({"team":"a"})"_json);
}

TEST(DefaultsTest, RecreateStrategyGetsNoRollingUpdate) {
  json out =
      defaulted("apps", "v1", "Deployment", R"({"spec":{"strategy":{"type":"Recreate"}}})"_json);
  EXPECT_EQ(out["spec"]["strategy"], R"({"type":"Recreate"})"_json);
  json partial = defaulted("apps", "v1", "Deployment",
                           R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":0}}}})"_json);
  EXPECT_EQ(
      partial["spec"]["strategy"],
      R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":"25%"}})"_json);
}

// `kubectl run box --image=busybox` as kube-apiserver stores it (without the admission-added
// token volume and tolerations).
TEST(DefaultsTest, MinimalPodMatchesKubernetes) {
  json in = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"box","namespace":"default"},
    "spec":{"containers":[{"name":"box","image":"busybox"}]}})"_json;
  json want = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"box","namespace":"default"},
    "spec":{"containers":[{"name":"box","image":"busybox","imagePullPolicy":"Always",
                           "resources":{},"terminationMessagePath":"/dev/termination-log",
                           "terminationMessagePolicy":"File"}],
            "dnsPolicy":"ClusterFirst","enableServiceLinks":true,
            "preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always",
            "schedulerName":"default-scheduler","securityContext":{},
            "serviceAccount":"default","serviceAccountName":"default",
            "terminationGracePeriodSeconds":30}})"_json;
  EXPECT_EQ(defaulted("", "v1", "Pod", in), want);
}

TEST(DefaultsTest, ImagePullPolicyFollowsTheTag) {
  auto policy = [](const std::string& image) {
    json pod = {{"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}};
    return defaulted("", "v1", "Pod", pod)["spec"]["containers"][0]["imagePullPolicy"];
  };
  EXPECT_EQ(policy("nginx"), "Always");
  EXPECT_EQ(policy("nginx:latest"), "Always");
  EXPECT_EQ(policy("nginx:1.25"), "IfNotPresent");
  EXPECT_EQ(policy("registry:5000/team/nginx"), "Always");
  EXPECT_EQ(policy("registry:5000/team/nginx:v2"), "IfNotPresent");
  EXPECT_EQ(policy("nginx@sha256:0123abcd"), "IfNotPresent");
  json set = R"({"spec":{"containers":[{"image":"nginx","imagePullPolicy":"Never"}]}})"_json;
  EXPECT_EQ(defaulted("", "v1", "Pod", set)["spec"]["containers"][0]["imagePullPolicy"], "Never");
}

TEST(DefaultsTest, PodRequestsDefaultToLimitsButTemplatesDoNot) {
  json pod = R"({"spec":{"containers":[{"name":"c","image":"x",
    "resources":{"limits":{"cpu":"200m","memory":"64Mi"},"requests":{"cpu":"100m"}}}]}})"_json;
  EXPECT_EQ(defaulted("", "v1", "Pod", pod)["spec"]["containers"][0]["resources"]["requests"],
            R"({"cpu":"100m","memory":"64Mi"})"_json);
  json rs = R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"x",
    "resources":{"limits":{"cpu":"200m"}}}]}}}})"_json;
  json out = defaulted("apps", "v1", "ReplicaSet", rs);
  EXPECT_FALSE(out["spec"]["template"]["spec"]["containers"][0]["resources"].contains("requests"));
  EXPECT_FALSE(out["spec"]["template"]["spec"].contains("enableServiceLinks"));
  EXPECT_FALSE(out["spec"]["template"]["spec"].contains("serviceAccountName"));
  EXPECT_EQ(out["spec"]["replicas"], 1);
}

TEST(DefaultsTest, ProbesPortsVolumesAndEnv) {
  json pod = R"({"spec":{"containers":[{"name":"c","image":"x:1",
    "livenessProbe":{"httpGet":{"port":8080}},
    "readinessProbe":{"tcpSocket":{"port":80},"periodSeconds":5},
    "ports":[{"containerPort":53,"protocol":"UDP"},{"containerPort":80}],
    "env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}]}],
    "volumes":[{"name":"a","configMap":{"name":"cm"}},{"name":"b","secret":{"secretName":"s","defaultMode":256}},
               {"name":"c"}]}})"_json;
  json out = defaulted("", "v1", "Pod", pod);
  const json& c = out["spec"]["containers"][0];
  EXPECT_EQ(c["livenessProbe"], R"({"httpGet":{"port":8080,"path":"/","scheme":"HTTP"},
    "timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3})"_json);
  EXPECT_EQ(c["readinessProbe"]["periodSeconds"], 5);
  EXPECT_EQ(c["ports"][0]["protocol"], "UDP");
  EXPECT_EQ(c["ports"][1]["protocol"], "TCP");
  EXPECT_EQ(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
  EXPECT_EQ(out["spec"]["volumes"][0]["configMap"]["defaultMode"], 420);
  EXPECT_EQ(out["spec"]["volumes"][1]["secret"]["defaultMode"], 256);
  EXPECT_EQ(out["spec"]["volumes"][2], R"({"name":"c","emptyDir":{}})"_json);
}

TEST(DefaultsTest, MinimalServiceMatchesKubernetes) {
  json in = R"({"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},
    "ports":[{"port":80},{"name":"dns","port":53,"protocol":"UDP","targetPort":"dns"}]}})"_json;
  json want = R"({"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},
    "ports":[{"port":80,"protocol":"TCP","targetPort":80},
             {"name":"dns","port":53,"protocol":"UDP","targetPort":"dns"}],
    "type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster",
    "ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"}})"_json;
  EXPECT_EQ(defaulted("", "v1", "Service", in), want);
}

TEST(DefaultsTest, NodePortAndExternalNameServices) {
  json np =
      defaulted("", "v1", "Service", R"({"spec":{"type":"NodePort","ports":[{"port":80}]}})"_json);
  EXPECT_EQ(np["spec"]["externalTrafficPolicy"], "Cluster");
  json ext = defaulted("", "v1", "Service",
                       R"({"spec":{"type":"ExternalName","externalName":"a.example.com"}})"_json);
  EXPECT_FALSE(ext["spec"].contains("ipFamilies"));
  EXPECT_FALSE(ext["spec"].contains("internalTrafficPolicy"));
  EXPECT_FALSE(ext["spec"].contains("externalTrafficPolicy"));
  json affinity = defaulted("", "v1", "Service", R"({"spec":{"sessionAffinity":"ClientIP"}})"_json);
  EXPECT_EQ(affinity["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
}

TEST(DefaultsTest, JobDefaultsAndGeneratedSelector) {
  json in = R"({"metadata":{"name":"pi","uid":"u-1"},"spec":{"template":{"spec":{
    "containers":[{"name":"pi","image":"perl:5"}]}}}})"_json;
  json out = defaulted("batch", "v1", "Job", in);
  const json& spec = out["spec"];
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
  EXPECT_FALSE(spec["template"]["spec"].contains("restartPolicy"));
  EXPECT_EQ(spec["selector"],
            R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"u-1"}})"_json);
  json labels = R"({"batch.kubernetes.io/controller-uid":"u-1","batch.kubernetes.io/job-name":"pi",
                    "controller-uid":"u-1","job-name":"pi"})"_json;
  EXPECT_EQ(spec["template"]["metadata"]["labels"], labels);
  EXPECT_EQ(out["metadata"]["labels"], labels);
  json parallel = defaulted("batch", "v1", "Job", R"({"spec":{"parallelism":3}})"_json);
  EXPECT_FALSE(parallel["spec"].contains("completions"));
  json manual = defaulted("batch", "v1", "Job",
                          R"({"metadata":{"uid":"u"},"spec":{"manualSelector":true}})"_json);
  EXPECT_FALSE(manual["spec"].contains("selector"));
}

TEST(DefaultsTest, HorizontalPodAutoscalerV2) {
  json out = defaulted("autoscaling", "v2", "HorizontalPodAutoscaler",
                       R"({"spec":{"maxReplicas":5}})"_json);
  EXPECT_EQ(out["spec"]["minReplicas"], 1);
  EXPECT_EQ(out["spec"]["metrics"], R"([{"type":"Resource","resource":{"name":"cpu",
    "target":{"type":"Utilization","averageUtilization":80}}}])"_json);
  EXPECT_FALSE(out["spec"].contains("behavior"));
  json v1 = defaulted("autoscaling", "v1", "HorizontalPodAutoscaler", R"({"spec":{}})"_json);
  EXPECT_EQ(v1["spec"], R"({"minReplicas":1})"_json);
}

TEST(DefaultsTest, NamespaceSecretNode) {
  json ns = defaulted("", "v1", "Namespace", R"({"metadata":{"name":"team"}})"_json);
  EXPECT_EQ(ns["status"]["phase"], "Active");
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "team");
  EXPECT_EQ(defaulted("", "v1", "Secret", json::object())["type"], "Opaque");
  EXPECT_EQ(defaulted("", "v1", "Secret", R"({"type":"kubernetes.io/tls"})"_json)["type"],
            "kubernetes.io/tls");
  json node = defaulted("", "v1", "Node", R"({"status":{"capacity":{"cpu":"2"}}})"_json);
  EXPECT_EQ(node["status"]["allocatable"], R"({"cpu":"2"})"_json);
}

TEST(DefaultsTest, IdempotentAndTolerantOfWrongTypes) {
  json pod = R"({"spec":{"containers":[{"name":"c","image":"x",
    "livenessProbe":{"exec":{"command":["true"]}}}],"volumes":[{"name":"v"}]}})"_json;
  json once = defaulted("", "v1", "Pod", pod);
  EXPECT_EQ(defaulted("", "v1", "Pod", once), once);
  for (const json& bad : {json("x"), json(3), json::array(), json(nullptr)}) {
    for (const char* kind : {"Pod", "Service", "Namespace", "Node", "Secret"}) {
      json obj = {{"metadata", bad}, {"spec", bad}, {"status", bad}};
      EXPECT_NO_THROW(defaulted("", "v1", kind, obj)) << kind;
    }
    json deep = {{"spec",
                  {{"containers", {bad, {{"ports", bad}, {"resources", {{"limits", bad}}}}}},
                   {"volumes", {bad}},
                   {"template", bad},
                   {"strategy", bad}}}};
    EXPECT_NO_THROW(defaulted("", "v1", "Pod", deep));
    EXPECT_NO_THROW(defaulted("apps", "v1", "Deployment", deep));
    EXPECT_NO_THROW(defaulted("batch", "v1", "Job", deep));
  }
}

}  // namespace
}  // namespace minik8s::api
