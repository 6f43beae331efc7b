// Unit tests of the kubelet's pure parts: back-off, env resolution, volume files, pod status
// computation, QoS and resources.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "csi/directory_driver.h"
#include "fake_clock.h"
#include "kubelet/backoff.h"
#include "kubelet/env_resolver.h"
#include "kubelet/pod_status.h"
#include "kubelet/pod_util.h"
#include "kubelet/volume_manager.h"
#include "kubelet_fake_objects.h"
#include "read_file.h"

namespace minik8s::kubelet {
namespace {

using namespace std::chrono_literals;
namespace v1 = ::runtime::v1;

using testing::FakeClock;

using testing::MapObjects;

using testing::readFile;

TEST(BackoffTest, DoublesFromTenSecondsToFiveMinutes) {
  FakeClock clock;
  Backoff b(clock);
  EXPECT_FALSE(b.inBackoffSince("c", clock.now()));
  b.next("c");
  EXPECT_EQ(b.get("c"), std::chrono::steady_clock::duration(10s));
  auto exit = clock.now();
  clock.advance(9s);
  EXPECT_TRUE(b.inBackoffSince("c", exit));
  clock.advance(1s);
  EXPECT_FALSE(b.inBackoffSince("c", exit));
  std::vector<int64_t> seen;
  for (int i = 0; i < 7; ++i) {
    b.next("c");
    seen.push_back(std::chrono::duration_cast<std::chrono::seconds>(b.get("c")).count());
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{20, 40, 80, 160, 300, 300, 300}));
  // Unused for twice the maximum: forgotten, the next failure starts at 10 s again.
  clock.advance(11min);
  b.next("c");
  EXPECT_EQ(b.get("c"), std::chrono::steady_clock::duration(10s));
}

json envPod() {
  return json::parse(R"J({
    "metadata": {"name": "web", "namespace": "prod", "uid": "u-1", "labels": {"app": "w"}},
    "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox",
      "resources": {"limits": {"memory": "64Mi", "cpu": "500m"}},
      "env": [
        {"name": "PLAIN", "value": "v"},
        {"name": "EXPANDED", "value": "$(PLAIN)-x-$$(PLAIN)-$(NOPE)"},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}},
        {"name": "SEC", "valueFrom": {"secretKeyRef": {"name": "s", "key": "password"}}},
        {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "none", "key": "k",
                                                          "optional": true}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                           "divisor": "1Mi"}}}
      ]}]}})J");
}

TEST(EnvResolverTest, ResolvesValuesFieldRefsAndObjectKeys) {
  MapObjects objects;
  objects.configMaps["prod/cfg"] = {{"k", "from-cm"}};
  objects.secrets["prod/s"] = {{"password", "hunter2"}};
  json pod = envPod();
  PodRuntimeFields fields{"10.244.0.7", {"10.244.0.7"}, "192.168.1.2"};
  auto env = resolveEnv(pod, pod["spec"]["containers"][0], fields, objects);
  ASSERT_TRUE(env.ok()) << env.status().toString();
  EnvList want = {{"PLAIN", "v"},       {"EXPANDED", "v-x-$(PLAIN)-$(NOPE)"},
                  {"POD", "web"},       {"NS", "prod"},
                  {"IP", "10.244.0.7"}, {"NODE", "n1"},
                  {"APP", "w"},         {"CM", "from-cm"},
                  {"SEC", "hunter2"},   {"MEM", "64"}};
  EXPECT_EQ(*env, want);
}

TEST(EnvResolverTest, MissingKeyOrObjectIsAConfigError) {
  MapObjects objects;
  objects.configMaps["prod/cfg"] = {{"other", "x"}};
  json pod = envPod();
  auto env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().message(), "couldn't find key k in ConfigMap prod/cfg");
  objects.configMaps.clear();
  env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  EXPECT_EQ(env.status().message(), "configmap \"cfg\" not found");
}

