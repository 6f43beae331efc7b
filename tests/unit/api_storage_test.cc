// Storage kinds (PersistentVolume, PersistentVolumeClaim, StorageClass, CSIDriver): defaults,
// validation with Kubernetes' paths and messages, Table rows and schemas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/defaults.h"
#include "api/scheme.h"
#include "api/strict_decoding.h"
#include "api/table.h"
#include "api/validation.h"
#include "test_times.h"
#include "validation_messages.h"

namespace minik8s::api {
namespace {

using Errors = std::vector<std::string>;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::kSubdomainMsg;

const ResourceInfo& storageInfo(const std::string& kind) {
  const std::string group = kind == "StorageClass" || kind == "CSIDriver" ? "storage.k8s.io" : "";
  const ResourceInfo* r = Scheme::builtin().byKind(group, "v1", kind);
  EXPECT_NE(r, nullptr) << kind;
  return *r;
}

json defaulted(const std::string& kind, json obj) {
  applyDefaults(storageInfo(kind), obj);
  return obj;
}

// Defaults then validates, as the registry does; `old` is the stored object.
Errors checkStorage(const std::string& kind, const json& obj, const json* old = nullptr) {
  Errors out;
  for (const auto& c : validate(storageInfo(kind), defaulted(kind, obj), old)) {
    out.push_back(c.reason + " " + c.field + ": " + c.message);
  }
  return out;
}

// An update of `before` (stored, defaulted) to `after`.
Errors update(const std::string& kind, const json& before, const json& after) {
  const json stored = defaulted(kind, before);
  return checkStorage(kind, after, &stored);
}

// The examples of the Kubernetes documentation ("Configure a Pod to Use a PersistentVolume for
// Storage", "Storage Classes", "CSI driver object").
json hostPathVolume() {
  return R"({"apiVersion":"v1","kind":"PersistentVolume",
    "metadata":{"name":"task-pv-volume","labels":{"type":"local"}},
    "spec":{"storageClassName":"manual","capacity":{"storage":"10Gi"},
      "accessModes":["ReadWriteOnce"],"hostPath":{"path":"/mnt/data"}}})"_json;
}

json claim() {
  return R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",
    "metadata":{"name":"task-pv-claim","namespace":"default"},
    "spec":{"storageClassName":"manual","accessModes":["ReadWriteOnce"],
      "resources":{"requests":{"storage":"3Gi"}}}})"_json;
}

json boundClaim() {
  json c = claim();
  c["spec"]["volumeName"] = "task-pv-volume";
  c["status"] = R"({"phase":"Bound","accessModes":["ReadWriteOnce"],
    "capacity":{"storage":"10Gi"}})"_json;
  c["spec"]["resources"]["requests"]["storage"] = "10Gi";
  return c;
}

json storageClass() {
  return R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass",
    "metadata":{"name":"low-latency",
      "annotations":{"storageclass.kubernetes.io/is-default-class":"false"}},
    "provisioner":"csi-driver.example-vendor.example","reclaimPolicy":"Retain",
    "allowVolumeExpansion":true,"mountOptions":["discard"],
    "volumeBindingMode":"WaitForFirstConsumer","parameters":{"guaranteedReadWriteLatency":"true"}})"_json;
}

json csiDriver() {
  return R"({"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver",
    "metadata":{"name":"mycsidriver.example.com"},
    "spec":{"attachRequired":true,"podInfoOnMount":true,"fsGroupPolicy":"File",
      "volumeLifecycleModes":["Persistent","Ephemeral"],
      "tokenRequests":[{"audience":"gcp"},{"audience":"","expirationSeconds":3600}],
      "requiresRepublish":true,"seLinuxMount":true}})"_json;
}

// ---- defaults

