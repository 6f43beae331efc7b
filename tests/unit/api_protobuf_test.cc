// Decoding of kubectl's protobuf request bodies: real captured bodies (tests/unit/data/protobuf,
// recorded from kubectl 1.32.4 against a fake server; the expected JSON is what
// `kubectl create ... --dry-run=client -o json` prints for the same command, minus
// creationTimestamp: null) and bodies built with the generated classes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "api/protobuf/protobuf_decoder.h"
#include "k8s/apps_v1.pb.h"
#include "k8s/autoscaling_v2.pb.h"
#include "k8s/core_v1.pb.h"
#include "k8s/runtime.pb.h"

namespace minik8s::api {
namespace {

namespace core = k8s::io::api::core::v1;

std::string fixture(const std::string& name) {
  auto path = std::filesystem::path(MINIK8S_TEST_DATA_DIR) / "protobuf" / (name + ".bin");
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string envelope(const std::string& apiVersion, const std::string& kind,
                     const google::protobuf::Message& object) {
  k8s::io::apimachinery::pkg::runtime::Unknown u;
  u.mutable_typemeta()->set_apiversion(apiVersion);
  u.mutable_typemeta()->set_kind(kind);
  u.set_raw(object.SerializeAsString());
  return std::string("k8s\0", 4) + u.SerializeAsString();
}

json decodeOk(std::string_view body) {
  auto r = decodeProtobufObject(body);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r.ok() ? *r : json();
}

struct Captured {
  const char* fixture;
  const char* json;
};

class CapturedBodyTest : public ::testing::TestWithParam<Captured> {};

TEST_P(CapturedBodyTest, DecodesToKubectlDryRunJson) {
  EXPECT_EQ(decodeOk(fixture(GetParam().fixture)), json::parse(GetParam().json));
}

INSTANTIATE_TEST_SUITE_P(
    Kubectl132, CapturedBodyTest,
    ::testing::Values(
        // kubectl create namespace foo
        Captured{"namespace",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"foo"},"spec":{},
                 "status":{}})"},
        // kubectl create deployment web --image=nginx:1.25 --replicas=3 --port=80
        Captured{"deployment", R"({"apiVersion":"apps/v1","kind":"Deployment",
          "metadata":{"labels":{"app":"web"},"name":"web"},
          "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"strategy":{},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.25",
            "name":"nginx","ports":[{"containerPort":80}],"resources":{}}]}}},"status":{}})"},
        // kubectl create deployment multi --image=busybox --image=nginx
        Captured{"deployment_multi", R"({"apiVersion":"apps/v1","kind":"Deployment",
          "metadata":{"labels":{"app":"multi"},"name":"multi"},
          "spec":{"replicas":1,"selector":{"matchLabels":{"app":"multi"}},"strategy":{},
            "template":{"metadata":{"labels":{"app":"multi"}},"spec":{"containers":[
              {"image":"busybox","name":"busybox","resources":{}},
              {"image":"nginx","name":"nginx","resources":{}}]}}},"status":{}})"},
        // kubectl create configmap cfg --from-literal=a=1 --from-literal=b=two
        Captured{"configmap", R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},
          "data":{"a":"1","b":"two"}})"},
        // kubectl create configmap bincfg --from-file=bin.dat (bytes 00 01 ff)
        Captured{"configmap_binary", R"({"apiVersion":"v1","kind":"ConfigMap",
          "metadata":{"name":"bincfg"},"binaryData":{"bin.dat":"AAH/"}})"},
        // kubectl create secret generic sec --from-literal=user=admin --from-literal=pw=s3cr3t
        Captured{"secret_generic", R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},
          "data":{"pw":"czNjcjN0","user":"YWRtaW4="}})"},
        // kubectl create secret docker-registry reg --docker-server=reg.example
        //   --docker-username=u --docker-password=p --docker-email=e@x
        Captured{"secret_docker_registry", R"({"apiVersion":"v1","kind":"Secret",
          "metadata":{"name":"reg"},"type":"kubernetes.io/dockerconfigjson",
          "data":{".dockerconfigjson":"eyJhdXRocyI6eyJyZWcuZXhhbXBsZSI6eyJ1c2VybmFtZSI6InUiLCJwYXNzd29yZCI6InAiLCJlbWFpbCI6ImVAeCIsImF1dGgiOiJkVHB3In19fQ=="}})"},
        // kubectl create service clusterip svc --tcp=80:8080
        Captured{"service_clusterip", R"({"apiVersion":"v1","kind":"Service",
          "metadata":{"labels":{"app":"svc"},"name":"svc"},
          "spec":{"ports":[{"name":"80-8080","port":80,"protocol":"TCP","targetPort":8080}],
            "selector":{"app":"svc"},"type":"ClusterIP"},"status":{"loadBalancer":{}}})"},
        // kubectl create service nodeport np --tcp=80:http --node-port=30080
        Captured{"service_nodeport", R"({"apiVersion":"v1","kind":"Service",
          "metadata":{"labels":{"app":"np"},"name":"np"},
          "spec":{"ports":[{"name":"80-http","nodePort":30080,"port":80,"protocol":"TCP",
            "targetPort":"http"}],"selector":{"app":"np"},"type":"NodePort"},
          "status":{"loadBalancer":{}}})"},
        // kubectl create service externalname ext --external-name=example.com
        Captured{"service_externalname", R"({"apiVersion":"v1","kind":"Service",
          "metadata":{"labels":{"app":"ext"},"name":"ext"},
          "spec":{"externalName":"example.com","selector":{"app":"ext"},"type":"ExternalName"},
          "status":{"loadBalancer":{}}})"},
        // kubectl create serviceaccount sa1
        Captured{"serviceaccount",
                 R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}})"},
        // kubectl create job j1 --image=busybox -- echo hi
        Captured{"job", R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j1"},
          "spec":{"template":{"metadata":{},"spec":{"containers":[{"command":["echo","hi"],
            "image":"busybox","name":"j1","resources":{}}],"restartPolicy":"Never"}}},
          "status":{}})"},
        // kubectl create cronjob cj --image=busybox --schedule='*/5 * * * *' -- date
        Captured{"cronjob", R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},
          "spec":{"jobTemplate":{"metadata":{"name":"cj"},"spec":{"template":{"metadata":{},
            "spec":{"containers":[{"command":["date"],"image":"busybox","name":"cj",
            "resources":{}}],"restartPolicy":"OnFailure"}}}},"schedule":"*/5 * * * *"},
          "status":{}})"},
        // kubectl autoscale deployment web --min=2 --max=5 --cpu-percent=50 (autoscaling/v1)
        Captured{"hpa_v1", R"({"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler",
          "metadata":{"name":"web"},"spec":{"maxReplicas":5,"minReplicas":2,
            "scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
            "targetCPUUtilizationPercentage":50},
          "status":{"currentReplicas":0,"desiredReplicas":0}})"},
        // kubectl create token sa1 --duration=1h
        Captured{"token_request", R"({"apiVersion":"authentication.k8s.io/v1",
          "kind":"TokenRequest","metadata":{},"spec":{"expirationSeconds":3600},
          "status":{"token":""}})"},
        // kubectl create job manual-1 --from=cronjob/cj (owner reference and annotation set)
        Captured{"job_from_cronjob", R"({"apiVersion":"batch/v1","kind":"Job",
          "metadata":{"annotations":{"cronjob.kubernetes.io/instantiate":"manual"},
            "labels":{"team":"a"},"name":"manual-1","ownerReferences":[{"apiVersion":"batch/v1",
            "controller":true,"kind":"CronJob","name":"cj","uid":"cj-uid-1"}]},
          "spec":{"backoffLimit":2,"template":{"metadata":{},"spec":{"containers":[{
            "args":["date"],"env":[{"name":"A","value":"1"}],"image":"busybox","name":"c",
            "resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"100m"}}}],
            "restartPolicy":"Never"}}},"status":{}})"},
        // kubectl create token sa1 --audience=api --bound-object-kind=Pod
        //   --bound-object-name=p1 --bound-object-uid=u-9 --duration=10m (proto field uID)
        Captured{"token_request_bound", R"({"apiVersion":"authentication.k8s.io/v1",
          "kind":"TokenRequest","metadata":{},"spec":{"audiences":["api"],
            "boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"p1","uid":"u-9"},
            "expirationSeconds":600},"status":{"token":""}})"},
        // kubectl auth can-i create pods
        Captured{"selfsubjectaccessreview", R"({"apiVersion":"authorization.k8s.io/v1",
          "kind":"SelfSubjectAccessReview","metadata":{},
          "spec":{"resourceAttributes":{"namespace":"default","resource":"pods","verb":"create"}},
          "status":{"allowed":false}})"},
        // kubectl create role r1 --verb=get,list --resource=pods
        Captured{"role", R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
          "metadata":{"name":"r1"},
          "rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]})"},
        // kubectl create clusterrolebinding crb1 --clusterrole=cr1 --serviceaccount=default:sa1
        Captured{"clusterrolebinding", R"({"apiVersion":"rbac.authorization.k8s.io/v1",
          "kind":"ClusterRoleBinding","metadata":{"name":"crb1"},
          "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cr1"},
          "subjects":[{"kind":"ServiceAccount","name":"sa1","namespace":"default"}]})"},
        // kubectl create ingress ing --rule='foo.com/bar*=svc:80'
        Captured{"ingress", R"({"apiVersion":"networking.k8s.io/v1","kind":"Ingress",
          "metadata":{"name":"ing"},"spec":{"rules":[{"host":"foo.com","http":{"paths":[
            {"backend":{"service":{"name":"svc","port":{"number":80}}},"path":"/bar",
            "pathType":"Prefix"}]}}]},"status":{"loadBalancer":{}}})"},
        // kubectl create pdb pdb1 --selector=app=web --min-available=1
        Captured{"pdb", R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
          "metadata":{"name":"pdb1"},"spec":{"minAvailable":1,
            "selector":{"matchLabels":{"app":"web"}}},
          "status":{"currentHealthy":0,"desiredHealthy":0,"disruptionsAllowed":0,
            "expectedPods":0}})"},
        // kubectl create priorityclass pc --value=1000
        Captured{"priorityclass", R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
          "metadata":{"name":"pc"},"preemptionPolicy":"PreemptLowerPriority","value":1000})"},
        // kubectl create quota q --hard=pods=10,cpu=2
        Captured{"resourcequota", R"({"apiVersion":"v1","kind":"ResourceQuota",
          "metadata":{"name":"q"},"spec":{"hard":{"cpu":"2","pods":"10"}},"status":{}})"}),
    [](const auto& info) { return std::string(info.param.fixture); });

