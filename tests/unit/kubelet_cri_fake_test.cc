#include <gtest/gtest.h>

#include "kubelet/cri/fake_runtime.h"

namespace minik8s::kubelet::cri {
namespace {

class FakeRuntimeTest : public ::testing::Test {
 protected:
  FakeRuntimeTest() : runtime([this] { return nowNanos; }) {}

  v1::PodSandboxConfig sandboxConfig(const std::string& name, bool hostNetwork = false) {
    v1::PodSandboxConfig config;
    config.mutable_metadata()->set_name(name);
    config.mutable_metadata()->set_namespace_("default");
    config.mutable_metadata()->set_uid("uid-" + name);
    config.set_log_directory("/var/log/pods/default_" + name);
    (*config.mutable_labels())["io.kubernetes.pod.uid"] = "uid-" + name;
    if (hostNetwork) {
      config.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
          v1::NODE);
    }
    return config;
  }

  v1::ContainerConfig containerConfig(const std::string& name, uint32_t attempt = 0) {
    v1::ContainerConfig config;
    config.mutable_metadata()->set_name(name);
    config.mutable_metadata()->set_attempt(attempt);
    config.mutable_image()->set_image("busybox");
    config.set_log_path(name + "/" + std::to_string(attempt) + ".log");
    (*config.mutable_labels())["io.kubernetes.container.name"] = name;
    return config;
  }

  // A running container named `name` in a fresh sandbox; returns {sandboxId, containerId}.
  std::pair<std::string, std::string> runContainer(const std::string& pod,
                                                   const std::string& name) {
    auto sc = sandboxConfig(pod);
    auto sandbox = runtime.runPodSandbox(sc);
    EXPECT_TRUE(sandbox.ok()) << sandbox.status().toString();
    auto id = runtime.createContainer(*sandbox, containerConfig(name), sc);
    EXPECT_TRUE(id.ok()) << id.status().toString();
    EXPECT_TRUE(runtime.startContainer(*id).ok());
    return {*sandbox, *id};
  }

  int64_t nowNanos = 1'000'000'000;
  FakeRuntime runtime;
};

TEST_F(FakeRuntimeTest, SandboxGetsPodIpUnlessHostNetwork) {
  runtime.setNextPodIp("10.244.1.7");
  auto pod = runtime.runPodSandbox(sandboxConfig("web"));
  ASSERT_TRUE(pod.ok());
  auto host = runtime.runPodSandbox(sandboxConfig("host", /*hostNetwork=*/true));
  ASSERT_TRUE(host.ok());
  auto podStatus = runtime.podSandboxStatus(*pod);
  ASSERT_TRUE(podStatus.ok());
  EXPECT_EQ(podStatus->network().ip(), "10.244.1.7");
  EXPECT_EQ(podStatus->state(), v1::SANDBOX_READY);
  EXPECT_EQ(podStatus->created_at(), 1'000'000'000);
  EXPECT_EQ(podStatus->metadata().name(), "web");
  EXPECT_EQ(podStatus->labels().at("io.kubernetes.pod.uid"), "uid-web");
  auto hostStatus = runtime.podSandboxStatus(*host);
  ASSERT_TRUE(hostStatus.ok());
  EXPECT_EQ(hostStatus->network().ip(), "");
  EXPECT_EQ(hostStatus->linux().namespaces().options().network(), v1::NODE);
}

TEST_F(FakeRuntimeTest, SandboxNameIsReservedPerAttempt) {
  auto config = sandboxConfig("web");
  ASSERT_TRUE(runtime.runPodSandbox(config).ok());
  auto again = runtime.runPodSandbox(config);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), 409);
  config.mutable_metadata()->set_attempt(1);
  EXPECT_TRUE(runtime.runPodSandbox(config).ok());
}