// An optional source is skipped only when it does not exist: with the API server unreachable the
// container waits (and the error says why) instead of starting without it.
TEST(EnvResolverTest, AnUnreadableObjectIsNotTakenForAMissingOne) {
  MapObjects objects;
  objects.configMaps["prod/cfg"] = {{"k", "from-cm"}};
  objects.secrets["prod/s"] = {{"password", "hunter2"}};
  objects.failReads = true;
  json pod = envPod();
  auto env = resolveEnv(pod, pod["spec"]["containers"][0], {}, objects);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), 503);
  EXPECT_EQ(env.status().message(),
            "configmap \"cfg\" could not be read: cannot connect to the API server");
  json c = {{"name", "c"},
            {"envFrom", {{{"configMapRef", {{"name", "none"}, {"optional", true}}}}}}};
  env = resolveEnv(pod, c, {}, objects);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().message(),
            "configmap \"none\" could not be read: cannot connect to the API server");
  objects.failReads = false;
  env = resolveEnv(pod, c, {}, objects);
  EXPECT_TRUE(env.ok()) << env.status().toString();
}

TEST(EnvResolverTest, EnvFromWithPrefixIsOverriddenByEnv) {
  MapObjects objects;
  objects.configMaps["default/cfg"] = {{"A", "1"}, {"B", "2"}};
  json pod = {{"metadata", {{"name", "p"}, {"uid", "u"}}}};
  json c = {{"name", "c"},
            {"envFrom", {{{"configMapRef", {{"name", "cfg"}}}, {"prefix", "X_"}}}},
            {"env", {{{"name", "X_A"}, {"value", "override"}}}}};
  auto env = resolveEnv(pod, c, {}, objects);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(*env, (EnvList{{"X_A", "override"}, {"X_B", "2"}}));
}

class VolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = ::testing::TempDir() + "kubelet-vol-" + std::to_string(::getpid());
    std::filesystem::remove_all(root);
  }
  void TearDown() override { std::filesystem::remove_all(root); }
  std::string root;
  FakeClock clock;
  MapObjects objects;
};

TEST_F(VolumeTest, WritesConfigMapAndSecretFilesWithItemsAndModes) {
  objects.configMaps["default/cfg"] = {{"app.conf", "a=1\n"}, {"other", "o"}};
  objects.secrets["default/s"] = {{"token", "t0k"}};
  json pod = json::parse(R"J({"metadata": {"name": "p", "uid": "uid-1"}, "spec": {
    "volumes": [
      {"name": "cache", "emptyDir": {}},
      {"name": "conf", "configMap": {"name": "cfg", "items": [{"key": "app.conf",
                                                                "path": "sub/app.conf"}]}},
      {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}}
    ]}})J");
  VolumeManager vm(root, objects, clock);
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  const std::string base = root + "/pods/uid-1/volumes";
  EXPECT_EQ((*paths)["cache"].path, base + "/kubernetes.io~empty-dir/cache");
  EXPECT_EQ(readFile((*paths)["conf"].path + "/sub/app.conf"), "a=1\n");
  EXPECT_FALSE(std::filesystem::exists((*paths)["conf"].path + "/other"));
  EXPECT_EQ(readFile((*paths)["sec"].path + "/token"), "t0k");
  struct stat st {};
  ASSERT_EQ(::stat(((*paths)["sec"].path + "/token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0400);
  ASSERT_EQ(::stat((*paths)["cache"].path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0777);

  // Updated objects show after the refresh interval; removed keys disappear.
  objects.secrets["default/s"] = {{"other", "x"}};
  clock.advance(61s);
  ASSERT_TRUE(vm.setUpPod(pod).ok());
  EXPECT_FALSE(std::filesystem::exists((*paths)["sec"].path + "/token"));
  EXPECT_EQ(readFile((*paths)["sec"].path + "/other"), "x");

  ASSERT_TRUE(vm.tearDownPod("uid-1").ok());
  EXPECT_FALSE(std::filesystem::exists(root + "/pods/uid-1"));
}

TEST_F(VolumeTest, MountsHonourReadOnlyAndSubPath) {
  VolumeManager vm(root, objects, clock);
  VolumeManager::VolumePaths paths = {{"data", root + "/d"}};
  json c = json::parse(R"J({"volumeMounts": [
      {"name": "data", "mountPath": "/data", "readOnly": true},
      {"name": "data", "mountPath": "/logs", "subPath": "logs"}]})J");
  auto mounts = vm.mountsFor(c, paths);
  ASSERT_TRUE(mounts.ok());
  ASSERT_EQ(mounts->size(), 2u);
  EXPECT_EQ((*mounts)[0].host_path(), root + "/d");
  EXPECT_TRUE((*mounts)[0].readonly());
  EXPECT_EQ((*mounts)[1].host_path(), root + "/d/logs");
  EXPECT_EQ((*mounts)[1].container_path(), "/logs");
  EXPECT_FALSE((*mounts)[1].readonly());
  EXPECT_TRUE(std::filesystem::is_directory(root + "/d/logs"));

  json escape = json::parse(R"J({"volumeMounts": [{"name": "data", "mountPath": "/x",
                                                  "subPath": "../../etc"}]})J");
  EXPECT_FALSE(vm.mountsFor(escape, paths).ok());
  json unknown = json::parse(R"J({"volumeMounts": [{"name": "nope", "mountPath": "/x"}]})J");
  EXPECT_FALSE(vm.mountsFor(unknown, paths).ok());
}