TEST(ProtobufDecoderTest, PodTemplateFieldsFollowKubernetesJson) {
  core::Pod pod;
  auto* meta = pod.mutable_metadata();
  meta->set_name("web-1");
  meta->set_generatename("web-");
  meta->set_namespace_("prod");
  (*meta->mutable_labels())["app"] = "web";
  (*meta->mutable_annotations())["note"] = "x";
  meta->add_finalizers("example.com/keep");
  meta->mutable_creationtimestamp()->set_seconds(1704164645);  // 2024-01-02T03:04:05Z
  auto* owner = meta->add_ownerreferences();
  owner->set_apiversion("apps/v1");
  owner->set_kind("ReplicaSet");
  owner->set_name("web-abc");
  owner->set_uid("u-1");
  owner->set_controller(true);
  owner->set_blockownerdeletion(false);  // a Go *bool: false is kept
  auto* spec = pod.mutable_spec();
  spec->set_restartpolicy("Always");
  spec->set_terminationgraceperiodseconds(0);  // *int64: 0 is meaningful
  spec->set_hostnetwork(false);                // plain bool, omitempty: dropped
  auto* c = spec->add_containers();
  c->set_name("app");
  c->set_image("nginx");
  c->add_command("sh");
  c->add_args("-c");
  c->add_args("sleep 1");
  c->set_imagepullpolicy("IfNotPresent");
  c->set_terminationmessagepolicy("File");
  c->set_workingdir("");  // zero, omitempty
  auto* port = c->add_ports();
  port->set_name("http");
  port->set_containerport(8080);
  port->set_protocol("TCP");
  auto* env = c->add_env();
  env->set_name("MODE");
  env->set_value("prod");
  auto* fromSecret = c->add_env();
  fromSecret->set_name("PW");
  fromSecret->mutable_valuefrom()->mutable_secretkeyref()->mutable_localobjectreference()->set_name(
      "creds");
  fromSecret->mutable_valuefrom()->mutable_secretkeyref()->set_key("pw");
  (*c->mutable_resources()->mutable_limits())["memory"].set_string("128Mi");
  (*c->mutable_resources()->mutable_requests())["cpu"].set_string("250m");
  auto* probe = c->mutable_readinessprobe();
  probe->mutable_handler()->mutable_httpget()->set_path("/healthz");
  probe->mutable_handler()->mutable_httpget()->mutable_port()->set_type(1);
  probe->mutable_handler()->mutable_httpget()->mutable_port()->set_strval("http");
  probe->set_periodseconds(5);
  auto* mount = c->add_volumemounts();
  mount->set_name("cfg");
  mount->set_mountpath("/etc/cfg");
  mount->set_readonly(true);
  auto* vol = spec->add_volumes();
  vol->set_name("cfg");
  vol->mutable_volumesource()->mutable_configmap()->mutable_localobjectreference()->set_name("cm");
  auto* scratch = spec->add_volumes();
  scratch->set_name("tmp");
  scratch->mutable_volumesource()->mutable_emptydir();

  EXPECT_EQ(decodeOk(envelope("v1", "Pod", pod)), json::parse(R"({
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"web-1","generateName":"web-","namespace":"prod","labels":{"app":"web"},
      "annotations":{"note":"x"},"finalizers":["example.com/keep"],
      "creationTimestamp":"2024-01-02T03:04:05Z",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-abc","uid":"u-1",
        "controller":true,"blockOwnerDeletion":false}]},
    "spec":{"restartPolicy":"Always","terminationGracePeriodSeconds":0,
      "containers":[{"name":"app","image":"nginx","command":["sh"],"args":["-c","sleep 1"],
        "imagePullPolicy":"IfNotPresent","terminationMessagePolicy":"File",
        "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
        "env":[{"name":"MODE","value":"prod"},
               {"name":"PW","valueFrom":{"secretKeyRef":{"name":"creds","key":"pw"}}}],
        "resources":{"limits":{"memory":"128Mi"},"requests":{"cpu":"250m"}},
        "readinessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5},
        "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg","readOnly":true}]}],
      "volumes":[{"name":"cfg","configMap":{"name":"cm"}},{"name":"tmp","emptyDir":{}}]}})"));
}