TEST_F(FakeRuntimeTest, ContainerLifecycleWithTimestamps) {
  auto sc = sandboxConfig("web");
  auto sandbox = runtime.runPodSandbox(sc);
  ASSERT_TRUE(sandbox.ok());
  std::string imageId = runtime.addImage("docker.io/library/busybox:latest");
  nowNanos = 2'000;
  auto id = runtime.createContainer(*sandbox, containerConfig("app"), sc);
  ASSERT_TRUE(id.ok()) << id.status().toString();
  auto st = runtime.containerStatus(*id);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->state(), v1::CONTAINER_CREATED);
  EXPECT_EQ(st->created_at(), 2'000);
  EXPECT_EQ(st->started_at(), 0);
  EXPECT_EQ(st->image_ref(), imageId);
  EXPECT_EQ(st->log_path(), "/var/log/pods/default_web/app/0.log");

  nowNanos = 3'000;
  ASSERT_TRUE(runtime.startContainer(*id).ok());
  st = runtime.containerStatus(*id);
  EXPECT_EQ(st->state(), v1::CONTAINER_RUNNING);
  EXPECT_EQ(st->started_at(), 3'000);
  // Starting twice is an error, as with containerd.
  EXPECT_EQ(runtime.startContainer(*id).code(), 400);

  nowNanos = 4'000;
  ASSERT_TRUE(runtime.setContainerExited(*id, 1, "Error", "boom").ok());
  st = runtime.containerStatus(*id);
  EXPECT_EQ(st->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st->finished_at(), 4'000);
  EXPECT_EQ(st->exit_code(), 1);
  EXPECT_EQ(st->reason(), "Error");
  EXPECT_EQ(st->message(), "boom");

  // Stop of an exited container is fine; remove is idempotent; then it is gone.
  EXPECT_TRUE(runtime.stopContainer(*id, 30).ok());
  EXPECT_TRUE(runtime.removeContainer(*id).ok());
  EXPECT_TRUE(runtime.removeContainer(*id).ok());
  EXPECT_EQ(runtime.containerStatus(*id).status().code(), 404);
  EXPECT_EQ(runtime.stopContainer(*id, 0).code(), 404);
}

TEST_F(FakeRuntimeTest, CreateNeedsPresentImageAndReadySandbox) {
  auto sc = sandboxConfig("web");
  auto sandbox = runtime.runPodSandbox(sc);
  ASSERT_TRUE(sandbox.ok());
  auto missing = runtime.createContainer(*sandbox, containerConfig("app"), sc);
  EXPECT_EQ(missing.status().code(), 404);
  runtime.addImage("busybox");
  EXPECT_EQ(runtime.createContainer("nope", containerConfig("app"), sc).status().code(), 404);
  ASSERT_TRUE(runtime.createContainer(*sandbox, containerConfig("app"), sc).ok());
  EXPECT_EQ(runtime.createContainer(*sandbox, containerConfig("app"), sc).status().code(), 409);
  EXPECT_TRUE(runtime.createContainer(*sandbox, containerConfig("app", 1), sc).ok());
  ASSERT_TRUE(runtime.stopPodSandbox(*sandbox).ok());
  EXPECT_EQ(runtime.createContainer(*sandbox, containerConfig("app", 2), sc).status().code(), 400);
}

TEST_F(FakeRuntimeTest, StopSemantics) {
  runtime.addImage("busybox");
  auto [sandbox, graceful] = runContainer("a", "graceful");
  auto sc = sandboxConfig("a");
  auto killed = runtime.createContainer(sandbox, containerConfig("killed"), sc);
  ASSERT_TRUE(killed.ok());
  ASSERT_TRUE(runtime.startContainer(*killed).ok());
  ASSERT_TRUE(runtime.stopContainer(graceful, 30).ok());
  ASSERT_TRUE(runtime.stopContainer(*killed, 0).ok());
  EXPECT_EQ(runtime.containerStatus(graceful)->exit_code(), 143);
  EXPECT_EQ(runtime.containerStatus(*killed)->exit_code(), 137);

  // Stopping the sandbox kills what still runs in it and keeps the records.
  auto [sandbox2, running] = runContainer("b", "app");
  ASSERT_TRUE(runtime.stopPodSandbox(sandbox2).ok());
  EXPECT_EQ(runtime.podSandboxStatus(sandbox2)->state(), v1::SANDBOX_NOTREADY);
  auto st = runtime.containerStatus(running);
  EXPECT_EQ(st->state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(st->exit_code(), 137);
  // Removing the sandbox removes its containers; twice is fine; status then 404.
  ASSERT_TRUE(runtime.removePodSandbox(sandbox2).ok());
  ASSERT_TRUE(runtime.removePodSandbox(sandbox2).ok());
  EXPECT_EQ(runtime.podSandboxStatus(sandbox2).status().code(), 404);
  EXPECT_EQ(runtime.containerStatus(running).status().code(), 404);
  EXPECT_EQ(runtime.sandboxCount(), 1u);
  EXPECT_EQ(runtime.containerCount(), 2u);
}

TEST_F(FakeRuntimeTest, ListFilters) {
  runtime.addImage("busybox");
  auto [sa, ca] = runContainer("a", "app");
  auto [sb, cb] = runContainer("b", "app");
  ASSERT_TRUE(runtime.setContainerExited(cb, 0, "Completed").ok());
  ASSERT_TRUE(runtime.stopPodSandbox(sb).ok());

  EXPECT_EQ(runtime.listPodSandbox()->size(), 2u);
  v1::PodSandboxFilter sf;
  sf.mutable_state()->set_state(v1::SANDBOX_READY);
  auto ready = runtime.listPodSandbox(sf);
  ASSERT_EQ(ready->size(), 1u);
  EXPECT_EQ(ready->at(0).id(), sa);
  v1::PodSandboxFilter byLabel;
  (*byLabel.mutable_label_selector())["io.kubernetes.pod.uid"] = "uid-b";
  auto labelled = runtime.listPodSandbox(byLabel);
  ASSERT_EQ(labelled->size(), 1u);
  EXPECT_EQ(labelled->at(0).id(), sb);
  EXPECT_EQ(labelled->at(0).state(), v1::SANDBOX_NOTREADY);

  v1::ContainerFilter cf;
  cf.set_pod_sandbox_id(sb);
  auto inB = runtime.listContainers(cf);
  ASSERT_EQ(inB->size(), 1u);
  EXPECT_EQ(inB->at(0).id(), cb);
  EXPECT_EQ(inB->at(0).state(), v1::CONTAINER_EXITED);
  EXPECT_EQ(inB->at(0).labels().at("io.kubernetes.container.name"), "app");
  v1::ContainerFilter running;
  running.mutable_state()->set_state(v1::CONTAINER_RUNNING);
  auto run = runtime.listContainers(running);
  ASSERT_EQ(run->size(), 1u);
  EXPECT_EQ(run->at(0).id(), ca);
  EXPECT_EQ(run->at(0).pod_sandbox_id(), sa);
  v1::ContainerFilter none;
  (*none.mutable_label_selector())["io.kubernetes.container.name"] = "other";
  EXPECT_TRUE(runtime.listContainers(none)->empty());
}

TEST_F(FakeRuntimeTest, ImageNamesAreNormalised) {
  EXPECT_EQ(FakeRuntime::normalizeImageName("busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(FakeRuntime::normalizeImageName("minik8s/busybox:1.36"),
            "docker.io/minik8s/busybox:1.36");
  EXPECT_EQ(FakeRuntime::normalizeImageName("localhost:5000/app"), "localhost:5000/app:latest");
  EXPECT_EQ(FakeRuntime::normalizeImageName("registry.k8s.io/pause:3.9"),
            "registry.k8s.io/pause:3.9");
  EXPECT_EQ(FakeRuntime::normalizeImageName("nginx@sha256:abc"),
            "docker.io/library/nginx@sha256:abc");

  v1::ImageSpec spec;
  spec.set_image("busybox:latest");
  auto absent = runtime.imageStatus(spec);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_image());
  std::string id = runtime.addImage("docker.io/library/busybox");
  auto present = runtime.imageStatus(spec);
  ASSERT_TRUE(present->has_image());
  EXPECT_EQ(present->image().id(), id);
  // Lookup by id works too.
  v1::ImageSpec byId;
  byId.set_image(id);
  EXPECT_TRUE(runtime.imageStatus(byId)->has_image());
  EXPECT_EQ(runtime.listImages()->size(), 1u);
  ASSERT_TRUE(runtime.removeImage(spec).ok());
  EXPECT_FALSE(runtime.imageStatus(spec)->has_image());
}

TEST_F(FakeRuntimeTest, PullSucceedsOrFailsAsScripted) {
  v1::ImageSpec spec;
  spec.set_image("nginx:1.25");
  auto ref = runtime.pullImage(spec);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(runtime.imageStatus(spec)->image().id(), *ref);

  v1::ImageSpec bad;
  bad.set_image("doesnot/exist");
  runtime.setPullError("doesnot/exist", Status::NotFoundMessage("manifest unknown"));
  auto failed = runtime.pullImage(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "manifest unknown");
  EXPECT_FALSE(runtime.imageStatus(bad)->has_image());
  runtime.setPullError("doesnot/exist", Status::Ok());
  EXPECT_TRUE(runtime.pullImage(bad).ok());

  runtime.setPullableByDefault(false);
  v1::ImageSpec other;
  other.set_image("other");
  EXPECT_EQ(runtime.pullImage(other).status().code(), 404);
  // A present image still "pulls".
  EXPECT_TRUE(runtime.pullImage(spec).ok());
  EXPECT_EQ(runtime.callCount("PullImage"), 5);
}

TEST_F(FakeRuntimeTest, ExecSyncIsScriptable) {
  runtime.addImage("busybox");
  auto [sandbox, a] = runContainer("a", "app");
  auto [sandbox2, b] = runContainer("b", "app");
  auto defaultResult = runtime.execSync(a, {"true"}, std::chrono::seconds(1));
  ASSERT_TRUE(defaultResult.ok());
  EXPECT_EQ(defaultResult->exit_code(), 0);

  runtime.setExecSyncResult("", 0, "any\n");
  runtime.setExecSyncResult(b, 3, "", "not ready\n");
  EXPECT_EQ(runtime.execSync(a, {"cat", "/tmp/x"}, std::chrono::seconds(1))->stdout(), "any\n");
  auto failing = runtime.execSync(b, {"cat", "/tmp/x"}, std::chrono::seconds(1));
  ASSERT_TRUE(failing.ok());  // a non-zero exit is a result, not an error
  EXPECT_EQ(failing->exit_code(), 3);
  EXPECT_EQ(failing->stderr(), "not ready\n");

  std::vector<std::string> seen;
  runtime.setExecSyncHandler(
      [&](const std::string& id,
          const std::vector<std::string>& cmd) -> Result<v1::ExecSyncResponse> {
        seen = cmd;
        if (id == b) return Status::Timeout("probe timed out");
        v1::ExecSyncResponse r;
        r.set_exit_code(7);
        return r;
      });
  EXPECT_EQ(runtime.execSync(a, {"sh", "-c", "x"}, std::chrono::seconds(1))->exit_code(), 7);
  EXPECT_EQ(seen, (std::vector<std::string>{"sh", "-c", "x"}));
  EXPECT_EQ(runtime.execSync(b, {"x"}, std::chrono::seconds(1)).status().code(), 504);

  ASSERT_TRUE(runtime.setContainerExited(a, 0, "Completed").ok());
  EXPECT_EQ(runtime.execSync(a, {"x"}, std::chrono::seconds(1)).status().code(), 400);
}

TEST_F(FakeRuntimeTest, InjectedErrorsAndCallLog) {
  runtime.addImage("busybox");
  runtime.injectError("StartContainer", Status::Internal("runc failed"), 2);
  auto sc = sandboxConfig("web");
  auto sandbox = runtime.runPodSandbox(sc);
  auto id = runtime.createContainer(*sandbox, containerConfig("app"), sc);
  ASSERT_TRUE(id.ok());
  runtime.clearCalls();
  EXPECT_EQ(runtime.startContainer(*id).code(), 500);
  EXPECT_EQ(runtime.startContainer(*id).message(), "runc failed");
  EXPECT_TRUE(runtime.startContainer(*id).ok());
  auto calls = runtime.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].method, "StartContainer");
  EXPECT_EQ(calls[0].target, *id);
  EXPECT_EQ(runtime.callCount("StartContainer"), 3);
  EXPECT_EQ(runtime.callCount("StopContainer"), 0);
  auto config = runtime.containerConfig(*id);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->image().image(), "busybox");
  EXPECT_EQ(runtime.sandboxConfig(*sandbox)->metadata().uid(), "uid-web");
}