TEST_F(VolumeTest, ClaimsMountTheirBoundVolumeOrWait) {
  const std::string host = root + "/pv-data";
  objects.claims["default/data"] = json::parse(
      R"J({"metadata": {"name": "data"}, "spec": {"volumeName": "pv1"},
           "status": {"phase": "Bound"}})J");
  objects.volumes["pv1"] = {
      {"metadata", {{"name", "pv1"}}},
      {"spec", {{"hostPath", {{"path", host}, {"type", "DirectoryOrCreate"}}}}}};
  json pod = json::parse(R"J({"metadata": {"name": "p", "namespace": "default", "uid": "uid-9"},
    "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                         {"name": "ro", "persistentVolumeClaim": {"claimName": "data",
                                                                  "readOnly": true}}]}})J");
  VolumeManager vm(root, objects, clock);
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  EXPECT_EQ((*paths)["d"].path, host);
  EXPECT_TRUE(std::filesystem::is_directory(host));
  EXPECT_FALSE((*paths)["d"].readOnly);
  EXPECT_TRUE((*paths)["ro"].readOnly);
  json c = json::parse(R"J({"volumeMounts": [{"name": "ro", "mountPath": "/data"}]})J");
  auto mounts = vm.mountsFor(c, *paths);
  ASSERT_TRUE(mounts.ok());
  EXPECT_TRUE((*mounts)[0].readonly());  // the claim volume says so, whatever the mount asks
  ASSERT_TRUE(vm.tearDownPod("uid-9").ok());
  EXPECT_TRUE(std::filesystem::is_directory(host));  // the data stays

  // No data, no pod: a missing, unbound or unmountable claim is an error (the pod waits).
  auto setUp = [&](const std::string& claim) {
    json p = pod;
    p["metadata"]["uid"] = "uid-" + claim;
    p["spec"]["volumes"] = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
    return vm.setUpPod(p).status();
  };
  EXPECT_EQ(setUp("ghost").message(), "persistentvolumeclaim \"ghost\" not found");
  objects.claims["default/pending"] = json::parse(R"J({"status": {"phase": "Pending"}})J");
  EXPECT_EQ(setUp("pending").message(), "persistentvolumeclaim \"pending\" is not bound (Pending)");
  objects.claims["default/far"] =
      json::parse(R"J({"spec": {"volumeName": "pv2"}, "status": {"phase": "Bound"}})J");
  objects.volumes["pv2"] =
      json::parse(R"J({"spec": {"csi": {"driver": "x", "volumeHandle": "h"}}})J");
  EXPECT_FALSE(setUp("far").ok());
  objects.volumes["pv2"] = {{"spec", {{"local", {{"path", root + "/absent"}}}}}};
  EXPECT_EQ(setUp("far").code(), 404);
}