TEST(ProtobufDecoderTest, PointerFieldsKeepZeroValues) {
  k8s::io::api::apps::v1::Deployment d;
  d.mutable_metadata()->set_name("idle");
  d.mutable_spec()->set_replicas(0);
  d.mutable_spec()->set_minreadyseconds(0);  // plain int32 omitempty: dropped
  auto* ru = d.mutable_spec()->mutable_strategy()->mutable_rollingupdate();
  ru->mutable_maxsurge()->set_type(0);
  ru->mutable_maxsurge()->set_intval(0);
  ru->mutable_maxunavailable()->set_type(1);
  ru->mutable_maxunavailable()->set_strval("25%");
  EXPECT_EQ(decodeOk(envelope("apps/v1", "Deployment", d)), json::parse(R"({
    "apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"idle"},
    "spec":{"replicas":0,"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":"25%"}}}})"));

  core::Secret s;
  s.mutable_metadata()->set_name("s");
  s.set_immutable(false);
  (*s.mutable_stringdata())["k"] = "v";
  (*s.mutable_data())["bin"] = std::string("\x00\xfe", 2);
  s.set_type("Opaque");
  EXPECT_EQ(decodeOk(envelope("v1", "Secret", s)), json::parse(R"({
    "apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"immutable":false,
    "stringData":{"k":"v"},"data":{"bin":"AP4="},"type":"Opaque"})"));
}

