// Dynamic provisioning through CSI: the csi-provisioner and the persistentvolume-binder against
// a real in-process API server and minik8s' directory CSI driver on a unix socket: a claim of a
// class gets a volume made for it and binds it; Delete removes the data and the volume, Retain
// keeps both; allowVolumeExpansion grows a bound claim; WaitForFirstConsumer waits for a node;
// an unreachable driver is a ProvisioningFailed event and a retry. Node-deployment mode: the
// node-local driver local.csi.minik8s.io and a provisioner per node, each serving only claims
// the scheduler placed on its node and deleting only volumes pinned to it.
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
  // The binder may report ProvisioningFailed first ("storageclass ... not found") when its
  // informer has not seen the new class yet (seen once in CI): the provisioner's own is awaited.
  ASSERT_TRUE(eventually([&] {
    for (const auto& e : events.events())
      if (e.reason == "ProvisioningFailed" &&
          e.message.find("failed to provision volume") != std::string::npos)
        return true;
    return false;
  }));
  EXPECT_EQ(at(claim("stuck"), "/status/phase"), "Pending");
}

// Two nodes, each with its own local driver (a directory of its own) and a provisioner in
// node-deployment mode, beside the controller-manager's provisioner of the fixture (which does
// not know the local driver).
class LocalCsiProvisionerTest : public CsiProvisionerTest {
 protected:
  struct Node {
    std::unique_ptr<csi::DirectoryDriver> driver;
    std::unique_ptr<client::Informer> volumes, claims, classes;
    std::unique_ptr<CsiProvisioner> provisioner;
  };
  void SetUp() override {
    CsiProvisionerTest::SetUp();
    for (const std::string name : {"node-1", "node-2"}) {
      Node& n = nodes[name];
      csi::DirectoryDriverOptions dopts;
      dopts.name = csi::kLocalDriverName;
      dopts.baseDir = (dir / name / "local-volumes").string();
      dopts.nodeId = name;
      dopts.topologyKey = csi::kLocalTopologyKey;
      n.driver = std::make_unique<csi::DirectoryDriver>(dopts);
      const std::string socket = (dir / name / "csi.sock").string();
      ASSERT_TRUE(n.driver->start(socket).ok());
      n.volumes = std::make_unique<client::Informer>(*rest, kPersistentVolumes);
      n.claims = std::make_unique<client::Informer>(*rest, kPersistentVolumeClaims);
      n.classes = std::make_unique<client::Informer>(*rest, kStorageClasses);
      CsiProvisionerOptions po;
      po.drivers = {{csi::kLocalDriverName, "unix://" + socket}};
      po.nodeName = name;
      po.events = &events;
      n.provisioner =
          std::make_unique<CsiProvisioner>(*rest, *n.claims, *n.volumes, *n.classes, po);
      for (auto* i : {n.volumes.get(), n.claims.get(), n.classes.get()}) {
        i->start();
        ASSERT_TRUE(i->waitForSync(5s));
      }
      n.provisioner->start();
    }
    createClass("local-path", {{"provisioner", csi::kLocalDriverName},
                               {"volumeBindingMode", "WaitForFirstConsumer"},
                               {"reclaimPolicy", "Delete"}});
  }
  void TearDown() override {
    for (auto& [name, n] : nodes) {
      n.provisioner->stop();
      for (auto* i : {n.volumes.get(), n.claims.get(), n.classes.get()}) i->stop();
      n.driver->stop();
    }
    CsiProvisionerTest::TearDown();
  }
  void selectNode(const std::string& claimName, const std::string& node) {
    json c = claim(claimName);
    c["metadata"]["annotations"][api::kAnnSelectedNode] = node;
    ASSERT_TRUE(rest->update(kPersistentVolumeClaims, c).ok());
  }

  std::map<std::string, Node> nodes;
};

TEST_F(LocalCsiProvisionerTest, TheSelectedNodesProvisionerMakesAVolumePinnedToItsNode) {
  createClaim("local", "local-path", "1Gi");
  ASSERT_TRUE(eventually([&] { return events.find("WaitForFirstConsumer").has_value(); }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(at(claim("local"), "/status/phase"), "Pending");
  EXPECT_FALSE(events.find("Provisioning").has_value());
  selectNode("local", "node-2");
  const std::string pvName = boundVolume("local");
  json pv = volume(pvName);
  EXPECT_EQ(at(pv, "/spec/csi/driver"), "local.csi.minik8s.io");
  EXPECT_EQ(pv["metadata"]["annotations"][api::kAnnProvisionedBy], "local.csi.minik8s.io");
  EXPECT_EQ(pv["spec"]["nodeAffinity"],
            json::parse(R"({"required": {"nodeSelectorTerms": [{"matchExpressions": [
              {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}]}]}})"));
  EXPECT_TRUE(api::volumePinnedToNode(pv, "node-2"));
  EXPECT_FALSE(api::volumePinnedToNode(pv, "node-1"));
  EXPECT_TRUE(fs::is_directory(nodes["node-2"].driver->volumePath(pvName)));
  EXPECT_FALSE(fs::exists(nodes["node-1"].driver->volumePath(pvName)));
  EXPECT_FALSE(fs::exists(driver->volumePath(pvName)));  // not the shared driver's
  std::ofstream(nodes["node-2"].driver->volumePath(pvName) + "/file") << "data";

  // Reclaim Delete: the claim goes, node-2's provisioner removes the data and the volume.
  ASSERT_TRUE(rest->remove(kPersistentVolumeClaims, "default", "local").ok());
  EXPECT_TRUE(eventually([&] { return !volume(pvName).is_object(); })) << volume(pvName).dump();
  EXPECT_FALSE(fs::exists(nodes["node-2"].driver->volumePath(pvName)));
}

TEST_F(LocalCsiProvisionerTest, ANodeLeavesOtherNodesVolumesAlone) {
  // A Released local volume of a node that has no provisioner running (node-3) stays.
  json pv = {
      {"apiVersion", "v1"},
      {"kind", "PersistentVolume"},
      {"metadata",
       {{"name", "pvc-elsewhere"},
        {"annotations", {{api::kAnnProvisionedBy, csi::kLocalDriverName}}}}},
      {"spec",
       {{"capacity", {{"storage", "1Gi"}}},
        {"accessModes", {"ReadWriteOnce"}},
        {"persistentVolumeReclaimPolicy", "Delete"},
        {"storageClassName", "local-path"},
        {"claimRef",
         {{"kind", "PersistentVolumeClaim"},
          {"namespace", "default"},
          {"name", "gone"},
          {"uid", "00000000-0000-0000-0000-000000000000"}}},
        {"csi", {{"driver", csi::kLocalDriverName}, {"volumeHandle", "pvc-elsewhere"}}},
        {"nodeAffinity", json::parse(R"({"required": {"nodeSelectorTerms": [{"matchExpressions": [
           {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-3"]}]}]}})")}}}};
  ASSERT_TRUE(rest->create(kPersistentVolumes, "", pv).ok());
  ASSERT_TRUE(eventually([&] {
    return at(volume("pvc-elsewhere"), "/status/phase") == "Released";
  })) << volume("pvc-elsewhere").dump();
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(volume("pvc-elsewhere").is_object());
  EXPECT_FALSE(events.find("VolumeFailedDelete").has_value());
}

}  // namespace
}  // namespace minik8s::controllers
