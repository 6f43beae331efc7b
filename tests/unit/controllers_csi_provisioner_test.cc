// Dynamic provisioning through CSI: the csi-provisioner and the persistentvolume-binder against
// a real in-process API server and minik8s' directory CSI driver on a unix socket: a claim of a
// class gets a volume made for it and binds it; Delete removes the data and the volume, Retain
// keeps both; allowVolumeExpansion grows a bound claim; WaitForFirstConsumer waits for a node;
// an unreachable driver is a ProvisioningFailed event and a retry.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "api/persistent_volumes.h"
#include "controllers/volume/csi_provisioner.h"
#include "controllers/volume/persistent_volume_controller.h"
#include "csi/directory_driver.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class CsiProvisionerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("minik8s-provisioner-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    csi::DirectoryDriverOptions dopts;
    dopts.baseDir = (dir / "volumes").string();
    dopts.nodeService = false;
    driver = std::make_unique<csi::DirectoryDriver>(dopts);
    ASSERT_TRUE(driver->start((dir / "controller.sock").string()).ok());
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    volumes = std::make_unique<client::Informer>(*rest, kPersistentVolumes);
    claims = std::make_unique<client::Informer>(*rest, kPersistentVolumeClaims);
    classes = std::make_unique<client::Informer>(*rest, kStorageClasses);
    PersistentVolumeControllerOptions bo;
    bo.events = &events;
    binder = std::make_unique<PersistentVolumeController>(*rest, *volumes, *claims, *classes, bo);
    CsiProvisionerOptions po;
    po.drivers = {{"dir.csi.minik8s.io", "unix://" + (dir / "controller.sock").string()},
                  {"gone.example.com", "unix://" + (dir / "nobody.sock").string()}};
    po.events = &events;
    po.timeout = std::chrono::milliseconds(500);
    provisioner = std::make_unique<CsiProvisioner>(*rest, *claims, *volumes, *classes, po);
    for (auto* i : {volumes.get(), claims.get(), classes.get()}) {
      i->start();
      ASSERT_TRUE(i->waitForSync(5s));
    }
    binder->start();
    provisioner->start();
  }
  void TearDown() override {
    provisioner->stop();
    binder->stop();
    for (auto* i : {volumes.get(), claims.get(), classes.get()}) i->stop();
    apiServer.stop();
    driver->stop();
    fs::remove_all(dir);
  }

  void createClass(const std::string& name, json extra = json::object()) {
    json sc = {{"apiVersion", "storage.k8s.io/v1"},
               {"kind", "StorageClass"},
               {"metadata", {{"name", name}}},
               {"provisioner", "dir.csi.minik8s.io"}};
    sc.update(extra);
    auto r = rest->create(kStorageClasses, "", sc);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  void createClaim(const std::string& name, const std::string& cls, const std::string& size,
                   json annotations = json::object()) {
    json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"storageClassName", cls},
                  {"accessModes", {"ReadWriteMany"}},
                  {"resources", {{"requests", {{"storage", size}}}}}}}};
    if (!annotations.empty()) pvc["metadata"]["annotations"] = annotations;
    auto r = rest->create(kPersistentVolumeClaims, "default", pvc);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  json claim(const std::string& name) {
    auto r = rest->get(kPersistentVolumeClaims, "default", name);
    return r.ok() ? *r : json();
  }
  json volume(const std::string& name) {
    auto r = rest->get(kPersistentVolumes, "", name);
    return r.ok() ? *r : json();
  }
  static std::string at(const json& obj, const char* pointer) {
    if (!obj.is_object()) return "<gone>";
    if (std::string(pointer).empty()) return "<present>";
    return obj.value(json::json_pointer(pointer), std::string());
  }
  bool eventually(const std::function<bool()>& cond) {
    for (int i = 0; i < 300; ++i) {
      if (cond()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return cond();
  }
  std::string boundVolume(const std::string& claimName) {
    EXPECT_TRUE(eventually([&] { return at(claim(claimName), "/status/phase") == "Bound"; }))
        << claim(claimName).dump();
    return at(claim(claimName), "/spec/volumeName");
  }

  fs::path dir;
  std::unique_ptr<csi::DirectoryDriver> driver;
  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> volumes, claims, classes;
  client::FakeEventRecorder events;
  std::unique_ptr<PersistentVolumeController> binder;
  std::unique_ptr<CsiProvisioner> provisioner;
};

TEST_F(CsiProvisionerTest, AClaimGetsAVolumeMadeForItAndDeleteRemovesItWithItsData) {
  createClass("standard");
  createClaim("data", "standard", "2Gi");
  const std::string pvName = boundVolume("data");
  json c = claim("data");
  EXPECT_EQ(pvName, "pvc-" + at(c, "/metadata/uid"));
  json pv = volume(pvName);
  EXPECT_EQ(at(pv, "/spec/csi/driver"), "dir.csi.minik8s.io");
  EXPECT_EQ(at(pv, "/spec/csi/volumeHandle"), pvName);
  EXPECT_EQ(at(pv, "/spec/capacity/storage"), "2Gi");
  EXPECT_EQ(at(pv, "/spec/persistentVolumeReclaimPolicy"), "Delete");
  EXPECT_EQ(at(pv, "/spec/storageClassName"), "standard");
  EXPECT_EQ(pv["metadata"]["annotations"][api::kAnnProvisionedBy], "dir.csi.minik8s.io");
  EXPECT_EQ(c["status"]["capacity"]["storage"], "2Gi");
  EXPECT_TRUE(events.find("ProvisioningSucceeded").has_value());
  ASSERT_TRUE(fs::is_directory(driver->volumePath(pvName)));
  std::ofstream(driver->volumePath(pvName) + "/file") << "data";

  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "data").ok());
  EXPECT_TRUE(eventually([&] { return at(volume(pvName), "") == "<gone>"; }))
      << volume(pvName).dump();
  EXPECT_FALSE(fs::exists(driver->volumePath(pvName)));
}