TEST(ProtobufDecoderTest, AutoscalingV2Metrics) {
  k8s::io::api::autoscaling::v2::HorizontalPodAutoscaler h;
  h.mutable_metadata()->set_name("web");
  auto* spec = h.mutable_spec();
  spec->mutable_scaletargetref()->set_kind("Deployment");
  spec->mutable_scaletargetref()->set_name("web");
  spec->mutable_scaletargetref()->set_apiversion("apps/v1");
  spec->set_maxreplicas(10);
  auto* m = spec->add_metrics();
  m->set_type("Resource");
  m->mutable_resource()->set_name("cpu");
  m->mutable_resource()->mutable_target()->set_type("Utilization");
  m->mutable_resource()->mutable_target()->set_averageutilization(60);
  auto* mem = spec->add_metrics();
  mem->set_type("Resource");
  mem->mutable_resource()->set_name("memory");
  mem->mutable_resource()->mutable_target()->set_type("AverageValue");
  mem->mutable_resource()->mutable_target()->mutable_averagevalue()->set_string("500Mi");
  EXPECT_EQ(decodeOk(envelope("autoscaling/v2", "HorizontalPodAutoscaler", h)), json::parse(R"({
    "apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},
    "spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},
      "maxReplicas":10,"metrics":[
        {"type":"Resource","resource":{"name":"cpu",
          "target":{"type":"Utilization","averageUtilization":60}}},
        {"type":"Resource","resource":{"name":"memory",
          "target":{"type":"AverageValue","averageValue":"500Mi"}}}]}})"));
}

TEST(ProtobufDecoderTest, UnknownKindIsUnsupportedMediaTypeWithAHint) {
  core::Namespace ns;
  auto r = decodeProtobufObject(envelope("apps/v1", "StatefulSet", ns));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 415);
  EXPECT_EQ(r.status().reason(), "UnsupportedMediaType");
  EXPECT_NE(r.status().message().find("StatefulSet"), std::string::npos);
  EXPECT_NE(r.status().message().find("--dry-run=client -o yaml | kubectl apply -f -"),
            std::string::npos);
}

