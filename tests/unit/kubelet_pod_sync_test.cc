// PodSyncer against the in-memory CRI (FakeRuntime) with a fake clock: sandbox and container
// creation, idempotence, restart back-off and CrashLoopBackOff, restart policies, adoption after
// an agent restart, probes, image pulls, init containers, termination.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "fake_clock.h"
#include "kubelet/cri/fake_runtime.h"
#include "kubelet/pod_sync.h"
#include "kubelet/pod_util.h"
#include "kubelet_fake_objects.h"

namespace minik8s::kubelet {
namespace {

using namespace std::chrono_literals;
namespace v1 = ::runtime::v1;

using testing::FakeClock;

using testing::MapObjects;

// Keeps what the sync reported, in order.
struct RecordedEvents : client::EventRecorder {
  struct Event {
    std::string fieldPath, type, reason, message;
  };
  void recordAt(const json& pod, const std::string& fieldPath, const std::string& type,
                const std::string& reason, const std::string& message) override {
    EXPECT_EQ(pod["metadata"]["name"], "web");
    all.push_back({fieldPath, type, reason, message});
  }
  std::vector<std::string> reasons() const {
    std::vector<std::string> out;
    for (const auto& e : all) out.push_back(e.reason);
    return out;
  }
  const Event* find(const std::string& reason) const {
    for (const auto& e : all)
      if (e.reason == reason) return &e;
    return nullptr;
  }
  std::vector<Event> all;
};

class PodSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = ::testing::TempDir() + "kubelet-sync-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter++);
    std::filesystem::remove_all(root);
    volumes = std::make_unique<VolumeManager>(root, objects, clock);
    makeSyncer();
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  // A fresh kubelet (no memory of earlier syncs) on the same runtime: an agent restart.
  void makeSyncer() {
    probes = std::make_unique<ProbeManager>(runtime, clock);
    PodSyncerOptions o;
    o.nodeName = "node-1";
    o.hostIP = "192.168.5.5";
    o.podLogRoot = root + "/logs";
    o.cgroupRoot = "/minik8s/node-1/kubepods";
    syncer = std::make_unique<PodSyncer>(runtime, runtime, *volumes, objects, *probes, clock, o,
                                         &events);
  }