TEST_F(CsiProvisionerTest, RetainKeepsTheVolumeAndItsData) {
  createClass("keep", {{"reclaimPolicy", "Retain"}});
  createClaim("kept", "keep", "1Gi");
  const std::string pvName = boundVolume("kept");
  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "kept").ok());
  ASSERT_TRUE(eventually([&] { return at(volume(pvName), "/status/phase") == "Released"; }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(at(volume(pvName), "/status/phase"), "Released");
  EXPECT_TRUE(fs::is_directory(driver->volumePath(pvName)));
}

TEST_F(CsiProvisionerTest, ExpansionGrowsABoundClaimOnlyWhenTheClassAllowsIt) {
  createClass("elastic", {{"allowVolumeExpansion", true}});
  createClaim("grow", "elastic", "1Gi");
  const std::string pvName = boundVolume("grow");
  json c = claim("grow");
  c["spec"]["resources"]["requests"]["storage"] = "3Gi";
  ASSERT_TRUE(rest->update(kPersistentVolumeClaims, c).ok());
  EXPECT_TRUE(eventually([&] { return at(claim("grow"), "/status/capacity/storage") == "3Gi"; }))
      << claim("grow").dump();
  EXPECT_EQ(at(volume(pvName), "/spec/capacity/storage"), "3Gi");
  EXPECT_TRUE(events.find("VolumeResizeSuccessful").has_value());

  createClass("rigid");
  createClaim("fixed", "rigid", "1Gi");
  const std::string fixedPv = boundVolume("fixed");
  c = claim("fixed");
  c["spec"]["resources"]["requests"]["storage"] = "2Gi";
  ASSERT_TRUE(rest->update(kPersistentVolumeClaims, c).ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(at(volume(fixedPv), "/spec/capacity/storage"), "1Gi");
}

TEST_F(CsiProvisionerTest, WaitForFirstConsumerWaitsForTheSchedulersNode) {
  createClass("late", {{"volumeBindingMode", "WaitForFirstConsumer"}});
  createClaim("later", "late", "1Gi");
  ASSERT_TRUE(eventually([&] { return events.find("WaitForFirstConsumer").has_value(); }));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(at(claim("later"), "/status/phase"), "Pending");
  json c = claim("later");
  c["metadata"]["annotations"][api::kAnnSelectedNode] = "node-2";
  ASSERT_TRUE(rest->update(kPersistentVolumeClaims, c).ok());
  boundVolume("later");
}

TEST_F(CsiProvisionerTest, AnUnreachableDriverIsAnEventAndARetry) {
  json sc = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata", {{"name", "broken"}}},
             {"provisioner", "gone.example.com"}};
  ASSERT_TRUE(rest->create(kStorageClasses, "", sc).ok());
  createClaim("stuck", "broken", "1Gi");
  ASSERT_TRUE(eventually([&] { return events.find("ProvisioningFailed").has_value(); }));
  EXPECT_NE(events.find("ProvisioningFailed")->message.find("failed to provision volume"),
            std::string::npos);
  EXPECT_EQ(at(claim("stuck"), "/status/phase"), "Pending");
}

}  // namespace
}  // namespace minik8s::controllers