TEST_F(FakeRuntimeTest, StatsAndStatus) {
  runtime.addImage("busybox");
  auto [sandbox, id] = runContainer("web", "app");
  runtime.setContainerStats(id, 5'000'000'000, 250'000'000, 64 << 20);
  auto stats = runtime.containerStats(id);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->attributes().id(), id);
  EXPECT_EQ(stats->attributes().metadata().name(), "app");
  EXPECT_EQ(stats->cpu().usage_core_nano_seconds().value(), 5'000'000'000u);
  EXPECT_EQ(stats->cpu().usage_nano_cores().value(), 250'000'000u);
  EXPECT_EQ(stats->memory().working_set_bytes().value(), 64u << 20);
  auto all = runtime.listContainerStats();
  ASSERT_EQ(all->size(), 1u);
  auto pods = runtime.listPodSandboxStats();
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ(pods->at(0).attributes().metadata().name(), "web");
  EXPECT_EQ(pods->at(0).linux().memory().working_set_bytes().value(), 64u << 20);
  ASSERT_EQ(pods->at(0).linux().containers_size(), 1);

  auto st = runtime.status();
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->conditions_size(), 2);
  EXPECT_TRUE(st->conditions(1).status());
  runtime.setNetworkReady(false);
  EXPECT_EQ(runtime.status()->conditions(1).type(), "NetworkReady");
  EXPECT_FALSE(runtime.status()->conditions(1).status());
  EXPECT_EQ(runtime.version()->runtime_api_version(), "v1");
  EXPECT_EQ(runtime.exec(v1::ExecRequest()).status().code(), 404);
}

}  // namespace
}  // namespace minik8s::kubelet::cri
