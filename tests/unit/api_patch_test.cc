#include <gtest/gtest.h>

#include "api/patch.h"
#include "api/strategic_merge_patch.h"

namespace minik8s::api {
namespace {

json smp(const json& target, const json& patch, const std::string& kind) {
  auto r = applyStrategicMergePatch(target, patch, kind);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : json();
}

json jsonPatch(const json& target, const json& patch) {
  auto r = applyJsonPatch(target, patch);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : json();
}

// ---- RFC 7386 merge patch ----

TEST(MergePatchTest, Rfc7386Examples) {
  json target = R"({"a":"b","c":{"d":"e","f":"g"}})"_json;
  json patch = R"({"a":"z","c":{"f":null}})"_json;
  EXPECT_EQ(*applyMergePatch(target, patch), R"({"a":"z","c":{"d":"e"}})"_json);
  EXPECT_EQ(*applyMergePatch(R"({"a":["b"]})"_json, R"({"a":"c"})"_json), R"({"a":"c"})"_json);
  EXPECT_EQ(*applyMergePatch(R"({"a":[1,2]})"_json, R"({"a":[3]})"_json), R"({"a":[3]})"_json);
  EXPECT_EQ(*applyMergePatch(R"({"a":"b"})"_json, R"(["c"])"_json), R"(["c"])"_json);
  EXPECT_EQ(*applyMergePatch(R"({"e":null})"_json, R"({"a":1})"_json), R"({"e":null,"a":1})"_json);
  EXPECT_EQ(*applyMergePatch("[1]"_json, R"({"a":{"bb":{"ccc":null}}})"_json),
            R"({"a":{"bb":{}}})"_json);
  // Removing a label, the common kubectl patch --type=merge case.
  json pod = R"({"metadata":{"labels":{"app":"web","tier":"a"}}})"_json;
  EXPECT_EQ(*applyMergePatch(pod, R"({"metadata":{"labels":{"tier":null}}})"_json),
            R"({"metadata":{"labels":{"app":"web"}}})"_json);
}

// ---- RFC 6902 JSON patch ----

TEST(JsonPatchTest, AllOperations) {
  json doc = R"({"a":{"b":[1,2,3]},"c":"x"})"_json;
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"add","path":"/a/b/1","value":9}])"_json),
            R"({"a":{"b":[1,9,2,3]},"c":"x"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"add","path":"/a/b/-","value":4}])"_json),
            R"({"a":{"b":[1,2,3,4]},"c":"x"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"add","path":"/a/b/3","value":4}])"_json),
            R"({"a":{"b":[1,2,3,4]},"c":"x"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"add","path":"/d","value":{"e":1}}])"_json),
            R"({"a":{"b":[1,2,3]},"c":"x","d":{"e":1}})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"remove","path":"/a/b/0"}])"_json),
            R"({"a":{"b":[2,3]},"c":"x"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"replace","path":"/c","value":"y"}])"_json),
            R"({"a":{"b":[1,2,3]},"c":"y"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"move","from":"/c","path":"/a/c"}])"_json),
            R"({"a":{"b":[1,2,3],"c":"x"}})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"move","from":"/a/b/0","path":"/a/b/-"}])"_json),
            R"({"a":{"b":[2,3,1]},"c":"x"})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"copy","from":"/a/b","path":"/e"}])"_json),
            R"({"a":{"b":[1,2,3]},"c":"x","e":[1,2,3]})"_json);
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"test","path":"/c","value":"x"},
                               {"op":"replace","path":"","value":{"z":1}}])"_json),
            R"({"z":1})"_json);
}

TEST(JsonPatchTest, PointerEscapes) {
  json doc = R"({"metadata":{"annotations":{"example.com/a~b":"1"}}})"_json;
  EXPECT_EQ(jsonPatch(doc, R"([{"op":"replace","path":"/metadata/annotations/example.com~1a~0b",
                               "value":"2"}])"_json),
            R"({"metadata":{"annotations":{"example.com/a~b":"2"}}})"_json);
  auto bad = applyJsonPatch(doc, R"([{"op":"add","path":"/a~2","value":1}])"_json);
  EXPECT_EQ(bad.status().code(), 422);
}