TEST_F(VolumeTest, CsiVolumesArePublishedAndUnpublishedThroughTheDriver) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for bind mounts";
  csi::DirectoryDriverOptions dopts;
  dopts.baseDir = root + "/shared";
  dopts.nodeId = "node-1";
  dopts.controllerService = false;
  csi::DirectoryDriver driver(dopts);
  ASSERT_TRUE(driver.start(root + "/plugins/csi.sock").ok());
  std::filesystem::create_directories(root + "/shared/vol-1");
  std::ofstream(root + "/shared/vol-1/kept") << "volume data";
  objects.claims["default/data"] =
      json::parse(R"J({"spec": {"volumeName": "pv-csi"}, "status": {"phase": "Bound"}})J");
  objects.volumes["pv-csi"] = json::parse(R"J({"spec": {"accessModes": ["ReadWriteMany"],
      "csi": {"driver": "dir.csi.minik8s.io", "volumeHandle": "vol-1"}}})J");
  json pod = json::parse(R"J({"metadata": {"name": "p", "namespace": "default", "uid": "uid-c"},
    "spec": {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}})J");
  VolumeManager vm(root, objects, clock, std::chrono::seconds(60), nullptr,
                   {{"dir.csi.minik8s.io", "unix://" + root + "/plugins/csi.sock"}});
  auto paths = vm.setUpPod(pod);
  ASSERT_TRUE(paths.ok()) << paths.status().toString();
  const std::string target = root + "/pods/uid-c/volumes/kubernetes.io~csi/d/mount";
  EXPECT_EQ((*paths)["d"].path, target);
  EXPECT_TRUE(csi::isMountPoint(target));
  EXPECT_EQ(readFile(target + "/kept"), "volume data");
  EXPECT_TRUE(
      std::filesystem::exists(root + "/pods/uid-c/volumes/kubernetes.io~csi/d/vol_data.json"));
  // What the pod writes survives the periodic refresh of its volumes (it once deleted every file
  // below the volume's directory that was not vol_data.json, through the mount).
  std::filesystem::create_directories(target + "/wal");
  std::ofstream(target + "/wal/00000001") << "written by the pod";
  clock.advance(std::chrono::seconds(61));
  ASSERT_TRUE(vm.setUpPod(pod).ok());
  EXPECT_EQ(readFile(target + "/kept"), "volume data");
  EXPECT_EQ(readFile(root + "/shared/vol-1/wal/00000001"), "written by the pod");

  // A finished pod lets its volume go at once; its directory stays until the pod is deleted.
  ASSERT_TRUE(vm.releasePod("uid-c").ok());
  EXPECT_FALSE(csi::isMountPoint(target));
  EXPECT_TRUE(std::filesystem::exists(root + "/pods/uid-c"));
  ASSERT_TRUE(vm.releasePod("uid-c").ok());  // twice is fine
  ASSERT_TRUE(vm.setUpPod(pod).ok());        // (as a restarted setup would)
  EXPECT_TRUE(csi::isMountPoint(target));

  // Tearing the pod down unmounts first: the volume's data survives the pod directory.
  ASSERT_TRUE(vm.tearDownPod("uid-c").ok());
  EXPECT_FALSE(csi::isMountPoint(target));
  EXPECT_FALSE(std::filesystem::exists(root + "/pods/uid-c"));
  EXPECT_EQ(readFile(root + "/shared/vol-1/kept"), "volume data");

  // A driver this node does not have: the pod waits.
  objects.volumes["pv-csi"]["spec"]["csi"]["driver"] = "other.example.com";
  pod["metadata"]["uid"] = "uid-d";
  auto missing = vm.setUpPod(pod);
  EXPECT_EQ(missing.status().message(),
            "CSI driver other.example.com is not registered on this node");
  driver.stop();
}

