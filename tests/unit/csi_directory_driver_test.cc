// minik8s' directory CSI driver served over gRPC on a unix socket and called through CsiClient,
// as the provisioner and the kubelet call it: create (idempotent, capacity recorded), publish as
// a real bind mount (read-only when asked, twice is once), unpublish (the data stays), expand,
// delete (data gone, twice is fine), bad ids and paths refused. Needs root (mounts). The
// node-local variant reports its node's topology and refuses volumes required elsewhere.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "csi/csi_client.h"
#include "csi/directory_driver.h"

namespace minik8s::csi {
namespace {

namespace fs = std::filesystem;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class DirectoryDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for bind mounts";
    dir = fs::temp_directory_path() / ("minik8s-csi-" + std::to_string(::getpid()));
    cleanMounts();
    fs::remove_all(dir);
    DirectoryDriverOptions o;
    o.baseDir = (dir / "volumes").string();
    o.nodeId = "node-1";
    driver = std::make_unique<DirectoryDriver>(o);
    ASSERT_TRUE(driver->start((dir / "csi.sock").string()).ok());
    client = std::make_unique<CsiClient>((dir / "csi.sock").string(), std::chrono::seconds(5));
  }
  void TearDown() override {
    if (!driver) return;
    driver->stop();
    cleanMounts();
    fs::remove_all(dir);
  }
  void cleanMounts() {
    for (const char* t : {"/pod-a", "/pod-b"}) {
      while (isMountPoint((dir / t).string())) ::umount2((dir / t).c_str(), MNT_DETACH);
    }
  }
  v1::CreateVolumeRequest create(const std::string& name, int64_t bytes) {
    v1::CreateVolumeRequest r;
    r.set_name(name);
    r.mutable_capacity_range()->set_required_bytes(bytes);
    auto* cap = r.add_volume_capabilities();
    cap->mutable_mount();
    cap->mutable_access_mode()->set_mode(accessModeOf("ReadWriteMany"));
    return r;
  }
  v1::NodePublishVolumeRequest publish(const std::string& id, const std::string& target,
                                       bool readonly = false) {
    v1::NodePublishVolumeRequest r;
    r.set_volume_id(id);
    r.set_target_path((dir / target).string());
    r.set_readonly(readonly);
    r.mutable_volume_capability()->mutable_mount();
    return r;
  }

  fs::path dir;
  std::unique_ptr<DirectoryDriver> driver;
  std::unique_ptr<CsiClient> client;
};

TEST_F(DirectoryDriverTest, IdentityAndNodeInfo) {
  auto info = client->pluginInfo();
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->name(), "dir.csi.minik8s.io");
  EXPECT_EQ(client->nodeInfo()->node_id(), "node-1");
}

TEST_F(DirectoryDriverTest, CreatePublishUnpublishDelete) {
  auto v = client->createVolume(create("pvc-1", 1 << 30));
  ASSERT_TRUE(v.ok()) << v.status().toString();
  EXPECT_EQ(v->volume().volume_id(), "pvc-1");
  EXPECT_EQ(v->volume().capacity_bytes(), 1 << 30);
  ASSERT_TRUE(client->createVolume(create("pvc-1", 1 << 30)).ok());  // idempotent

  ASSERT_TRUE(client->nodePublishVolume(publish("pvc-1", "pod-a")).ok());
  ASSERT_TRUE(client->nodePublishVolume(publish("pvc-1", "pod-a")).ok());  // twice is once
  EXPECT_TRUE(isMountPoint((dir / "pod-a").string()));
  std::ofstream(dir / "pod-a" / "data") << "written by pod a";
  EXPECT_EQ(readFile(driver->volumePath("pvc-1") + "/data"), "written by pod a");

  // A second, read-only publication of the same volume sees the data and cannot write.
  ASSERT_TRUE(client->nodePublishVolume(publish("pvc-1", "pod-b", true)).ok());
  EXPECT_EQ(readFile((dir / "pod-b" / "data").string()), "written by pod a");
  EXPECT_FALSE(std::ofstream(dir / "pod-b" / "other").good());

  ASSERT_TRUE(client->nodeUnpublishVolume("pvc-1", (dir / "pod-a").string()).ok());
  ASSERT_TRUE(client->nodeUnpublishVolume("pvc-1", (dir / "pod-b").string()).ok());
  ASSERT_TRUE(client->nodeUnpublishVolume("pvc-1", (dir / "pod-b").string()).ok());  // gone: ok
  EXPECT_FALSE(fs::exists(dir / "pod-a"));
  EXPECT_EQ(readFile(driver->volumePath("pvc-1") + "/data"), "written by pod a");  // data stays

  v1::ControllerExpandVolumeRequest grow;
  grow.set_volume_id("pvc-1");
  grow.mutable_capacity_range()->set_required_bytes(int64_t{2} << 30);
  auto grown = client->expandVolume(grow);
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(grown->capacity_bytes(), int64_t{2} << 30);

  ASSERT_TRUE(client->deleteVolume("pvc-1").ok());
  EXPECT_FALSE(fs::exists(driver->volumePath("pvc-1")));
  EXPECT_TRUE(client->deleteVolume("pvc-1").ok());  // already gone
  grow.set_volume_id("pvc-1");
  EXPECT_EQ(client->expandVolume(grow).status().code(), 404);
}

