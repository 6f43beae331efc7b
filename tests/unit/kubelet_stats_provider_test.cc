// CriStatsProvider against cri::FakeRuntime and a /proc of its own: containers grouped into pods
// with their ids, images, start times and memory figures; a pod's network read from its sandbox
// pause process's net/dev (the pid asked of the runtime once per sandbox); none for hostNetwork
// pods; the result rendered as cAdvisor's series with the pod cgroup as `id`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kubelet/cri/fake_runtime.h"
#include "kubelet/pod_util.h"
#include "kubelet/server/prometheus_stats.h"
#include "kubelet/stats_provider.h"

namespace minik8s::kubelet {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::runtime::v1;

const char* const kHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n";

std::string netDevLine(const std::string& name, uint64_t rxBytes, uint64_t txBytes) {
  return name + ": " + std::to_string(rxBytes) + " 7 0 0 0 0 0 0 " + std::to_string(txBytes) +
         " 9 0 0 0 0 0 0\n";
}

class CriStatsProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    procRoot =
        fs::path(::testing::TempDir()) / ("kubelet-stats-proc-" + std::to_string(::getpid()));
    fs::create_directories(procRoot / "self/net");
    std::ofstream(procRoot / "self/net/dev")
        << kHeader << netDevLine("lo", 1, 1) << netDevLine("ens3", 500, 600);
    runtime.addImage("busybox");
  }
  void TearDown() override { fs::remove_all(procRoot); }

  // A running pod with one container; returns {sandbox id, container id}.
  std::pair<std::string, std::string> runPod(const std::string& name, bool hostNetwork) {
    v1::PodSandboxConfig sandbox;
    sandbox.mutable_metadata()->set_name(name);
    sandbox.mutable_metadata()->set_namespace_("default");
    sandbox.mutable_metadata()->set_uid("uid-" + name);
    sandbox.mutable_linux()->set_cgroup_parent("/minik8s/n1/kubepods/poduid-" + name);
    if (hostNetwork) {
      sandbox.mutable_linux()->mutable_security_context()->mutable_namespace_options()->set_network(
          v1::NODE);
    }
    auto sandboxId = runtime.runPodSandbox(sandbox);
    EXPECT_TRUE(sandboxId.ok());
    v1::ContainerConfig c;
    c.mutable_metadata()->set_name("app");
    c.mutable_image()->set_image("busybox");
    (*c.mutable_labels())[kPodNameLabel] = name;
    (*c.mutable_labels())[kPodNamespaceLabel] = "default";
    (*c.mutable_labels())[kPodUidLabel] = "uid-" + name;
    (*c.mutable_labels())[kContainerNameLabel] = "app";
    auto containerId = runtime.createContainer(*sandboxId, c, sandbox);
    EXPECT_TRUE(containerId.ok()) << containerId.status().toString();
    EXPECT_TRUE(runtime.startContainer(*containerId).ok());
    return {*sandboxId, *containerId};
  }

  void writeNetDev(int pid, const std::string& lines) {
    fs::create_directories(procRoot / std::to_string(pid) / "net");
    std::ofstream(procRoot / std::to_string(pid) / "net/dev") << kHeader << lines;
  }

  fs::path procRoot;
  cri::FakeRuntime runtime;
};