TEST(StorageDefaultsTest, PersistentVolume) {
  json pv = defaulted("PersistentVolume", hostPathVolume());
  EXPECT_EQ(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
  EXPECT_EQ(pv["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ(pv["spec"]["hostPath"]["type"], "");
  EXPECT_EQ(pv["status"], (json{{"phase", "Pending"}}));
  json explicitPolicy = hostPathVolume();
  explicitPolicy["spec"]["persistentVolumeReclaimPolicy"] = "Delete";
  explicitPolicy["spec"]["volumeMode"] = "Block";
  explicitPolicy["status"] = {{"phase", "Bound"}};
  json kept = defaulted("PersistentVolume", explicitPolicy);
  EXPECT_EQ(kept["spec"]["persistentVolumeReclaimPolicy"], "Delete");
  EXPECT_EQ(kept["spec"]["volumeMode"], "Block");
  EXPECT_EQ(kept["status"]["phase"], "Bound");
}

TEST(StorageDefaultsTest, PersistentVolumeClaim) {
  json pvc = defaulted("PersistentVolumeClaim", claim());
  EXPECT_EQ(pvc["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ(pvc["status"], (json{{"phase", "Pending"}}));
  EXPECT_FALSE(pvc["spec"].contains("volumeName"));
}

TEST(StorageDefaultsTest, StorageClass) {
  json sc = defaulted("StorageClass", R"({"metadata":{"name":"s"},"provisioner":"p"})"_json);
  EXPECT_EQ(sc["reclaimPolicy"], "Delete");
  EXPECT_EQ(sc["volumeBindingMode"], "Immediate");
  EXPECT_FALSE(sc.contains("allowVolumeExpansion"));
  json kept = defaulted("StorageClass", storageClass());
  EXPECT_EQ(kept["reclaimPolicy"], "Retain");
  EXPECT_EQ(kept["volumeBindingMode"], "WaitForFirstConsumer");
}

TEST(StorageDefaultsTest, CSIDriver) {
  json d = defaulted("CSIDriver", R"({"metadata":{"name":"d.example.com"}})"_json);
  EXPECT_EQ(d["spec"], R"({"attachRequired":true,"podInfoOnMount":false,"storageCapacity":false,
    "fsGroupPolicy":"ReadWriteOnceWithFSType","volumeLifecycleModes":["Persistent"],
    "requiresRepublish":false,"seLinuxMount":false})"_json);
  json kept = defaulted(
      "CSIDriver",
      R"({"metadata":{"name":"d"},"spec":{"attachRequired":false,"volumeLifecycleModes":[]}})"_json);
  EXPECT_EQ(kept["spec"]["attachRequired"], false);
  EXPECT_EQ(kept["spec"]["volumeLifecycleModes"], json::array({"Persistent"}));
}

// ---- PersistentVolume

TEST(PersistentVolumeValidationTest, DocumentationExamplesAreValid) {
  EXPECT_EQ(checkStorage("PersistentVolume", hostPathVolume()), Errors{});
  json stored = defaulted("PersistentVolume", hostPathVolume());
  EXPECT_EQ(checkStorage("PersistentVolume", hostPathVolume(), &stored), Errors{});
  EXPECT_EQ(checkStorage("PersistentVolume", R"({"metadata":{"name":"pv0003"},"spec":{
      "capacity":{"storage":"5Gi"},"volumeMode":"Filesystem","accessModes":["ReadWriteOnce"],
      "persistentVolumeReclaimPolicy":"Recycle","storageClassName":"slow",
      "mountOptions":["hard","nfsvers=4.1"],"nfs":{"path":"/tmp","server":"172.17.0.2"}}})"_json),
            Errors{});
  // Sources minik8s does not mount are still accepted as Kubernetes accepts them.
  EXPECT_EQ(checkStorage("PersistentVolume", R"({"metadata":{"name":"g"},"spec":{
      "capacity":{"storage":"1Gi"},"accessModes":["ReadWriteMany"],
      "glusterfs":{"endpoints":"glusterfs-cluster","path":"kube_vol"}}})"_json),
            Errors{});
}

TEST(PersistentVolumeValidationTest, CapacityAccessModesAndSourceRequired) {
  EXPECT_EQ(checkStorage("PersistentVolume", R"({"metadata":{"name":"pv"},"spec":{}})"_json),
            (Errors{"FieldValueRequired spec.accessModes: Required value",
                    "FieldValueRequired spec.capacity: Required value",
                    "FieldValueNotSupported spec.capacity: Unsupported value: {}: supported "
                    "values: \"storage\"",
                    "FieldValueRequired spec: Required value: must specify a volume type"}));
}