TEST(JsonPatchTest, FailuresAreAtomicAndClear) {
  json doc = R"({"spec":{"replicas":2}})"_json;
  auto failedTest = applyJsonPatch(doc, R"([{"op":"replace","path":"/spec/replicas","value":5},
      {"op":"test","path":"/spec/replicas","value":3}])"_json);
  ASSERT_FALSE(failedTest.ok());
  EXPECT_EQ(failedTest.status().code(), 422);
  EXPECT_EQ(failedTest.status().reason(), "Invalid");
  EXPECT_EQ(failedTest.status().message(), "testing value /spec/replicas failed: it is 5, not 3");

  auto missing = applyJsonPatch(doc, R"([{"op":"replace","path":"/spec/x/y","value":1}])"_json);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), 422);
  EXPECT_NE(missing.status().message().find("/spec/x/y"), std::string::npos);

  EXPECT_EQ(applyJsonPatch(doc, R"([{"op":"remove","path":"/nope"}])"_json).status().code(), 422);
  EXPECT_EQ(
      applyJsonPatch(doc, R"([{"op":"add","path":"/spec/a/b","value":1}])"_json).status().code(),
      422);
  EXPECT_EQ(applyJsonPatch(R"({"l":[1]})"_json, R"([{"op":"add","path":"/l/5","value":1}])"_json)
                .status()
                .code(),
            422);
  EXPECT_EQ(applyJsonPatch(R"({"l":[1]})"_json, R"([{"op":"add","path":"/l/01","value":1}])"_json)
                .status()
                .code(),
            422);
  EXPECT_EQ(applyJsonPatch(doc, R"([{"op":"frobnicate","path":"/spec"}])"_json).status().code(),
            422);
  EXPECT_EQ(applyJsonPatch(doc, R"([{"op":"add","path":"/x"}])"_json).status().code(), 422);
  EXPECT_EQ(applyJsonPatch(doc, R"([{"op":"move","from":"/spec","path":"/spec/inner"}])"_json)
                .status()
                .code(),
            422);
  EXPECT_EQ(applyJsonPatch(doc, R"({"op":"add"})"_json).status().code(), 400);
  EXPECT_EQ(applyJsonPatch(doc, R"([1])"_json).status().code(), 400);
}

// ---- strategic merge patch ----

json twoContainerDeployment() {
  return R"({
    "apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","labels":{"app":"web","tier":"front"},"finalizers":["a","b"]},
    "spec":{"replicas":2,
      "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{
        "containers":[
          {"name":"app","image":"nginx:1.0",
           "ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}],
           "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
          {"name":"sidecar","image":"busybox","args":["sleep","3600"]}],
        "volumes":[{"name":"data","emptyDir":{}}]}}}})"_json;
}

const json& containersOf(const json& d) { return d["spec"]["template"]["spec"]["containers"]; }

TEST(StrategicMergePatchTest, ContainerImageEditKeepsEverythingElse) {
  // What kubectl apply / set image sends for one changed image.
  json patch = R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"}],
      "containers":[{"name":"app","image":"nginx:2.0"}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  json expected = twoContainerDeployment();
  expected["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2.0";
  EXPECT_EQ(out, expected);
}

TEST(StrategicMergePatchTest, AddsContainerAndReordersBySetElementOrder) {
  json patch = R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"init"},{"name":"app"},{"name":"sidecar"}],
      "containers":[{"name":"init","image":"alpine"}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  ASSERT_EQ(containersOf(out).size(), 3u);
  EXPECT_EQ(containersOf(out)[0], R"({"name":"init","image":"alpine"})"_json);
  EXPECT_EQ(containersOf(out)[1], containersOf(twoContainerDeployment())[0]);
  EXPECT_EQ(containersOf(out)[2], containersOf(twoContainerDeployment())[1]);
}

TEST(StrategicMergePatchTest, SetElementOrderKeepsServerOnlyItemsInPlace) {
  json pod = R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})"_json;
  // The client knows only a and c, in reverse order; b was added by someone else.
  json patch = R"({"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"}]}})"_json;
  json out = smp(pod, patch, "Pod");
  // As Kubernetes' mergeSortedSlice: b preceded c on the server, so it stays before c.
  EXPECT_EQ(out["spec"]["containers"], R"([{"name":"b"},{"name":"c"},{"name":"a"}])"_json);
  json patch2 = R"({"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"c"}]}})"_json;
  EXPECT_EQ(smp(pod, patch2, "Pod")["spec"]["containers"],
            R"([{"name":"a"},{"name":"b"},{"name":"c"}])"_json);
}