TEST_F(CriStatsProviderTest, PodsCarryContainersSandboxAndNetwork) {
  auto [sandbox, container] = runPod("web", false);
  runtime.setContainerStats(container, 3'000'000'000, 10, 4096);
  runtime.setSandboxPid(sandbox, 4242);
  writeNetDev(4242, netDevLine("lo", 1, 1) + netDevLine("eth0", 1000, 2000));
  CriStatsProvider provider(runtime, "n1", procRoot.string());

  auto s = provider.summary();
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->nodeName, "n1");
  ASSERT_TRUE(s->nodeNetwork.has_value());
  ASSERT_EQ(s->nodeNetwork->interfaces.size(), 1u);
  EXPECT_EQ(s->nodeNetwork->interfaces[0].name, "ens3");
  ASSERT_TRUE(s->machine.has_value());
  EXPECT_GT(s->machine->cpuCores, 0u);
  ASSERT_EQ(s->pods.size(), 1u);
  const server::PodUsage& pod = s->pods[0];
  EXPECT_EQ(pod.name, "web");
  EXPECT_EQ(pod.uid, "uid-web");
  EXPECT_EQ(pod.sandboxId, sandbox);
  EXPECT_EQ(pod.cgroupPath, "/minik8s/n1/kubepods/poduid-web");
  EXPECT_EQ(pod.sandboxImage, "registry.k8s.io/pause:3.9");
  EXPECT_TRUE(pod.sandboxStartTime.has_value());
  ASSERT_EQ(pod.containers.size(), 1u);
  const server::ContainerUsage& c = pod.containers[0];
  EXPECT_EQ(c.name, "app");
  EXPECT_EQ(c.id, container);
  EXPECT_EQ(c.image, "busybox");
  EXPECT_TRUE(c.startTime.has_value());
  EXPECT_EQ(c.usage.usageCoreNanoSeconds, 3'000'000'000u);
  EXPECT_EQ(c.usage.workingSetBytes, 4096u);
  EXPECT_EQ(c.usage.usageBytes, 4096u);
  EXPECT_EQ(c.usage.rssBytes, 4096u);
  ASSERT_TRUE(pod.network.has_value());
  ASSERT_EQ(pod.network->interfaces.size(), 1u);
  EXPECT_EQ(pod.network->interfaces[0].name, "eth0");
  EXPECT_EQ(pod.network->interfaces[0].rxBytes, 1000u);
  EXPECT_EQ(pod.network->interfaces[0].txPackets, 9u);

  std::string text = server::renderCadvisorMetrics(s);
  EXPECT_NE(text.find("container_cpu_usage_seconds_total{container=\"app\",cpu=\"total\",id=\"/"
                      "minik8s/n1/kubepods/poduid-web/" +
                      container + "\",image=\"busybox\",name=\"" + container +
                      "\",namespace=\"default\",pod=\"web\"} 3 "),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("container_network_transmit_bytes_total{container=\"\",id=\"/minik8s/n1/"
                "kubepods/poduid-web/" +
                sandbox + "\",image=\"registry.k8s.io/pause:3.9\",interface=\"eth0\",name=\"" +
                sandbox + "\",namespace=\"default\",pod=\"web\"} 2000 "),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("container_network_receive_bytes_total{container=\"\",id=\"/\",image=\"\","
                      "interface=\"ens3\",name=\"\",namespace=\"\",pod=\"\"} 500 "),
            std::string::npos)
      << text;

  // One ListContainerStats per summary; the sandbox is asked about once.
  writeNetDev(4242, netDevLine("eth0", 1500, 2500));
  s = provider.summary();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->pods[0].network->interfaces[0].rxBytes, 1500u);
  EXPECT_EQ(runtime.callCount("ListContainerStats"), 2);
  EXPECT_EQ(runtime.callCount("PodSandboxStatus"), 1);
}

TEST_F(CriStatsProviderTest, AGoneProcessIsAskedAboutAgain) {
  auto [sandbox, container] = runPod("web", false);
  runtime.setSandboxPid(sandbox, 4343);  // no net/dev under procRoot for it
  CriStatsProvider provider(runtime, "n1", procRoot.string());
  auto s = provider.summary();
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->pods[0].network.has_value());
  writeNetDev(4343, netDevLine("eth0", 1, 2));
  s = provider.summary();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->pods[0].network.has_value());
  EXPECT_EQ(runtime.callCount("PodSandboxStatus"), 2);
}

TEST_F(CriStatsProviderTest, HostNetworkPodsHaveNoNetworkOfTheirOwn) {
  auto [sandbox, container] = runPod("host", true);
  runtime.setSandboxPid(sandbox, 4444);
  writeNetDev(4444, netDevLine("ens3", 500, 600));
  CriStatsProvider provider(runtime, "n1", procRoot.string());
  auto s = provider.summary();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->pods.size(), 1u);
  EXPECT_FALSE(s->pods[0].network.has_value());
  EXPECT_EQ(s->pods[0].cgroupPath, "/minik8s/n1/kubepods/poduid-host");
}

TEST_F(CriStatsProviderTest, RuntimeFailuresFailTheSummary) {
  runPod("web", false);
  CriStatsProvider provider(runtime, "n1", procRoot.string());
  runtime.injectError("ListContainerStats", Status::Unavailable("containerd restarting"));
  auto s = provider.summary();
  EXPECT_EQ(s.status().code(), 503);
  std::string text = server::renderResourceMetrics(s);
  EXPECT_NE(text.find("\nresource_scrape_error 1\n"), std::string::npos) << text;
  // A sandbox the runtime cannot describe still leaves the pod's usage.
  runtime.injectError("PodSandboxStatus", Status::NotFoundMessage("gone"));
  s = provider.summary();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->pods.size(), 1u);
  EXPECT_TRUE(s->pods[0].cgroupPath.empty());
  EXPECT_FALSE(s->pods[0].network.has_value());
}

}  // namespace
}  // namespace minik8s::kubelet