  json pod(const std::string& policy = "Always") {
    return json::parse(R"J({
      "metadata": {"name": "web", "namespace": "default", "uid": "uid-1",
                   "labels": {"app": "web"}},
      "spec": {"nodeName": "node-1", "restartPolicy": ")J" +
                       policy + R"J(",
        "containers": [{"name": "app", "image": "busybox:1.36",
                        "command": ["sh", "-c"], "args": ["echo $(GREETING); sleep 1000"],
                        "env": [{"name": "GREETING", "value": "hi"},
                                {"name": "MY_IP", "valueFrom": {"fieldRef":
                                                               {"fieldPath": "status.podIP"}}}],
                        "workingDir": "/tmp",
                        "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"limits": {"cpu": "200m", "memory": "32Mi"}}}]}})J");
  }

  // Syncs and writes the status back into the pod, as the API round trip would.
  json sync(json& p) {
    auto st = syncer->syncPod(p);
    EXPECT_TRUE(st.ok()) << st.status().toString();
    if (!st.ok()) return json();
    p["status"] = *st;
    return *st;
  }

  std::vector<v1::Container> containersNamed(const std::string& name) {
    v1::ContainerFilter f;
    (*f.mutable_label_selector())[kContainerNameLabel] = name;
    auto list = runtime.listContainers(f);
    return list.ok() ? *list : std::vector<v1::Container>{};
  }
  std::string runningId(const std::string& name) {
    for (const auto& c : containersNamed(name))
      if (c.state() == v1::CONTAINER_RUNNING) return c.id();
    return "";
  }
  static const json& appStatus(const json& st) { return st["containerStatuses"][0]; }

  static inline int counter = 0;
  std::string root;
  FakeClock clock;
  MapObjects objects;
  cri::FakeRuntime runtime;
  std::unique_ptr<VolumeManager> volumes;
  std::unique_ptr<ProbeManager> probes;
  std::unique_ptr<PodSyncer> syncer;
  RecordedEvents events;
};

TEST_F(PodSyncTest, CreatesSandboxAndContainerFromTheSpec) {
  json p = pod();
  json st = sync(p);
  ASSERT_EQ(runtime.sandboxCount(), 1u);
  ASSERT_EQ(runtime.containerCount(), 1u);
  auto sandboxes = runtime.listPodSandbox();
  ASSERT_TRUE(sandboxes.ok());
  auto sc = runtime.sandboxConfig((*sandboxes)[0].id());
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->labels().at("io.kubernetes.pod.uid"), "uid-1");
  EXPECT_EQ(sc->labels().at("io.kubernetes.pod.name"), "web");
  EXPECT_EQ(sc->labels().at("io.kubernetes.pod.namespace"), "default");
  EXPECT_EQ(sc->labels().at("app"), "web");
  EXPECT_EQ(sc->linux().cgroup_parent(), "/minik8s/node-1/kubepods/poduid-1");
  EXPECT_EQ(sc->hostname(), "web");
  EXPECT_EQ(sc->log_directory(), root + "/logs/default_web_uid-1");
  ASSERT_EQ(sc->port_mappings_size(), 1);
  EXPECT_EQ(sc->port_mappings(0).host_port(), 8080);
  EXPECT_EQ(sc->port_mappings(0).container_port(), 80);

  std::string id = runningId("app");
  ASSERT_FALSE(id.empty());
  auto cc = runtime.containerConfig(id);
  ASSERT_TRUE(cc.ok());
  EXPECT_EQ(cc->labels().at("io.kubernetes.container.name"), "app");
  EXPECT_EQ(cc->labels().at("io.kubernetes.pod.uid"), "uid-1");
  EXPECT_EQ(cc->annotations().at("io.kubernetes.container.restartCount"), "0");
  EXPECT_EQ(cc->log_path(), "app/0.log");
  ASSERT_EQ(cc->args_size(), 1);
  EXPECT_EQ(cc->args(0), "echo hi; sleep 1000");
  EXPECT_EQ(cc->working_dir(), "/tmp");
  std::map<std::string, std::string> env;
  for (const auto& kv : cc->envs()) env[kv.key()] = kv.value();
  EXPECT_EQ(env["MY_IP"], "10.88.0.2");
  EXPECT_EQ(cc->linux().resources().cpu_quota(), 20000);
  EXPECT_EQ(cc->linux().resources().cpu_period(), 100000);
  EXPECT_EQ(cc->linux().resources().memory_limit_in_bytes(), 32 << 20);

  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["podIP"], "10.88.0.2");
  EXPECT_EQ(st["hostIP"], "192.168.5.5");
  EXPECT_EQ(st["qosClass"], "Guaranteed");
  EXPECT_EQ(appStatus(st)["containerID"], "containerd://" + id);
  EXPECT_EQ(appStatus(st)["ready"], true);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
}

// A new pod's start asks the runtime only what it needs: the view after RunPodSandbox comes from
// its answer and one PodSandboxStatus (for the IP), and the image's status is read once (twice
// where it had to be pulled: before and after).
TEST_F(PodSyncTest, NewPodStartMakesOnlyTheNeededRuntimeCalls) {
  json p = pod();
  json st = sync(p);
  ASSERT_EQ(st["phase"], "Running");
  EXPECT_EQ(runtime.callCount("RunPodSandbox"), 1);
  EXPECT_EQ(runtime.callCount("PodSandboxStatus"), 1);
  EXPECT_EQ(runtime.callCount("PullImage"), 1);
  EXPECT_EQ(runtime.callCount("ImageStatus"), 2);
  runtime.clearCalls();
  json again = pod();
  again["metadata"]["uid"] = "uid-2";
  ASSERT_EQ(sync(again)["phase"], "Running");
  EXPECT_EQ(runtime.callCount("PullImage"), 0);  // present now
  EXPECT_EQ(runtime.callCount("ImageStatus"), 1);
  EXPECT_EQ(runtime.callCount("CreateContainer"), 1);
  EXPECT_EQ(runtime.callCount("StartContainer"), 1);
  // Before anything (is the pod here already?) and after the start (the container's state).
  EXPECT_EQ(runtime.callCount("ListPodSandbox"), 2);
  EXPECT_EQ(runtime.callCount("ListContainers"), 2);
}

TEST_F(PodSyncTest, SyncingAgainChangesNothing) {
  json p = pod();
  json first = sync(p);
  runtime.clearCalls();
  clock.advance(1s);
  json second = sync(p);
  EXPECT_EQ(first, second);
  for (const char* m : {"RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer",
                        "RemoveContainer", "PullImage"})
    EXPECT_EQ(runtime.callCount(m), 0) << m;
}

TEST_F(PodSyncTest, CrashingContainerBacksOffExponentially) {
  json p = pod();
  sync(p);
  // The first exit restarts at once.
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
  json st = sync(p);
  EXPECT_EQ(appStatus(st)["restartCount"], 1);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
  EXPECT_EQ(appStatus(st)["lastState"]["terminated"]["exitCode"], 1);

  // The second waits 10 s, the third 20 s.
  for (int delay : {10, 20, 40}) {
    ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
    st = sync(p);
    EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "CrashLoopBackOff");
    EXPECT_EQ(appStatus(st)["lastState"]["terminated"]["reason"], "Error");
    EXPECT_EQ(st["phase"], "Running");
    clock.advance(std::chrono::seconds(delay - 1));
    st = sync(p);
    EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "CrashLoopBackOff") << delay;
    EXPECT_EQ(runningId("app"), "");
    clock.advance(1s);
    st = sync(p);
    EXPECT_TRUE(appStatus(st)["state"].contains("running")) << delay;
  }
  EXPECT_EQ(appStatus(st)["restartCount"], 4);
  // Only the current and the previous instance are kept.
  EXPECT_EQ(containersNamed("app").size(), 2u);
}