TEST(PodUtilTest, QosClassAndCgroupResources) {
  json guaranteed = json::parse(R"J({"spec": {"containers": [{"name": "a", "resources": {
      "limits": {"cpu": "200m", "memory": "64Mi"}}}]}})J");
  EXPECT_EQ(qosClass(guaranteed), "Guaranteed");
  json burstable = json::parse(R"J({"spec": {"containers": [{"name": "a", "resources": {
      "requests": {"cpu": "100m"}, "limits": {"cpu": "200m"}}}]}})J");
  EXPECT_EQ(qosClass(burstable), "Burstable");
  EXPECT_EQ(qosClass(json::parse(R"J({"spec": {"containers": [{"name": "a"}]}})J")), "BestEffort");

  auto r = linuxResources(guaranteed["spec"]["containers"][0]);
  EXPECT_EQ(r.cpu_shares(), 204);
  EXPECT_EQ(r.cpu_period(), 100000);
  EXPECT_EQ(r.cpu_quota(), 20000);
  EXPECT_EQ(r.memory_limit_in_bytes(), 64 * 1024 * 1024);
  auto none = linuxResources(json::object());
  EXPECT_EQ(none.cpu_shares(), 2);
  EXPECT_EQ(none.cpu_quota(), 0);
  EXPECT_EQ(none.memory_limit_in_bytes(), 0);
}

TEST(PodUtilTest, ImagePullPolicyDefaults) {
  EXPECT_EQ(imagePullPolicy({{"image", "busybox"}}), "Always");
  EXPECT_EQ(imagePullPolicy({{"image", "busybox:latest"}}), "Always");
  EXPECT_EQ(imagePullPolicy({{"image", "busybox:1.36"}}), "IfNotPresent");
  EXPECT_EQ(imagePullPolicy({{"image", "localhost:5000/busybox"}}), "Always");
  EXPECT_EQ(imagePullPolicy({{"image", "busybox"}, {"imagePullPolicy", "Never"}}), "Never");
}

v1::ContainerStatus instance(const std::string& id, v1::ContainerState state, int restartCount,
                             int exitCode = 0, const std::string& reason = "") {
  v1::ContainerStatus s;
  s.set_id(id);
  s.set_state(state);
  s.set_started_at(1700000000LL * 1000000000LL);
  if (state == v1::CONTAINER_EXITED) s.set_finished_at(1700000060LL * 1000000000LL);
  s.set_exit_code(exitCode);
  s.set_reason(reason);
  s.set_image_ref("sha256:abc");
  (*s.mutable_annotations())[kRestartCountAnnotation] = std::to_string(restartCount);
  return s;
}

json statusPod(const std::string& policy = "Always") {
  return {{"metadata", {{"name", "p"}, {"namespace", "default"}, {"uid", "u"}}},
          {"spec",
           {{"restartPolicy", policy},
            {"containers", {{{"name", "app"}, {"image", "busybox:1.36"}}}}}}};
}

TEST(PodStatusTest, RunningAndReadyPod) {
  PodRuntimeView view;
  view.sandboxReady = true;
  view.podIPs = {"10.244.0.5"};
  auto& cv = view.containers["app"];
  cv.instances = {instance("c2", v1::CONTAINER_RUNNING, 1),
                  instance("c1", v1::CONTAINER_EXITED, 0, 137, "OOMKilled")};
  cv.ready = cv.started = true;
  StatusContext ctx;
  ctx.hostIP = "192.168.1.2";
  json st = computePodStatus(statusPod(), view, ctx);
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["podIP"], "10.244.0.5");
  EXPECT_EQ(st["podIPs"], json::parse(R"J([{"ip": "10.244.0.5"}])J"));
  EXPECT_EQ(st["hostIP"], "192.168.1.2");
  EXPECT_EQ(st["qosClass"], "BestEffort");
  const json& cs = st["containerStatuses"][0];
  EXPECT_EQ(cs["containerID"], "containerd://c2");
  EXPECT_EQ(cs["restartCount"], 1);
  EXPECT_EQ(cs["ready"], true);
  EXPECT_EQ(cs["started"], true);
  EXPECT_EQ(cs["imageID"], "sha256:abc");
  EXPECT_EQ(cs["image"], "busybox:1.36");
  EXPECT_EQ(cs["state"]["running"]["startedAt"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(cs["lastState"]["terminated"]["reason"], "OOMKilled");
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 137);
  std::map<std::string, std::string> conds;
  for (const auto& c : st["conditions"]) conds[c["type"]] = c["status"];
  EXPECT_EQ(conds, (std::map<std::string, std::string>{{"Initialized", "True"},
                                                       {"Ready", "True"},
                                                       {"ContainersReady", "True"},
                                                       {"PodScheduled", "True"}}));
}