TEST(StrategicMergePatchTest, DeleteContainerByDirective) {
  json patch = R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"app"}],
      "containers":[{"$patch":"delete","name":"sidecar"}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  ASSERT_EQ(containersOf(out).size(), 1u);
  EXPECT_EQ(containersOf(out)[0], containersOf(twoContainerDeployment())[0]);
}

TEST(StrategicMergePatchTest, ChangeOneEnvVar) {
  json patch = R"({"spec":{"template":{"spec":{"containers":[
      {"name":"app","$setElementOrder/env":[{"name":"A"},{"name":"B"}],
       "env":[{"name":"B","value":"22"}]}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  EXPECT_EQ(containersOf(out)[0]["env"],
            R"([{"name":"A","value":"1"},{"name":"B","value":"22"}])"_json);
  EXPECT_EQ(containersOf(out)[0]["ports"], containersOf(twoContainerDeployment())[0]["ports"]);
  EXPECT_EQ(containersOf(out)[1], containersOf(twoContainerDeployment())[1]);
  // Switching an env var from value to valueFrom: the old value is nulled out.
  json patch2 = R"({"spec":{"template":{"spec":{"containers":[{"name":"app","env":[
      {"name":"A","value":null,"valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}]}}}})"_json;
  json out2 = smp(twoContainerDeployment(), patch2, "Deployment");
  EXPECT_EQ(containersOf(out2)[0]["env"][0],
            R"({"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}})"_json);
}

TEST(StrategicMergePatchTest, ContainerPortsMergeByPortAndProtocol) {
  json patch = R"({"spec":{"template":{"spec":{"containers":[{"name":"app","ports":[
      {"containerPort":53,"protocol":"UDP","name":"dns"},{"containerPort":443}]}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  EXPECT_EQ(containersOf(out)[0]["ports"],
            R"([{"containerPort":80},{"containerPort":53,"protocol":"UDP","name":"dns"},
                {"containerPort":443}])"_json);
  // A TCP port 53 is a different element than UDP 53.
  json tcp = R"({"spec":{"template":{"spec":{"containers":[{"name":"app","ports":[
      {"containerPort":53,"protocol":"TCP"}]}]}}}})"_json;
  EXPECT_EQ(containersOf(smp(twoContainerDeployment(), tcp, "Deployment"))[0]["ports"].size(), 3u);
}

TEST(StrategicMergePatchTest, RemoveLabelWithNull) {
  json out =
      smp(twoContainerDeployment(), R"({"metadata":{"labels":{"tier":null}}})"_json, "Deployment");
  EXPECT_EQ(out["metadata"]["labels"], R"({"app":"web"})"_json);
}

TEST(StrategicMergePatchTest, ServicePortsMergeByPort) {
  json svc = R"({"spec":{"selector":{"app":"web"},"ports":[
      {"name":"http","port":80,"targetPort":8080},{"name":"https","port":443}]}})"_json;
  json patch =
      R"({"spec":{"ports":[{"port":80,"targetPort":9090},{"port":8443,"name":"alt"}]}})"_json;
  json out = smp(svc, patch, "Service");
  EXPECT_EQ(out["spec"]["ports"], R"([{"name":"http","port":80,"targetPort":9090},
      {"name":"https","port":443},{"port":8443,"name":"alt"}])"_json);
  EXPECT_EQ(out["spec"]["selector"], svc["spec"]["selector"]);
}