TEST_F(PodSyncTest, RestartPoliciesNeverAndOnFailure) {
  json never = pod("Never");
  sync(never);
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 2, "Error").ok());
  json st = sync(never);
  EXPECT_EQ(st["phase"], "Failed");
  EXPECT_EQ(appStatus(st)["state"]["terminated"]["exitCode"], 2);
  EXPECT_EQ(containersNamed("app").size(), 1u);

  json onFailure = pod("OnFailure");
  onFailure["metadata"]["uid"] = "uid-2";
  sync(onFailure);
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 0, "Completed").ok());
  st = sync(onFailure);
  EXPECT_EQ(st["phase"], "Succeeded");
  EXPECT_EQ(appStatus(st)["state"]["terminated"]["reason"], "Completed");
}

TEST_F(PodSyncTest, AdoptsRunningPodAfterAgentRestart) {
  json p = pod();
  sync(p);
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
  json before = sync(p);  // restarted once
  std::string id = runningId("app");
  runtime.clearCalls();

  makeSyncer();  // the agent restarts: no memory, same runtime
  clock.advance(1s);
  json after = sync(p);
  EXPECT_EQ(runtime.callCount("RunPodSandbox"), 0);
  EXPECT_EQ(runtime.callCount("CreateContainer"), 0);
  EXPECT_EQ(runtime.callCount("StopContainer"), 0);
  EXPECT_EQ(runningId("app"), id);
  EXPECT_EQ(runtime.sandboxCount(), 1u);
  EXPECT_EQ(appStatus(after)["containerID"], "containerd://" + id);
  EXPECT_EQ(appStatus(after)["restartCount"], 1);
  EXPECT_EQ(after, before);
}

TEST_F(PodSyncTest, FailedLivenessProbeRestartsTheContainer) {
  json p = pod();
  p["spec"]["containers"][0]["livenessProbe"] = {{"exec", {{"command", {"cat", "/tmp/healthy"}}}},
                                                 {"initialDelaySeconds", 5},
                                                 {"periodSeconds", 2},
                                                 {"failureThreshold", 2}};
  sync(p);
  std::string first = runningId("app");
  runtime.setExecSyncResult(first, 1);
  runtime.clearCalls();
  sync(p);  // within the initial delay: no probe yet
  EXPECT_EQ(runtime.callCount("ExecSync"), 0);
  clock.advance(5s);
  sync(p);  // failure 1
  EXPECT_EQ(runtime.callCount("ExecSync"), 1);
  EXPECT_EQ(runningId("app"), first);
  clock.advance(1s);
  sync(p);  // not due yet
  EXPECT_EQ(runtime.callCount("ExecSync"), 1);
  clock.advance(1s);
  json st = sync(p);  // failure 2: killed and restarted
  EXPECT_EQ(runtime.callCount("ExecSync"), 2);
  EXPECT_EQ(runtime.callCount("StopContainer"), 1);
  std::string second = runningId("app");
  EXPECT_NE(second, first);
  EXPECT_FALSE(second.empty());
  EXPECT_EQ(appStatus(st)["restartCount"], 1);
}