TEST(ProtobufDecoderTest, UnmodelledFieldWithAValueIsRejectedNotDropped) {
  core::Namespace ns;
  ns.mutable_metadata()->set_name("x");
  // ObjectMeta field 17 (managedFields) is not modelled: empty is fine, content is not.
  std::string meta = ns.metadata().SerializeAsString();
  std::string withEmpty = meta + std::string("\x8a\x01\x00", 3);
  std::string withZeros = meta + std::string("\x8a\x01\x02\x0a\x00", 5);   // manager ""
  std::string withValue = meta + std::string("\x8a\x01\x03\x0a\x01m", 6);  // manager "m"
  for (const auto& [m, ok] :
       {std::pair{withEmpty, true}, std::pair{withZeros, true}, std::pair{withValue, false}}) {
    std::string raw = std::string("\x0a", 1) + char(m.size()) + m;
    k8s::io::apimachinery::pkg::runtime::Unknown u;
    u.mutable_typemeta()->set_apiversion("v1");
    u.mutable_typemeta()->set_kind("Namespace");
    u.set_raw(raw);
    auto r = decodeProtobufObject(std::string("k8s\0", 4) + u.SerializeAsString());
    EXPECT_EQ(r.ok(), ok);
    if (ok) {
      EXPECT_EQ(*r,
                json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}})"));
    } else {
      EXPECT_EQ(r.status().code(), 415);
      EXPECT_NE(r.status().message().find("ObjectMeta"), std::string::npos);
    }
  }
}

TEST(ProtobufDecoderTest, MalformedBodiesAreBadRequest) {
  EXPECT_EQ(decodeProtobufObject("").status().code(), 400);
  EXPECT_EQ(decodeProtobufObject("{\"kind\":\"Namespace\"}").status().code(), 400);
  EXPECT_EQ(decodeProtobufObject(std::string("k8s\0\xff\xff", 6)).status().code(), 400);
  // No typeMeta.
  EXPECT_EQ(decodeProtobufObject(std::string("k8s\0", 4)).status().code(), 400);
  // Raw object that is not a Namespace message.
  k8s::io::apimachinery::pkg::runtime::Unknown u;
  u.mutable_typemeta()->set_apiversion("v1");
  u.mutable_typemeta()->set_kind("Namespace");
  u.set_raw(
      "\x0a\x05"
      "ab");
  EXPECT_EQ(decodeProtobufObject(std::string("k8s\0", 4) + u.SerializeAsString()).status().code(),
            400);
  // Invalid UTF-8 in a string field cannot become JSON.
  core::Namespace bad;
  bad.mutable_metadata()->set_name("\xc3\x28");
  EXPECT_EQ(decodeProtobufObject(envelope("v1", "Namespace", bad)).status().code(), 400);
  // Timestamps beyond year 9999.
  core::Namespace late;
  late.mutable_metadata()->mutable_creationtimestamp()->set_seconds(400000000000LL);
  EXPECT_EQ(decodeProtobufObject(envelope("v1", "Namespace", late)).status().code(), 400);
}

TEST(ProtobufDecoderTest, TruncatedAndCorruptedBodiesNeverCrash) {
  std::mt19937 rng(42);
  for (const char* name : {"deployment", "service_nodeport", "secret_docker_registry", "cronjob"}) {
    std::string body = fixture(name);
    for (size_t n = 0; n < body.size(); ++n) {
      auto r = decodeProtobufObject(std::string_view(body).substr(0, n));
      if (!r.ok()) {
        EXPECT_TRUE(r.status().code() == 400 || r.status().code() == 415);
      }
    }
    for (int i = 0; i < 2000; ++i) {
      std::string mutated = body;
      for (int flips = 1 + int(rng() % 3); flips > 0; --flips) {
        mutated[4 + rng() % (mutated.size() - 4)] = char(rng());
      }
      auto r = decodeProtobufObject(mutated);
      if (!r.ok()) {
        EXPECT_TRUE(r.status().code() == 400 || r.status().code() == 415);
      }
    }
  }
  for (int i = 0; i < 2000; ++i) {
    std::string random = std::string("k8s\0", 4);
    for (int n = int(rng() % 200); n > 0; --n) random += char(rng());
    auto r = decodeProtobufObject(random);
    if (!r.ok()) {
      EXPECT_TRUE(r.status().code() == 400 || r.status().code() == 415);
    }
  }
}

TEST(ProtobufDecoderTest, ListsDecodableKinds) {
  auto kinds = protobufDecodableKinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "apps/v1 Deployment"), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "autoscaling/v1 HorizontalPodAutoscaler"),
            kinds.end());
}

}  // namespace
}  // namespace minik8s::api