TEST(StrategicMergePatchTest, FinalizersAreUnionedAndDeletable) {
  json out =
      smp(twoContainerDeployment(), R"({"metadata":{"finalizers":["c","a"]}})"_json, "Deployment");
  EXPECT_EQ(out["metadata"]["finalizers"], R"(["a","b","c"])"_json);
  json removed =
      smp(twoContainerDeployment(),
          R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})"_json, "Deployment");
  EXPECT_EQ(removed["metadata"]["finalizers"], R"(["b"])"_json);
  json reordered =
      smp(twoContainerDeployment(),
          R"({"metadata":{"$setElementOrder/finalizers":["b","a"]}})"_json, "Deployment");
  EXPECT_EQ(reordered["metadata"]["finalizers"], R"(["b","a"])"_json);
  // Custom resources keep ObjectMeta semantics.
  json cr = R"({"metadata":{"finalizers":["x"]},"spec":{"items":[1,2]}})"_json;
  json crOut = smp(cr, R"({"metadata":{"finalizers":["y"]},"spec":{"items":[3]}})"_json, "Widget");
  EXPECT_EQ(crOut, R"({"metadata":{"finalizers":["x","y"]},"spec":{"items":[3]}})"_json);
}

TEST(StrategicMergePatchTest, RetainKeysOnStrategySwitch) {
  // kubectl apply switching RollingUpdate -> Recreate.
  json patch = R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate",
                                       "rollingUpdate":null}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  EXPECT_EQ(out["spec"]["strategy"], R"({"type":"Recreate"})"_json);
  // retainKeys alone also clears the fields not listed.
  json patch2 = R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}})"_json;
  EXPECT_EQ(smp(twoContainerDeployment(), patch2, "Deployment")["spec"]["strategy"],
            R"({"type":"Recreate"})"_json);
}

TEST(StrategicMergePatchTest, MapDirectives) {
  json out =
      smp(twoContainerDeployment(),
          R"({"spec":{"strategy":{"rollingUpdate":{"$patch":"delete"}}}})"_json, "Deployment");
  EXPECT_EQ(out["spec"]["strategy"], R"({"type":"RollingUpdate"})"_json);
  json replaced =
      smp(twoContainerDeployment(),
          R"({"metadata":{"labels":{"$patch":"replace","only":"this"}}})"_json, "Deployment");
  EXPECT_EQ(replaced["metadata"]["labels"], R"({"only":"this"})"_json);
  json merged = smp(twoContainerDeployment(),
                    R"({"metadata":{"labels":{"$patch":"merge","new":"x"}}})"_json, "Deployment");
  EXPECT_EQ(merged["metadata"]["labels"], R"({"app":"web","tier":"front","new":"x"})"_json);
  auto bad = applyStrategicMergePatch(twoContainerDeployment(),
                                      R"({"metadata":{"labels":{"$patch":"explode"}}})"_json,
                                      "Deployment");
  EXPECT_EQ(bad.status().code(), 400);
}

TEST(StrategicMergePatchTest, ReplaceListDirective) {
  json patch = R"({"spec":{"template":{"spec":{"containers":[
      {"name":"only","image":"x"},{"$patch":"replace"}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  EXPECT_EQ(containersOf(out), R"([{"name":"only","image":"x"}])"_json);
}

TEST(StrategicMergePatchTest, ListsWithoutStrategyAreReplaced) {
  json patch = R"({"spec":{"template":{"spec":{"containers":[
      {"name":"sidecar","args":["sleep","10"]}]}}}})"_json;
  json out = smp(twoContainerDeployment(), patch, "Deployment");
  EXPECT_EQ(containersOf(out)[1]["args"], R"(["sleep","10"])"_json);
  json tolerations = smp(R"({"spec":{"tolerations":[{"key":"a"}]}})"_json,
                         R"({"spec":{"tolerations":[{"key":"b"}]}})"_json, "Pod");
  EXPECT_EQ(tolerations["spec"]["tolerations"], R"([{"key":"b"}])"_json);
  json literal = smp(R"({"spec":{"tolerations":[{"key":"a"}]}})"_json,
                     R"({"spec":{"tolerations":[{"key":"b"},{"$patch":"replace"}]}})"_json, "Pod");
  EXPECT_EQ(literal["spec"]["tolerations"], R"([{"key":"b"}])"_json);
}