TEST(PersistentVolumeValidationTest, Capacity) {
  json pv = hostPathVolume();
  pv["spec"]["capacity"]["storage"] = "0";
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueInvalid spec.capacity[storage]: Invalid value: \"0\": must be "
                   "greater than zero"});
  pv["spec"]["capacity"]["storage"] = "-1Gi";
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            (Errors{"FieldValueInvalid spec.capacity[storage]: Invalid value: -1073741824: must "
                    "be a valid resource quantity",
                    "FieldValueInvalid spec.capacity[storage]: Invalid value: \"-1Gi\": must be "
                    "greater than zero"}));
  pv["spec"]["capacity"] = {{"storage", "1Gi"}, {"cpu", "1"}};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueNotSupported spec.capacity: Unsupported value: "
                   "{\"cpu\":\"1\",\"storage\":\"1Gi\"}: supported values: \"storage\""});
  pv["spec"]["capacity"] = {{"storage", "lots"}};
  EXPECT_THAT(checkStorage("PersistentVolume", pv),
              ElementsAre(StartsWith("FieldValueInvalid spec.capacity[storage]: Invalid value: "
                                     "\"lots\": ")));
}

TEST(PersistentVolumeValidationTest, AccessModes) {
  json pv = hostPathVolume();
  pv["spec"]["accessModes"] = {"ReadWriteOnce", "ReadWriteSome"};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueNotSupported spec.accessModes: Unsupported value: "
                   "\"ReadWriteSome\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", "
                   "\"ReadWriteOnce\", \"ReadWriteOncePod\""});
  pv["spec"]["accessModes"] = {"ReadWriteOncePod", "ReadOnlyMany"};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueForbidden spec.accessModes: Forbidden: may not use "
                   "ReadWriteOncePod with other access modes"});
  pv["spec"]["accessModes"] = {"ReadWriteOncePod"};
  EXPECT_EQ(checkStorage("PersistentVolume", pv), Errors{});
}

TEST(PersistentVolumeValidationTest, ExactlyOneSource) {
  json pv = hostPathVolume();
  pv["spec"]["nfs"] = {{"server", "10.0.0.1"}, {"path", "/export"}};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueForbidden spec.nfs: Forbidden: may not specify more than 1 volume "
                   "type"});
}

TEST(PersistentVolumeValidationTest, Sources) {
  json pv = hostPathVolume();
  pv["spec"]["hostPath"] = {{"path", ""}};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueRequired spec.hostPath.path: Required value"});
  pv["spec"]["hostPath"] = {{"path", "/mnt/../etc"}, {"type", "Dir"}};
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            (Errors{"FieldValueInvalid spec.hostPath.path: Invalid value: \"/mnt/../etc\": must "
                    "not contain '..'",
                    "FieldValueNotSupported spec.hostPath.type: Unsupported value: \"Dir\": "
                    "supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", "
                    "\"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\""}));

  json local = hostPathVolume();
  local["spec"].erase("hostPath");
  local["spec"]["local"] = {{"path", "/mnt/disks/ssd1"}};
  EXPECT_EQ(checkStorage("PersistentVolume", local),
            Errors{"FieldValueRequired spec.nodeAffinity: Required value: Local volume requires "
                   "node affinity"});
  local["spec"]["nodeAffinity"] = json::object();
  EXPECT_EQ(checkStorage("PersistentVolume", local),
            Errors{"FieldValueRequired spec.nodeAffinity.required: Required value: must specify "
                   "required node constraints"});
  local["spec"]["nodeAffinity"]["required"] = {{"nodeSelectorTerms", json::array()}};
  EXPECT_EQ(checkStorage("PersistentVolume", local),
            Errors{"FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms: Required "
                   "value: must have at least one node selector term"});
  local["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = R"([
    {"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"Is","values":["n1"]},
                         {"key":"disk","operator":"Exists","values":["ssd"]}],
     "matchFields":[{"key":"metadata.uid","operator":"In","values":["a","b"]}]}])"_json;
  EXPECT_EQ(
      checkStorage("PersistentVolume", local),
      (Errors{"FieldValueInvalid spec.nodeAffinity.required.nodeSelectorTerms[0]."
              "matchExpressions[0].operator: Invalid value: \"Is\": not a valid selector operator",
              "FieldValueForbidden spec.nodeAffinity.required.nodeSelectorTerms[0]."
              "matchExpressions[1].values: Forbidden: may not be specified when `operator` is "
              "'Exists' or 'DoesNotExist'",
              "FieldValueRequired spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0]."
              "values: Required value: must be only one value when `operator` is 'In' or 'NotIn' "
              "for node field selector",
              "FieldValueInvalid spec.nodeAffinity.required.nodeSelectorTerms[0].matchFields[0]."
              "key: Invalid value: \"metadata.uid\": not a valid field selector key"}));

  json csi = hostPathVolume();
  csi["spec"].erase("hostPath");
  csi["spec"]["csi"] = {{"controllerExpandSecretRef", {{"name", "s"}}}};
  EXPECT_EQ(checkStorage("PersistentVolume", csi),
            (Errors{"FieldValueRequired spec.csi.driver: Required value",
                    "FieldValueInvalid spec.csi.driver: Invalid value: \"\": " + kSubdomainMsg,
                    "FieldValueRequired spec.csi.volumeHandle: Required value",
                    "FieldValueRequired spec.csi.controllerExpandSecretRef.namespace: Required "
                    "value"}));
}