TEST_F(PodSyncTest, ReadinessProbeFlipsReady) {
  json p = pod();
  p["spec"]["containers"][0]["readinessProbe"] = {
      {"exec", {{"command", {"true"}}}}, {"periodSeconds", 1}, {"failureThreshold", 1}};
  runtime.setExecSyncResult("", 1);
  json st = sync(p);
  EXPECT_EQ(appStatus(st)["ready"], false);
  EXPECT_EQ(appStatus(st)["started"], true);
  for (const auto& c : st["conditions"])
    if (c["type"] == "Ready") {
      EXPECT_EQ(c["status"], "False");
    }
  runtime.setExecSyncResult("", 0);
  clock.advance(1s);
  st = sync(p);
  EXPECT_EQ(appStatus(st)["ready"], true);
  runtime.setExecSyncResult("", 1);
  clock.advance(1s);
  st = sync(p);
  EXPECT_EQ(appStatus(st)["ready"], false);
  EXPECT_EQ(runtime.callCount("StopContainer"), 0);  // readiness never restarts
}

TEST_F(PodSyncTest, StartupProbeHoldsOtherProbes) {
  json p = pod();
  p["spec"]["containers"][0]["startupProbe"] = {
      {"exec", {{"command", {"start"}}}}, {"periodSeconds", 1}, {"failureThreshold", 30}};
  p["spec"]["containers"][0]["livenessProbe"] = {{"exec", {{"command", {"live"}}}},
                                                 {"periodSeconds", 1}};
  std::vector<std::string> seen;
  bool started = false;
  runtime.setExecSyncHandler([&](const std::string&, const std::vector<std::string>& cmd) {
    seen.push_back(cmd[0]);
    v1::ExecSyncResponse r;
    r.set_exit_code(cmd[0] == "start" && !started ? 1 : 0);
    return Result<v1::ExecSyncResponse>(r);
  });
  json st = sync(p);  // creates the container; its probes start with the next sync
  EXPECT_EQ(appStatus(st)["started"], false);
  clock.advance(1s);
  st = sync(p);
  EXPECT_EQ(appStatus(st)["started"], false);
  started = true;
  clock.advance(1s);
  st = sync(p);
  EXPECT_EQ(appStatus(st)["started"], true);
  clock.advance(1s);
  sync(p);
  // Liveness waits for the startup probe to pass.
  EXPECT_EQ(seen, (std::vector<std::string>{"start", "start", "live"}));
}

TEST_F(PodSyncTest, ImagePullFailureBacksOff) {
  json p = pod();
  runtime.setPullError("busybox:1.36", Status::Unavailable("registry unreachable"));
  json st = sync(p);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "ErrImagePull");
  EXPECT_NE(
      appStatus(st)["state"]["waiting"]["message"].get<std::string>().find("registry unreachable"),
      std::string::npos);
  EXPECT_EQ(st["phase"], "Pending");
  runtime.clearCalls();
  clock.advance(5s);
  st = sync(p);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "ImagePullBackOff");
  EXPECT_EQ(runtime.callCount("PullImage"), 0);
  clock.advance(5s);
  runtime.setPullError("busybox:1.36", Status::Ok());
  st = sync(p);
  EXPECT_EQ(runtime.callCount("PullImage"), 1);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
}

TEST_F(PodSyncTest, PullPolicyNeverAndIfNotPresent) {
  json p = pod();
  p["spec"]["containers"][0]["imagePullPolicy"] = "Never";
  json st = sync(p);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "ErrImageNeverPull");
  EXPECT_EQ(runtime.callCount("PullImage"), 0);
  runtime.addImage("busybox:1.36");
  p["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent";
  st = sync(p);
  EXPECT_EQ(runtime.callCount("PullImage"), 0);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
}

TEST_F(PodSyncTest, InitContainersRunFirstInOrder) {
  json p = pod();
  p["spec"]["initContainers"] = {{{"name", "init-1"}, {"image", "busybox:1.36"}},
                                 {{"name", "init-2"}, {"image", "busybox:1.36"}}};
  json st = sync(p);
  EXPECT_FALSE(runningId("init-1").empty());
  EXPECT_TRUE(containersNamed("init-2").empty());
  EXPECT_TRUE(containersNamed("app").empty());
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "PodInitializing");
  ASSERT_TRUE(runtime.setContainerExited(runningId("init-1"), 0, "Completed").ok());
  sync(p);
  EXPECT_FALSE(runningId("init-2").empty());
  EXPECT_TRUE(containersNamed("app").empty());
  ASSERT_TRUE(runtime.setContainerExited(runningId("init-2"), 0, "Completed").ok());
  st = sync(p);
  EXPECT_FALSE(runningId("app").empty());
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["initContainerStatuses"][1]["state"]["terminated"]["reason"], "Completed");
  // After an agent restart the completed init containers are not run again.
  makeSyncer();
  runtime.clearCalls();
  sync(p);
  EXPECT_EQ(runtime.callCount("CreateContainer"), 0);
}