TEST(PodStatusTest, TransitionTimesAndStartTimeCarryOver) {
  PodRuntimeView view;
  view.containers["app"].instances = {instance("c1", v1::CONTAINER_RUNNING, 0)};
  StatusContext ctx;
  ctx.now = Clock::time_point(std::chrono::seconds(1700000000));
  json pod = statusPod();
  json first = computePodStatus(pod, view, ctx);
  pod["status"] = first;
  ctx.now += std::chrono::seconds(30);
  json second = computePodStatus(pod, view, ctx);
  EXPECT_EQ(first, second);
  EXPECT_EQ(second["startTime"], "2023-11-14T22:13:20Z");
  // Becoming ready moves only the Ready conditions' transition time.
  view.containers["app"].ready = view.containers["app"].started = true;
  json third = computePodStatus(pod, view, ctx);
  for (const auto& c : third["conditions"]) {
    bool moved = c["type"] == "Ready" || c["type"] == "ContainersReady";
    EXPECT_EQ(c["lastTransitionTime"], moved ? "2023-11-14T22:13:50Z" : "2023-11-14T22:13:20Z")
        << c.dump();
  }
}

TEST(PodStatusTest, CrashLoopBackOffWaitsWithLastState) {
  PodRuntimeView view;
  auto& cv = view.containers["app"];
  cv.instances = {instance("c3", v1::CONTAINER_EXITED, 2, 1, "Error")};
  cv.waitingReason = "CrashLoopBackOff";
  cv.waitingMessage = "back-off 20s restarting failed container=app";
  json st = computePodStatus(statusPod(), view, {});
  const json& cs = st["containerStatuses"][0];
  EXPECT_EQ(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 1);
  EXPECT_EQ(cs["restartCount"], 2);
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(cs["ready"], false);
}

TEST(PodStatusTest, PhasesFollowRestartPolicy) {
  PodRuntimeView ok, failed;
  ok.containers["app"].instances = {instance("c", v1::CONTAINER_EXITED, 0, 0)};
  failed.containers["app"].instances = {instance("c", v1::CONTAINER_EXITED, 0, 3)};
  EXPECT_EQ(computePodStatus(statusPod("Never"), ok, {})["phase"], "Succeeded");
  EXPECT_EQ(computePodStatus(statusPod("Never"), failed, {})["phase"], "Failed");
  EXPECT_EQ(computePodStatus(statusPod("OnFailure"), ok, {})["phase"], "Succeeded");
  EXPECT_EQ(computePodStatus(statusPod("OnFailure"), failed, {})["phase"], "Running");
  json st = computePodStatus(statusPod("Never"), ok, {});
  EXPECT_EQ(st["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  for (const auto& c : st["conditions"])
    if (c["type"] == "Ready") {
      EXPECT_EQ(c["reason"], "PodCompleted");
    }
  PodRuntimeView nothing;
  json pending = computePodStatus(statusPod(), nothing, {});
  EXPECT_EQ(pending["phase"], "Pending");
  EXPECT_EQ(pending["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
}

TEST(PodStatusTest, InitContainersGatePhaseAndCondition) {
  json pod = statusPod();
  pod["spec"]["initContainers"] = {{{"name", "init"}, {"image", "busybox"}}};
  PodRuntimeView view;
  view.containers["init"].instances = {instance("i1", v1::CONTAINER_RUNNING, 0)};
  json st = computePodStatus(pod, view, {});
  EXPECT_EQ(st["phase"], "Pending");
  EXPECT_EQ(st["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
  for (const auto& c : st["conditions"])
    if (c["type"] == "Initialized") {
      EXPECT_EQ(c["status"], "False");
      EXPECT_EQ(c["message"], "containers with incomplete status: [init]");
    }
  view.containers["init"].instances = {instance("i1", v1::CONTAINER_EXITED, 0, 0)};
  st = computePodStatus(pod, view, {});
  EXPECT_EQ(st["initContainerStatuses"][0]["ready"], true);
  EXPECT_EQ(st["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
}

}  // namespace
}  // namespace minik8s::kubelet
