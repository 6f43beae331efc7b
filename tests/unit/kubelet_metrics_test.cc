// The kubelet's metrics as a scrape of the agent's /metrics reads them.
#include <gtest/gtest.h>

#include "client/rest_client.h"
#include "common/metrics.h"
#include "kubelet/cri/fake_runtime.h"
#include "kubelet/kubelet.h"

namespace minik8s::kubelet {
namespace {

namespace v1 = ::runtime::v1;

v1::PodSandboxConfig sandboxConfig(const std::string& name) {
  v1::PodSandboxConfig config;
  config.mutable_metadata()->set_name(name);
  config.mutable_metadata()->set_namespace_("default");
  config.mutable_metadata()->set_uid("uid-" + name);
  return config;
}

v1::ContainerConfig containerConfig(const std::string& name) {
  v1::ContainerConfig config;
  config.mutable_metadata()->set_name(name);
  config.mutable_image()->set_image("busybox");
  return config;
}

TEST(KubeletMetrics, RunningPodsAndContainersComeFromTheRuntimeAtScrapeTime) {
  cri::FakeRuntime runtime;
  runtime.addImage("busybox");
  client::RestClient api("http://127.0.0.1:1");  // never started: no API traffic
  KubeletOptions options;
  options.nodeName = "n1";
  options.dataDir = ::testing::TempDir();
  auto kubelet = std::make_unique<Kubelet>(api, runtime, runtime, options);

  auto web = sandboxConfig("web");
  auto sandbox = runtime.runPodSandbox(web);
  ASSERT_TRUE(sandbox.ok());
  auto running = runtime.createContainer(*sandbox, containerConfig("app"), web);
  ASSERT_TRUE(running.ok()) << running.status().toString();
  ASSERT_TRUE(runtime.startContainer(*running).ok());
  ASSERT_TRUE(runtime.createContainer(*sandbox, containerConfig("sidecar"), web).ok());
  auto gone = runtime.runPodSandbox(sandboxConfig("gone"));
  ASSERT_TRUE(gone.ok());
  ASSERT_TRUE(runtime.stopPodSandbox(*gone).ok());

  std::string text = metrics::defaultRegistry().exposition();
  for (const char* line : {
           "\n# TYPE kubelet_running_pods gauge\nkubelet_running_pods 1\n",
           "\nkubelet_running_containers{container_state=\"created\"} 1\n",
           "\nkubelet_running_containers{container_state=\"exited\"} 0\n",
           "\nkubelet_running_containers{container_state=\"running\"} 1\n",
           "\n# TYPE workqueue_adds_total counter\n",
           "\nworkqueue_depth{name=\"kubelet_pod_workers\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }

  kubelet.reset();  // its callbacks go with it
  text = metrics::defaultRegistry().exposition();
  EXPECT_EQ(text.find("\nkubelet_running_pods "), std::string::npos);
  EXPECT_EQ(text.find("\nkubelet_running_containers{"), std::string::npos);
}

}  // namespace
}  // namespace minik8s::kubelet