TEST_F(PodSyncTest, MissingConfigMapIsCreateContainerConfigError) {
  json p = pod();
  p["spec"]["containers"][0]["env"].push_back(
      {{"name", "X"}, {"valueFrom", {{"configMapKeyRef", {{"name", "cfg"}, {"key", "k"}}}}}});
  json st = sync(p);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "CreateContainerConfigError");
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["message"], "configmap \"cfg\" not found");
  objects.configMaps["default/cfg"] = {{"k", "v"}};
  st = sync(p);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
}

// The securityContext reaches CRI as the kubelet sends it (the details: kubelet_security_context_
// test.cc); runAsNonRoot is checked against the image's user before anything is created.
TEST_F(PodSyncTest, RestrictedPodReachesTheRuntime) {
  json p = pod();
  p["spec"]["securityContext"] = {
      {"runAsNonRoot", true}, {"fsGroup", 2000}, {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  p["spec"]["containers"][0]["securityContext"] = {{"runAsUser", 1000},
                                                   {"allowPrivilegeEscalation", false},
                                                   {"capabilities", {{"drop", {"ALL"}}}}};
  p["spec"]["volumes"] = {{{"name", "scratch"}, {"emptyDir", json::object()}}};
  json st = sync(p);
  ASSERT_TRUE(appStatus(st)["state"].contains("running")) << st.dump();
  auto cc = runtime.containerConfig(runningId("app"));
  ASSERT_TRUE(cc.ok());
  const auto& sc = cc->linux().security_context();
  EXPECT_EQ(sc.run_as_user().value(), 1000);
  EXPECT_TRUE(sc.no_new_privs());
  EXPECT_EQ(sc.capabilities().drop_capabilities(0), "ALL");
  EXPECT_EQ(sc.seccomp().profile_type(), v1::SecurityProfile::RuntimeDefault);
  ASSERT_EQ(sc.supplemental_groups_size(), 1);
  EXPECT_EQ(sc.supplemental_groups(0), 2000);
  auto sandboxes = runtime.listPodSandbox();
  auto sandbox = runtime.sandboxConfig((*sandboxes)[0].id());
  EXPECT_EQ(sandbox->linux().security_context().supplemental_groups(0), 2000);
  EXPECT_EQ(sandbox->linux().security_context().seccomp().profile_type(),
            v1::SecurityProfile::RuntimeDefault);
  // The emptyDir belongs to the fsGroup, setgid so that new files do too (chown needs root).
  if (::geteuid() != 0) return;
  struct stat dir {};
  ASSERT_EQ(::stat((root + "/pods/uid-1/volumes/kubernetes.io~empty-dir/scratch").c_str(), &dir),
            0);
  EXPECT_EQ(dir.st_gid, 2000u);
  EXPECT_EQ(dir.st_mode & 07777, 02777u);
}

TEST_F(PodSyncTest, RunAsNonRootOnARootImageIsCreateContainerConfigError) {
  json p = pod();
  p["spec"]["securityContext"] = {{"runAsNonRoot", true}};
  runtime.setImageUser("busybox:1.36", "");  // no User: root
  json st = sync(p);
  EXPECT_EQ(runtime.callCount("CreateContainer"), 0);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["reason"], "CreateContainerConfigError");
  const std::string message =
      "container has runAsNonRoot and image will run as root (pod: \"web_default(uid-1)\", "
      "container: app)";
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["message"], message);
  const auto* failed = events.find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->type, "Warning");
  EXPECT_EQ(failed->fieldPath, "spec.containers{app}");
  EXPECT_EQ(failed->message, "Error: " + message);

  runtime.setImageUser("busybox:1.36", "nginx");
  st = sync(p);
  EXPECT_EQ(appStatus(st)["state"]["waiting"]["message"],
            "container has runAsNonRoot and image has non-numeric user (nginx), cannot verify "
            "user is non-root (pod: \"web_default(uid-1)\", container: app)");

  // An image that runs as 1000:1000 passes, and its uid is what the runtime is told.
  runtime.setImageUser("busybox:1.36", "1000:1000");
  st = sync(p);
  ASSERT_TRUE(appStatus(st)["state"].contains("running")) << st.dump();
  EXPECT_EQ(
      runtime.containerConfig(runningId("app"))->linux().security_context().run_as_user().value(),
      1000);
}