TEST(PersistentVolumeValidationTest, PolicyClassAndMode) {
  json pv = hostPathVolume();
  pv["spec"]["persistentVolumeReclaimPolicy"] = "Keep";
  pv["spec"]["storageClassName"] = "Fast_1";
  pv["spec"]["volumeMode"] = "Raw";
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            (Errors{"FieldValueNotSupported spec.persistentVolumeReclaimPolicy: Unsupported "
                    "value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\"",
                    "FieldValueInvalid spec.storageClassName: Invalid value: \"Fast_1\": " +
                        kSubdomainMsg,
                    "FieldValueNotSupported spec.volumeMode: Unsupported value: \"Raw\": "
                    "supported values: \"Block\", \"Filesystem\""}));
  // volumeMode is a pointer: an empty string is not defaulted but refused.
  pv = hostPathVolume();
  pv["spec"]["volumeMode"] = "";
  EXPECT_EQ(checkStorage("PersistentVolume", pv),
            Errors{"FieldValueNotSupported spec.volumeMode: Unsupported value: \"\": supported "
                   "values: \"Block\", \"Filesystem\""});
  pv = hostPathVolume();
  pv["spec"]["hostPath"]["path"] = "/tmp/..";
  pv["spec"]["persistentVolumeReclaimPolicy"] = "Recycle";
  EXPECT_THAT(checkStorage("PersistentVolume", pv),
              ::testing::Contains("FieldValueForbidden spec.persistentVolumeReclaimPolicy: "
                                  "Forbidden: may not be 'recycle' for a hostPath mount of '/'"));
}

