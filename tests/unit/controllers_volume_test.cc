// The persistentvolume-binder and the pvc-/pv-protection controllers against a real in-process
// API server, running as in kube-controller-manager: static binding (smallest fit, pre-bound
// either way), phases, Released under Retain, Failed under Delete without a provisioner, the
// Events of a claim nothing serves, the provisioner annotation, and deletions that wait while a
// pod uses the claim.
#include <gtest/gtest.h>

#include <thread>

#include "api/persistent_volumes.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "controllers/volume/volume_protection_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

class VolumeControllersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    volumes = std::make_unique<client::Informer>(*rest, kPersistentVolumes);
    claims = std::make_unique<client::Informer>(*rest, kPersistentVolumeClaims);
    classes = std::make_unique<client::Informer>(*rest, kStorageClasses);
    pods = std::make_unique<client::Informer>(*rest, res::kPods);
    addNamespaceIndex(*pods);
    PersistentVolumeControllerOptions o;
    o.events = &events;
    binder = std::make_unique<PersistentVolumeController>(*rest, *volumes, *claims, *classes, o);
    protection = std::make_unique<VolumeProtectionController>(*rest, *claims, *volumes, *pods);
    for (auto* i : {volumes.get(), claims.get(), classes.get(), pods.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
    binder->start();
    protection->start();
  }
  void TearDown() override {
    binder->stop();
    protection->stop();
    for (auto* i : {volumes.get(), claims.get(), classes.get(), pods.get()}) i->stop();
    apiServer.stop();
  }

  void createVolume(const std::string& name, const std::string& size, json extra = json::object()) {
    json pv = {{"apiVersion", "v1"},
               {"kind", "PersistentVolume"},
               {"metadata", {{"name", name}}},
               {"spec",
                {{"capacity", {{"storage", size}}},
                 {"accessModes", {"ReadWriteOnce"}},
                 {"hostPath", {{"path", "/tmp/" + name}}}}}};
    pv["spec"].update(extra);
    auto r = rest->create(kPersistentVolumes, "", pv);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  void createClaim(const std::string& name, const std::string& size, json extra = json::object()) {
    json pvc = {
        {"apiVersion", "v1"},
        {"kind", "PersistentVolumeClaim"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"accessModes", {"ReadWriteOnce"}}, {"resources", {{"requests", {{"storage", size}}}}}}}};
    pvc["spec"].update(extra);
    auto r = rest->create(kPersistentVolumeClaims, "default", pvc);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  json volume(const std::string& name) {
    auto r = rest->get(kPersistentVolumes, "", name);
    return r.ok() ? *r : json();
  }
  json claim(const std::string& name) {
    auto r = rest->get(kPersistentVolumeClaims, "default", name);
    return r.ok() ? *r : json();
  }
  static std::string at(const json& obj, const char* pointer) {
    if (!obj.is_object()) return "<gone>";
    if (std::string(pointer).empty()) return "<present>";
    return obj.value(json::json_pointer(pointer), std::string());
  }
  // Polls until `cond` holds (controllers run on their own threads).
  bool eventually(const std::function<bool()>& cond) {
    for (int i = 0; i < 250; ++i) {
      if (cond()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return cond();
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> volumes, claims, classes, pods;
  client::FakeEventRecorder events;
  std::unique_ptr<PersistentVolumeController> binder;
  std::unique_ptr<VolumeProtectionController> protection;
};

TEST_F(VolumeControllersTest, BindsTheSmallestFittingVolumeBothWays) {
  createVolume("big", "10Gi");
  createVolume("small", "2Gi");
  createVolume("tiny", "500Mi");
  ASSERT_TRUE(eventually([&] { return at(volume("tiny"), "/status/phase") == "Available"; }));
  createClaim("data", "1Gi");
  ASSERT_TRUE(eventually([&] { return at(claim("data"), "/status/phase") == "Bound"; }))
      << claim("data").dump();
  json c = claim("data");
  EXPECT_EQ(at(c, "/spec/volumeName"), "small");
  EXPECT_EQ(c["status"]["capacity"]["storage"], "2Gi");
  EXPECT_EQ(c["status"]["accessModes"], json({"ReadWriteOnce"}));
  EXPECT_EQ(c["metadata"]["annotations"][api::kAnnBindCompleted], "yes");
  EXPECT_EQ(c["metadata"]["annotations"][api::kAnnBoundByController], "yes");
  json v = volume("small");
  EXPECT_EQ(at(v, "/status/phase"), "Bound");
  EXPECT_EQ(v["spec"]["claimRef"]["uid"], c["metadata"]["uid"]);
  EXPECT_EQ(v["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(at(volume("big"), "/status/phase"), "Available");
  // Both carry their protection finalizers.
  EXPECT_TRUE(eventually([&] {
    return claim("data")["metadata"].value("finalizers", json::array()) ==
               json({api::kPvcProtectionFinalizer}) &&
           volume("small")["metadata"].value("finalizers", json::array()) ==
               json({api::kPvProtectionFinalizer});
  }));
}

TEST_F(VolumeControllersTest, PreBoundEitherWay) {
  createVolume("chosen", "5Gi");
  createVolume("cheaper", "1Gi");
  createClaim("by-name", "1Gi", {{"volumeName", "chosen"}});
  ASSERT_TRUE(eventually([&] { return at(claim("by-name"), "/status/phase") == "Bound"; }));
  EXPECT_EQ(at(claim("by-name"), "/spec/volumeName"), "chosen");
  // A volume reserved for a claim by the administrator (claimRef without uid).
  createVolume("reserved", "3Gi", {{"claimRef", {{"namespace", "default"}, {"name", "mine"}}}});
  createClaim("mine", "1Gi");
  ASSERT_TRUE(eventually([&] { return at(claim("mine"), "/status/phase") == "Bound"; }));
  EXPECT_EQ(at(claim("mine"), "/spec/volumeName"), "reserved");
  EXPECT_EQ(at(volume("cheaper"), "/status/phase"), "Available");
  // A claim naming a volume that is someone else's stays Pending, saying so.
  createClaim("thief", "1Gi", {{"volumeName", "chosen"}});
  ASSERT_TRUE(eventually([&] { return events.find("FailedBinding").has_value(); }));
  EXPECT_EQ(events.find("FailedBinding")->message,
            "volume \"chosen\" already bound to a different claim.");
  EXPECT_EQ(at(claim("thief"), "/status/phase"), "Pending");
}

TEST_F(VolumeControllersTest, ReleasedUnderRetainFailedUnderDeleteWithoutProvisioner) {
  createVolume("keep", "1Gi");
  createClaim("a", "1Gi");
  ASSERT_TRUE(eventually([&] { return at(volume("keep"), "/status/phase") == "Bound"; }));
  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "a").ok());
  ASSERT_TRUE(eventually([&] { return at(volume("keep"), "/status/phase") == "Released"; }))
      << volume("keep").dump();
  EXPECT_EQ(at(claim("a"), ""), "<gone>");
  // Released volumes are not handed to new claims.
  createClaim("b", "1Gi");
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(at(claim("b"), "/status/phase"), "Pending");

  createVolume("drop", "1Gi", {{"persistentVolumeReclaimPolicy", "Delete"}});
  ASSERT_TRUE(eventually([&] { return at(claim("b"), "/status/phase") == "Bound"; }));
  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "b").ok());
  ASSERT_TRUE(eventually([&] { return at(volume("drop"), "/status/phase") == "Failed"; }));
  EXPECT_NE(at(volume("drop"), "/status/message").find("no deletable volume plugin matched"),
            std::string::npos);
  // A volume no longer Bound may be deleted (its pv-protection finalizer goes).
  ASSERT_TRUE(rest->remove(kPersistentVolumes, "", "keep").ok());
  EXPECT_TRUE(eventually([&] { return at(volume("keep"), "") == "<gone>"; }));
}

TEST_F(VolumeControllersTest, ClaimsNothingServesSayWhy) {
  createClaim("no-class", "1Gi");
  ASSERT_TRUE(eventually([&] { return events.find("FailedBinding").has_value(); }));
  EXPECT_EQ(events.find("FailedBinding")->message,
            "no persistent volumes available for this claim and no storage class is set");
  createClaim("ghost-class", "1Gi", {{"storageClassName", "ghost"}});
  ASSERT_TRUE(eventually([&] { return events.find("ProvisioningFailed").has_value(); }));
  EXPECT_EQ(events.find("ProvisioningFailed")->message,
            "storageclass.storage.k8s.io \"ghost\" not found");
  json sc = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata", {{"name", "fast"}}},
             {"provisioner", "example.com/fast"}};
  ASSERT_TRUE(rest->create(kStorageClasses, "", sc).ok());
  createClaim("dynamic", "1Gi", {{"storageClassName", "fast"}});
  ASSERT_TRUE(eventually([&] {
    return claim("dynamic")["metadata"]
               .value("annotations", json::object())
               .value(api::kAnnStorageProvisioner, "") == "example.com/fast";
  }));
  EXPECT_TRUE(eventually([&] { return events.find("ExternalProvisioning").has_value(); }));
  EXPECT_EQ(at(claim("dynamic"), "/status/phase"), "Pending");
  // A volume of that class arriving later is bound.
  createVolume("fast-1", "1Gi", {{"storageClassName", "fast"}});
  EXPECT_TRUE(eventually([&] { return at(claim("dynamic"), "/status/phase") == "Bound"; }));
}