TEST_F(PodSyncTest, ForbiddenSysctlRejectsThePodForGood) {
  json p = pod();
  p["spec"]["securityContext"] = {{"sysctls", {{{"name", "kernel.msgmax"}, {"value", "65536"}}}}};
  json st = sync(p);
  EXPECT_EQ(runtime.sandboxCount(), 0u);
  EXPECT_EQ(st["phase"], "Failed");
  EXPECT_EQ(st["reason"], "SysctlForbidden");
  EXPECT_EQ(st["message"], "Pod was rejected: forbidden sysctl: \"kernel.msgmax\" not allowlisted");
  const auto* rejected = events.find("SysctlForbidden");
  ASSERT_NE(rejected, nullptr);
  EXPECT_EQ(rejected->type, "Warning");
  EXPECT_EQ(rejected->message, "forbidden sysctl: \"kernel.msgmax\" not allowlisted");
  EXPECT_EQ(sync(p), st);  // stays rejected
  EXPECT_EQ(runtime.sandboxCount(), 0u);
}

TEST_F(PodSyncTest, DeadSandboxIsReplaced) {
  json p = pod();
  sync(p);
  auto sandboxes = runtime.listPodSandbox();
  ASSERT_TRUE(runtime.setSandboxNotReady((*sandboxes)[0].id()).ok());
  json st = sync(p);
  sandboxes = runtime.listPodSandbox();
  ASSERT_EQ(sandboxes->size(), 1u);
  EXPECT_EQ((*sandboxes)[0].metadata().attempt(), 1u);
  EXPECT_TRUE(appStatus(st)["state"].contains("running"));
}

TEST_F(PodSyncTest, KillPodStopsWithGraceAndRemovesEverything) {
  json p = pod();
  p["spec"]["volumes"] = {{{"name", "scratch"}, {"emptyDir", json::object()}}};
  sync(p);
  EXPECT_TRUE(std::filesystem::exists(root + "/pods/uid-1/volumes"));
  runtime.clearCalls();
  ASSERT_TRUE(syncer->killPod("uid-1", 7).ok());
  EXPECT_EQ(runtime.sandboxCount(), 0u);
  EXPECT_EQ(runtime.containerCount(), 0u);
  EXPECT_EQ(runtime.callCount("StopContainer"), 1);
  EXPECT_FALSE(std::filesystem::exists(root + "/pods/uid-1"));
  auto uids = syncer->runtimePodUids();
  ASSERT_TRUE(uids.ok());
  EXPECT_TRUE(uids->empty());
  // Idempotent.
  EXPECT_TRUE(syncer->killPod("uid-1", 7).ok());
}

}  // namespace
}  // namespace minik8s::kubelet