TEST(PersistentVolumeValidationTest, SourceImmutableCapacityMutable) {
  json changed = hostPathVolume();
  changed["spec"]["capacity"]["storage"] = "20Gi";
  changed["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "task-pv-claim"}};
  changed["spec"]["persistentVolumeReclaimPolicy"] = "Delete";
  EXPECT_EQ(update("PersistentVolume", hostPathVolume(), changed), Errors{});
  changed["spec"]["hostPath"]["path"] = "/mnt/other";
  Errors errs = update("PersistentVolume", hostPathVolume(), changed);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_THAT(errs[0], StartsWith("FieldValueForbidden spec.persistentvolumesource: Forbidden: "
                                  "spec.persistentvolumesource is immutable after creation\n"));
  EXPECT_THAT(errs[0], HasSubstr("/mnt/other"));
  json block = hostPathVolume();
  block["spec"]["volumeMode"] = "Block";
  EXPECT_EQ(update("PersistentVolume", hostPathVolume(), block),
            Errors{"FieldValueInvalid volumeMode: Invalid value: \"Block\": field is immutable"});
}

TEST(PersistentVolumeValidationTest, CsiExpandSecretMayBeAdded) {
  json pv = hostPathVolume();
  pv["spec"].erase("hostPath");
  pv["spec"]["csi"] = {{"driver", "hostpath.csi.k8s.io"}, {"volumeHandle", "v1"}};
  json expanded = pv;
  expanded["spec"]["csi"]["controllerExpandSecretRef"] = {{"name", "s"}, {"namespace", "d"}};
  EXPECT_EQ(update("PersistentVolume", pv, expanded), Errors{});
  json other = expanded;
  other["spec"]["csi"]["volumeHandle"] = "v2";
  EXPECT_EQ(update("PersistentVolume", pv, other).size(), 1u);
}

// ---- PersistentVolumeClaim

TEST(PersistentVolumeClaimValidationTest, RequiredFields) {
  EXPECT_EQ(checkStorage("PersistentVolumeClaim", claim()), Errors{});
  EXPECT_EQ(checkStorage("PersistentVolumeClaim",
                         R"({"metadata":{"name":"c","namespace":"default"},"spec":{}})"_json),
            (Errors{"FieldValueRequired spec.accessModes: Required value: at least 1 access "
                    "mode is required",
                    "FieldValueRequired spec.resources[storage]: Required value"}));
  EXPECT_EQ(
      checkStorage("PersistentVolumeClaim", R"({"metadata":{"name":"c"},"spec":{}})"_json).front(),
      "FieldValueRequired metadata.namespace: Required value");
  json c = claim();
  c["spec"]["resources"]["requests"]["storage"] = 0;
  EXPECT_EQ(checkStorage("PersistentVolumeClaim", c),
            Errors{"FieldValueInvalid spec.resources[storage]: Invalid value: \"0\": must be "
                   "greater than zero"});
}

TEST(PersistentVolumeClaimValidationTest, SelectorModesAndDataSource) {
  json c = claim();
  c["spec"]["selector"] = R"({"matchExpressions":[{"key":"tier","operator":"Bad"}]})"_json;
  c["spec"]["accessModes"] = {"ReadWriteOncePod", "ReadWriteMany"};
  c["spec"]["dataSource"] = {{"kind", "VolumeSnapshot"}, {"name", "snap"}};
  c["spec"]["volumeMode"] = "Raw";
  EXPECT_EQ(checkStorage("PersistentVolumeClaim", c),
            (Errors{"FieldValueForbidden spec.accessModes: Forbidden: may not use "
                    "ReadWriteOncePod with other access modes",
                    "FieldValueInvalid spec.selector.matchExpressions[0].operator: Invalid value: "
                    "\"Bad\": not a valid selector operator",
                    "FieldValueNotSupported spec.volumeMode: Unsupported value: \"Raw\": "
                    "supported values: \"Block\", \"Filesystem\"",
                    "FieldValueInvalid spec.dataSource: Invalid value: \"VolumeSnapshot\": must "
                    "be 'PersistentVolumeClaim' when referencing the default apiGroup"}));
  c = claim();
  c["spec"]["dataSource"] = {
      {"apiGroup", "snapshot.storage.k8s.io"}, {"kind", "VolumeSnapshot"}, {"name", "a"}};
  c["spec"]["dataSourceRef"] = {
      {"apiGroup", "snapshot.storage.k8s.io"}, {"kind", "VolumeSnapshot"}, {"name", "b"}};
  EXPECT_EQ(checkStorage("PersistentVolumeClaim", c),
            Errors{"FieldValueInvalid spec: Invalid value: spec.dataSource: must match "
                   "dataSourceRef"});
}

TEST(PersistentVolumeClaimValidationTest, SpecImmutableExceptGrowingBoundRequests) {
  json grown = claim();
  grown["spec"]["resources"]["requests"]["storage"] = "5Gi";
  Errors errs = update("PersistentVolumeClaim", claim(), grown);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_THAT(errs[0], StartsWith("FieldValueForbidden spec: Forbidden: spec is immutable after "
                                  "creation except resources.requests and "
                                  "volumeAttributesClassName for bound claims\n"));

  json bigger = boundClaim();
  bigger["spec"]["resources"]["requests"]["storage"] = "20Gi";
  EXPECT_EQ(update("PersistentVolumeClaim", boundClaim(), bigger), Errors{});
  // Back down to above the capacity recovers from a failed expansion; not below it.
  json recovered = bigger;
  recovered["spec"]["resources"]["requests"]["storage"] = "11Gi";
  EXPECT_EQ(update("PersistentVolumeClaim", bigger, recovered), Errors{});
  json shrunk = bigger;
  shrunk["spec"]["resources"]["requests"]["storage"] = "10Gi";
  EXPECT_EQ(update("PersistentVolumeClaim", bigger, shrunk),
            Errors{"FieldValueForbidden spec.resources.requests.storage: Forbidden: field can not "
                   "be less than status.capacity"});

  json otherClass = boundClaim();
  otherClass["spec"]["storageClassName"] = "fast";
  errs = update("PersistentVolumeClaim", boundClaim(), otherClass);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_THAT(errs[0], HasSubstr("+ storageClassName: \"fast\""));
}

TEST(PersistentVolumeClaimValidationTest, VolumeNameAndClassSetOnce) {
  json c = claim();
  c["spec"].erase("storageClassName");
  json bound = c;
  bound["spec"]["volumeName"] = "pv-1";
  bound["spec"]["storageClassName"] = "standard";
  EXPECT_EQ(update("PersistentVolumeClaim", c, bound), Errors{});
  json rebound = bound;
  rebound["spec"]["volumeName"] = "pv-2";
  EXPECT_EQ(update("PersistentVolumeClaim", bound, rebound).size(), 1u);
  json mode = claim();
  mode["spec"]["volumeMode"] = "Block";
  Errors errs = update("PersistentVolumeClaim", claim(), mode);
  EXPECT_THAT(errs, ::testing::Contains("FieldValueInvalid volumeMode: Invalid value: \"Block\": "
                                        "field is immutable"));
}

// ---- StorageClass

TEST(StorageClassValidationTest, Fields) {
  EXPECT_EQ(checkStorage("StorageClass", storageClass()), Errors{});
  json sc = storageClass();
  sc.erase("provisioner");
  sc["reclaimPolicy"] = "Recycle";
  sc["volumeBindingMode"] = "Later";
  sc["parameters"] = {{"", "x"}};
  EXPECT_EQ(checkStorage("StorageClass", sc),
            (Errors{"FieldValueRequired provisioner: Required value",
                    "FieldValueInvalid parameters: Invalid value: \"\": field can not be empty.",
                    "FieldValueNotSupported reclaimPolicy: Unsupported value: \"Recycle\": "
                    "supported values: \"Delete\", \"Retain\"",
                    "FieldValueNotSupported volumeBindingMode: Unsupported value: \"Later\": "
                    "supported values: \"Immediate\", \"WaitForFirstConsumer\""}));
  sc = storageClass();
  sc["provisioner"] = "Example.com/Bad Name";
  EXPECT_THAT(checkStorage("StorageClass", sc),
              ElementsAre(StartsWith("FieldValueInvalid provisioner: Invalid value: "
                                     "\"example.com/bad name\": name part must consist of")));
  sc = storageClass();
  sc["allowedTopologies"] = R"([
    {"matchLabelExpressions":[{"key":"topology.kubernetes.io/zone","values":["a","a"]}]},
    {"matchLabelExpressions":[{"key":"topology.kubernetes.io/zone","values":["a"]}]},
    {"matchLabelExpressions":[{"key":"rack","values":[]}]}])"_json;
  EXPECT_EQ(checkStorage("StorageClass", sc),
            (Errors{"FieldValueDuplicate allowedTopologies[0].matchLabelExpressions[0].values[1]: "
                    "Duplicate value: \"a\"",
                    "FieldValueDuplicate allowedTopologies[1].matchLabelExpressions: Duplicate "
                    "value: \"\"",
                    "FieldValueRequired allowedTopologies[2].matchLabelExpressions[0].values: "
                    "Required value"}));
}