TEST(StrategicMergePatchTest, ConditionsAndAddressesMergeByType) {
  json pod = R"({"status":{"phase":"Pending","conditions":[
      {"type":"PodScheduled","status":"True"},{"type":"Ready","status":"False"}]}})"_json;
  json patch = R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],
      "podIPs":[{"ip":"10.244.0.5"}]}})"_json;
  json out = smp(pod, patch, "Pod");
  EXPECT_EQ(out["status"]["conditions"], R"([{"type":"PodScheduled","status":"True"},
      {"type":"Ready","status":"True"}])"_json);
  EXPECT_EQ(out["status"]["phase"], "Running");
  json node = R"({"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.1"},
      {"type":"Hostname","address":"n1"}]}})"_json;
  json nodeOut =
      smp(node, R"({"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.2"}]}})"_json,
          "Node");
  EXPECT_EQ(nodeOut["status"]["addresses"], R"([{"type":"InternalIP","address":"10.0.0.2"},
      {"type":"Hostname","address":"n1"}])"_json);
}

TEST(StrategicMergePatchTest, CronJobPodSpecLocation) {
  json cj = R"({"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[
      {"name":"a","image":"1"},{"name":"b","image":"1"}]}}}}}})"_json;
  json out = smp(cj, R"({"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[
      {"name":"b","image":"2"}]}}}}}})"_json,
                 "CronJob");
  EXPECT_EQ(out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
            R"([{"name":"a","image":"1"},{"name":"b","image":"2"}])"_json);
}

TEST(StrategicMergePatchTest, OwnerReferencesByUidAndNewFieldsLoseNulls) {
  json obj = R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"}]}})"_json;
  json out = smp(obj, R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"}],
                                      "annotations":{"x":"1","gone":null}}})"_json,
                 "Pod");
  EXPECT_EQ(out["metadata"]["ownerReferences"],
            R"([{"uid":"1","name":"a"},{"uid":"2","name":"b"}])"_json);
  EXPECT_EQ(out["metadata"]["annotations"], R"({"x":"1"})"_json);
}

TEST(StrategicMergePatchTest, MissingMergeKeyIsBadRequest) {
  auto r = applyStrategicMergePatch(
      twoContainerDeployment(),
      R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})"_json, "Deployment");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 400);
  EXPECT_NE(r.status().message().find("does not contain declared merge key: name"),
            std::string::npos);
  EXPECT_EQ(
      applyStrategicMergePatch(twoContainerDeployment(), "[]"_json, "Deployment").status().code(),
      400);
}

TEST(StrategicMergePatchTest, StrategyTable) {
  EXPECT_EQ(listPatchStrategy("Deployment", {"spec", "template", "spec", "containers"}).keys,
            std::vector<std::string>{"name"});
  EXPECT_EQ(listPatchStrategy("Pod", {"spec", "containers", "volumeMounts"}).keys,
            std::vector<std::string>{"mountPath"});
  EXPECT_EQ(listPatchStrategy("StatefulSet",
                              {"spec", "template", "spec", "initContainers", "volumeDevices"})
                .keys,
            std::vector<std::string>{"devicePath"});
  EXPECT_EQ(listPatchStrategy("Job", {"spec", "template", "spec", "hostAliases"}).keys,
            std::vector<std::string>{"ip"});
  EXPECT_EQ(listPatchStrategy("Pod", {"spec", "topologySpreadConstraints"}).keys,
            std::vector<std::string>{"topologyKey"});
  EXPECT_FALSE(listPatchStrategy("Pod", {"spec", "tolerations"}).merge);
  EXPECT_FALSE(listPatchStrategy("Pod", {"spec", "template", "spec", "containers"}).merge);
  EXPECT_FALSE(listPatchStrategy("Widget", {"status", "conditions"}).merge);
  EXPECT_TRUE(listPatchStrategy("Deployment", {"status", "conditions"}).merge);
}

}  // namespace
}  // namespace minik8s::api