namespace minik8s::kubelet {
namespace {

TEST_F(PodSyncTest, EventsOfAPodStart) {
  json p = pod();
  p["spec"]["containers"][0]["imagePullPolicy"] = "Always";
  sync(p);
  EXPECT_EQ(events.reasons(),
            (std::vector<std::string>{"Pulling", "Pulled", "Created", "Started"}));
  for (const auto& e : events.all) {
    EXPECT_EQ(e.fieldPath, "spec.containers{app}");
    EXPECT_EQ(e.type, "Normal");
  }
  EXPECT_EQ(events.all[0].message, "Pulling image \"busybox:1.36\"");
  EXPECT_EQ(events.all[1].message.rfind("Successfully pulled image \"busybox:1.36\" in ", 0), 0u);
  EXPECT_EQ(events.all[2].message, "Created container app");
  EXPECT_EQ(events.all[3].message, "Started container app");
  events.all.clear();
  sync(p);  // nothing happens, nothing is reported
  EXPECT_TRUE(events.all.empty());

  runtime.addImage("busybox:1.36");
  p["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent";
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
  sync(p);
  ASSERT_NE(events.find("Pulled"), nullptr);
  EXPECT_EQ(events.find("Pulled")->message,
            "Container image \"busybox:1.36\" already present on machine");
}

TEST_F(PodSyncTest, EventsOfACrashLoop) {
  json p = pod();
  sync(p);
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
  sync(p);  // restarted at once
  EXPECT_EQ(events.find("BackOff"), nullptr);
  ASSERT_TRUE(runtime.setContainerExited(runningId("app"), 1, "Error").ok());
  sync(p);  // backing off
  const auto* backoff = events.find("BackOff");
  ASSERT_NE(backoff, nullptr);
  EXPECT_EQ(backoff->type, "Warning");
  EXPECT_EQ(backoff->fieldPath, "spec.containers{app}");
  EXPECT_EQ(backoff->message, "Back-off restarting failed container app in pod web_default(uid-1)");
}

TEST_F(PodSyncTest, EventsOfALivenessKill) {
  json p = pod();
  p["spec"]["containers"][0]["livenessProbe"] = {{"exec", {{"command", {"cat", "/tmp/healthy"}}}},
                                                 {"periodSeconds", 1},
                                                 {"failureThreshold", 2}};
  sync(p);
  runtime.setExecSyncResult(runningId("app"), 1);
  events.all.clear();
  clock.advance(1s);
  sync(p);
  clock.advance(1s);
  sync(p);
  std::vector<std::string> want = {"Unhealthy", "Unhealthy", "Killing", "Created", "Started"};
  auto got = events.reasons();
  got.erase(std::remove(got.begin(), got.end(), "Pulled"), got.end());
  got.erase(std::remove(got.begin(), got.end(), "Pulling"), got.end());
  EXPECT_EQ(got, want);
  const auto* unhealthy = events.find("Unhealthy");
  ASSERT_NE(unhealthy, nullptr);
  EXPECT_EQ(unhealthy->type, "Warning");
  EXPECT_EQ(unhealthy->message.rfind("Liveness probe failed: ", 0), 0u) << unhealthy->message;
  EXPECT_EQ(events.find("Killing")->message,
            "Container app failed liveness probe, will be restarted");
}

TEST_F(PodSyncTest, APullOfAnImageNoRegistryHasSaysHowToBuildOrPushIt) {
  json p = pod();
  runtime.setPullError("busybox:1.36",
                       Status::NotFoundMessage("docker.io/library/busybox:1.36: not found"));
  sync(p);
  const auto* failed = events.find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_NE(failed->message.find("not found (no registry this node reaches has it: build it with "
                                 "`minik8s image build` or push"),
            std::string::npos)
      << failed->message;
  events.all.clear();
  runtime.setPullError("busybox:1.36", Status::Unavailable("registry unreachable"));
  clock.advance(1h);
  sync(p);
  failed = events.find("Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->message.find("minik8s image build"), std::string::npos) << failed->message;
}

TEST_F(PodSyncTest, EventsOfAFailedPullAndOfTermination) {
  json p = pod();
  runtime.setPullError("busybox:1.36", Status::Unavailable("registry unreachable"));
  sync(p);
  std::vector<std::string> msgs;
  for (const auto& e : events.all)
    if (e.reason == "Failed") msgs.push_back(e.message);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_NE(msgs[0].find("Failed to pull image \"busybox:1.36\": "), std::string::npos);
  EXPECT_NE(msgs[0].find("registry unreachable"), std::string::npos);
  EXPECT_EQ(msgs[1], "Error: ErrImagePull");
  events.all.clear();
  clock.advance(1s);
  sync(p);
  EXPECT_EQ(events.reasons(), (std::vector<std::string>{"BackOff", "Failed"}));
  EXPECT_EQ(events.all[0].message, "Back-off pulling image \"busybox:1.36\"");
  EXPECT_EQ(events.all[1].message, "Error: ImagePullBackOff");

  runtime.setPullError("busybox:1.36", Status::Ok());
  clock.advance(60s);
  sync(p);
  ASSERT_FALSE(runningId("app").empty());
  events.all.clear();
  ASSERT_TRUE(syncer->killPod("uid-1", 3, &p).ok());
  EXPECT_EQ(events.reasons(), (std::vector<std::string>{"Killing"}));
  EXPECT_EQ(events.all[0].message, "Stopping container app");
  EXPECT_EQ(events.all[0].fieldPath, "spec.containers{app}");
}

}  // namespace
}  // namespace minik8s::kubelet