TEST(StorageClassValidationTest, ProvisionerParametersPolicyAndBindingImmutable) {
  json changed = storageClass();
  changed["allowVolumeExpansion"] = false;
  changed["mountOptions"] = {"ro"};
  changed["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] = "true";
  EXPECT_EQ(update("StorageClass", storageClass(), changed), Errors{});
  changed["provisioner"] = "other.example";
  changed["parameters"]["guaranteedReadWriteLatency"] = "false";
  changed["reclaimPolicy"] = "Delete";
  changed["volumeBindingMode"] = "Immediate";
  EXPECT_EQ(update("StorageClass", storageClass(), changed),
            (Errors{"FieldValueForbidden parameters: Forbidden: updates to parameters are "
                    "forbidden.",
                    "FieldValueForbidden provisioner: Forbidden: updates to provisioner are "
                    "forbidden.",
                    "FieldValueForbidden reclaimPolicy: Forbidden: updates to reclaimPolicy are "
                    "forbidden.",
                    "FieldValueInvalid volumeBindingMode: Invalid value: \"Immediate\": field is "
                    "immutable"}));
}

// ---- CSIDriver

TEST(CSIDriverValidationTest, Fields) {
  EXPECT_EQ(checkStorage("CSIDriver", csiDriver()), Errors{});
  json d = csiDriver();
  d["metadata"]["name"] = "My_Driver";
  d["spec"]["fsGroupPolicy"] = "Any";
  d["spec"]["tokenRequests"] = R"([{"audience":"a","expirationSeconds":60},{"audience":"a"}])"_json;
  d["spec"]["volumeLifecycleModes"] = {"Forever"};
  EXPECT_EQ(
      checkStorage("CSIDriver", d),
      (Errors{"FieldValueInvalid metadata.name: Invalid value: \"My_Driver\": " + kSubdomainMsg,
              "FieldValueNotSupported spec.fsGroupPolicy: Unsupported value: \"Any\": "
              "supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"",
              "FieldValueInvalid spec.tokenRequests[0].expirationSeconds: Invalid value: "
              "60: may not specify a duration less than 10 minutes",
              "FieldValueDuplicate spec.tokenRequests[1].audience: Duplicate value: \"a\"",
              "FieldValueNotSupported spec.volumeLifecycleModes: Unsupported value: "
              "\"Forever\": supported values: \"Persistent\", \"Ephemeral\""}));
}

TEST(CSIDriverValidationTest, AttachRequiredAndModesImmutable) {
  json changed = csiDriver();
  changed["spec"]["podInfoOnMount"] = false;
  changed["spec"]["fsGroupPolicy"] = "None";
  changed["spec"]["storageCapacity"] = true;
  EXPECT_EQ(update("CSIDriver", csiDriver(), changed), Errors{});
  changed["spec"]["attachRequired"] = false;
  changed["spec"]["volumeLifecycleModes"] = {"Persistent"};
  EXPECT_EQ(update("CSIDriver", csiDriver(), changed),
            (Errors{"FieldValueInvalid spec.attachedRequired: Invalid value: false: field is "
                    "immutable",
                    "FieldValueInvalid spec.volumeLifecycleModes: Invalid value: [\"Persistent\"]: "
                    "field is immutable"}));
}

// ---- Table rows

// 2024-01-02T03:04:05Z; the objects were created 4m5s before.
using testing::kNow;

json created(json obj) {
  obj["metadata"]["creationTimestamp"] = "2024-01-02T03:00:00Z";
  return obj;
}

std::vector<std::string> columnNames(const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& c : tableColumns(kind)) out.push_back(c.name + (c.priority ? "*" : ""));
  return out;
}