TEST_F(VolumeControllersTest, AClaimInUseIsDeletedOnlyAfterItsPod) {
  createVolume("v", "1Gi");
  createClaim("used", "1Gi");
  ASSERT_TRUE(eventually([&] {
    return at(claim("used"), "/status/phase") == "Bound" &&
           claim("used")["metadata"].value("finalizers", json::array()).size() == 1;
  }));
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "db"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox:1"}}}},
        {"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "used"}}}}}}}}};
  ASSERT_TRUE(rest->create(res::kPods, "default", pod).ok());
  ASSERT_TRUE(eventually([&] { return pods->get("default/db").has_value(); }));
  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "used").ok());
  std::this_thread::sleep_for(300ms);
  json c = claim("used");
  ASSERT_NE(at(c, ""), "<gone>");
  EXPECT_TRUE(c.contains("/metadata/deletionTimestamp"_json_pointer));
  EXPECT_EQ(at(volume("v"), "/status/phase"), "Bound");
  ASSERT_TRUE(rest->remove(res::kPods, "default", "db", {{"gracePeriodSeconds", 0}}).ok());
  EXPECT_TRUE(eventually([&] { return at(claim("used"), "") == "<gone>"; }));
  EXPECT_TRUE(eventually([&] { return at(volume("v"), "/status/phase") == "Released"; }));
}

}  // namespace
}  // namespace minik8s::controllers