TEST_F(DirectoryDriverTest, BadRequestsAreRefused) {
  EXPECT_EQ(client->createVolume(create("../etc", 1)).status().code(), 400);
  EXPECT_EQ(client->createVolume(create("", 1)).status().code(), 400);
  EXPECT_EQ(client->nodePublishVolume(publish("missing", "pod-a")).code(), 404);
  auto relative = publish("x", "pod-a");
  relative.set_target_path("relative/path");
  ASSERT_TRUE(client->createVolume(create("x", 1)).ok());
  EXPECT_EQ(client->nodePublishVolume(relative).code(), 400);
  auto block = create("blk", 1);
  block.mutable_volume_capabilities(0)->mutable_block();
  EXPECT_EQ(client->createVolume(block).status().code(), 400);
}

// The node-local driver (local.csi.minik8s.io): its volumes are reachable from its node only,
// which CreateVolume and NodeGetInfo report as topology; a volume required elsewhere is refused.
TEST(LocalDriverTest, VolumesCarryTheTopologyOfTheirNode) {
  const fs::path dir =
      fs::temp_directory_path() / ("minik8s-csi-local-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  DirectoryDriverOptions o;
  o.name = kLocalDriverName;
  o.baseDir = (dir / "local-volumes").string();
  o.nodeId = "node-2";
  o.topologyKey = kLocalTopologyKey;
  DirectoryDriver driver(o);
  ASSERT_TRUE(driver.start((dir / "csi.sock").string()).ok());
  CsiClient client((dir / "csi.sock").string(), std::chrono::seconds(5));
  EXPECT_EQ(client.pluginInfo()->name(), "local.csi.minik8s.io");
  auto info = client.nodeInfo();
  ASSERT_TRUE(info.ok()) << info.status().toString();
  EXPECT_EQ(info->node_id(), "node-2");
  EXPECT_EQ(info->accessible_topology().segments().at("kubernetes.io/hostname"), "node-2");

  v1::CreateVolumeRequest r;
  r.set_name("pvc-1");
  r.mutable_capacity_range()->set_required_bytes(1024);
  (*r.mutable_accessibility_requirements()
        ->add_requisite()
        ->mutable_segments())["kubernetes.io/hostname"] = "node-2";
  auto created = client.createVolume(r);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  ASSERT_EQ(created->volume().accessible_topology_size(), 1);
  EXPECT_EQ(created->volume().accessible_topology(0).segments().at("kubernetes.io/hostname"),
            "node-2");
  EXPECT_TRUE(fs::is_directory(dir / "local-volumes" / "pvc-1"));

  r.set_name("pvc-2");
  (*r.mutable_accessibility_requirements()
        ->mutable_requisite(0)
        ->mutable_segments())["kubernetes.io/hostname"] = "node-3";
  auto elsewhere = client.createVolume(r);
  EXPECT_EQ(elsewhere.status().code(), 429) << elsewhere.status().toString();
  EXPECT_FALSE(fs::exists(dir / "local-volumes" / "pvc-2"));
  EXPECT_TRUE(client.deleteVolume("pvc-1").ok());
  EXPECT_FALSE(fs::exists(dir / "local-volumes" / "pvc-1"));
  driver.stop();
  fs::remove_all(dir);
}

TEST(CsiClientTest, AnAbsentDriverIsUnavailableWithinTheDeadline) {
  CsiClient client("/tmp/minik8s-no-such-csi.sock", std::chrono::milliseconds(300));
  auto info = client.pluginInfo();
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(info.status().code() == 503 || info.status().code() == 504)
      << info.status().toString();
}

}  // namespace
}  // namespace minik8s::csi