TEST(StorageTableTest, PersistentVolume) {
  EXPECT_EQ(columnNames("PersistentVolume"),
            (std::vector<std::string>{"Name", "Capacity", "Access Modes", "Reclaim Policy",
                                      "Status", "Claim", "StorageClass", "VolumeAttributesClass",
                                      "Reason", "Age", "VolumeMode*"}));
  json pv = created(defaulted("PersistentVolume", hostPathVolume()));
  EXPECT_EQ(tableCells("PersistentVolume", pv, kNow),
            R"(["task-pv-volume","10Gi","RWO","Retain","Pending","","manual","<unset>","",
                "4m5s","Filesystem"])"_json);
  pv["spec"]["capacity"]["storage"] = "1024Mi";
  pv["spec"]["accessModes"] = {"ReadWriteOncePod", "ReadOnlyMany", "ReadWriteOnce", "ReadWriteOnce",
                               "ReadWriteMany"};
  pv["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "task-pv-claim"}};
  pv["spec"]["volumeAttributesClassName"] = "gold";
  pv["spec"].erase("volumeMode");
  pv["status"] = {{"phase", "Released"}, {"reason", "Gone"}};
  pv["metadata"]["deletionTimestamp"] = "2024-01-02T03:04:00Z";
  EXPECT_EQ(tableCells("PersistentVolume", pv, kNow),
            R"(["task-pv-volume","1Gi","RWO,ROX,RWX,RWOP","Retain","Terminating",
                "default/task-pv-claim","manual","gold","Gone","4m5s","<unset>"])"_json);
}

TEST(StorageTableTest, PersistentVolumeClaim) {
  EXPECT_EQ(
      columnNames("PersistentVolumeClaim"),
      (std::vector<std::string>{"Name", "Status", "Volume", "Capacity", "Access Modes",
                                "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode*"}));
  json pending = created(defaulted("PersistentVolumeClaim", claim()));
  EXPECT_EQ(tableCells("PersistentVolumeClaim", pending, kNow),
            R"(["task-pv-claim","Pending","","","","manual","<unset>","4m5s","Filesystem"])"_json);
  json bound = created(defaulted("PersistentVolumeClaim", boundClaim()));
  bound["metadata"]["annotations"] = {{"volume.beta.kubernetes.io/storage-class", "beta"}};
  EXPECT_EQ(tableCells("PersistentVolumeClaim", bound, kNow),
            R"(["task-pv-claim","Bound","task-pv-volume","10Gi","RWO","beta","<unset>","4m5s",
                "Filesystem"])"_json);
}

TEST(StorageTableTest, StorageClassAndCSIDriver) {
  EXPECT_EQ(columnNames("StorageClass"),
            (std::vector<std::string>{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode",
                                      "AllowVolumeExpansion", "Age"}));
  json sc = created(storageClass());
  EXPECT_EQ(tableCells("StorageClass", sc, kNow),
            R"(["low-latency","csi-driver.example-vendor.example","Retain",
                "WaitForFirstConsumer",true,"4m5s"])"_json);
  json standard = created(R"({"metadata":{"name":"standard","annotations":{
      "storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"p"})"_json);
  EXPECT_EQ(tableCells("StorageClass", standard, kNow),
            R"j(["standard (default)","p","Delete","Immediate",false,"4m5s"])j"_json);

  EXPECT_EQ(columnNames("CSIDriver"),
            (std::vector<std::string>{"Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity",
                                      "TokenRequests", "RequiresRepublish", "Modes", "Age"}));
  EXPECT_EQ(tableCells("CSIDriver", created(csiDriver()), kNow),
            R"(["mycsidriver.example.com",true,true,false,"gcp,",true,"Persistent,Ephemeral",
                "4m5s"])"_json);
  EXPECT_EQ(tableCells("CSIDriver", created(R"({"metadata":{"name":"d"},"spec":{}})"_json), kNow),
            R"(["d",true,false,false,"<unset>",false,"<none>","4m5s"])"_json);
}

// ---- schemas

TEST(StorageSchemaTest, DocumentationExamplesDecodeStrictly) {
  for (const auto& [kind, obj] :
       {std::pair{"PersistentVolume", hostPathVolume()},
        std::pair{"PersistentVolumeClaim", claim()}, std::pair{"StorageClass", storageClass()},
        std::pair{"CSIDriver", csiDriver()}}) {
    SchemaFindings f = checkAgainstSchema(storageInfo(kind), obj);
    EXPECT_TRUE(f.empty()) << kind << " " << json(f.unknownFields).dump()
                           << json(f.typeErrors).dump();
  }
  json pv = hostPathVolume();
  pv["spec"]["capacty"] = {{"storage", "1Gi"}};
  pv["spec"]["hostPath"]["kind"] = "dir";
  EXPECT_EQ(checkAgainstSchema(storageInfo("PersistentVolume"), pv).unknownFields,
            (std::vector<std::string>{"spec.capacty", "spec.hostPath.kind"}));
}

}  // namespace
}  // namespace minik8s::api
