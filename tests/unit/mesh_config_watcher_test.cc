// The registry streamed to a sidecar from a real API server (in process): objects written
// through the API show up in the proxy's MeshConfig within a second, rules included.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "client/rest_client.h"
#include "common/yaml_json.h"
#include "in_process_api_server.h"
#include "mesh/config_watcher.h"
#include "mesh/mesh_resources.h"

namespace minik8s::mesh {
namespace {

namespace res = client::resources;
using namespace std::chrono_literals;

class MeshConfigWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.start().ok());
    rest_ = std::make_unique<client::RestClient>(server_.url());
    ASSERT_TRUE(ensureMeshResources(*rest_).ok());
    watcher_ = std::make_unique<ConfigWatcher>(*rest_, [this](auto config) {
      std::lock_guard lock(mu_);
      config_ = std::move(config);
      cv_.notify_all();
    });
    watcher_->start();
    ASSERT_TRUE(watcher_->waitForSync(10s));
  }
  void TearDown() override {
    watcher_->stop();
    server_.stop();
  }

  // Waits until `pred` holds for the latest config; false after `timeout`.
  bool waitFor(std::function<bool(const MeshConfig&)> pred, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return config_ && pred(*config_); });
  }

  void create(const client::Resource& r, const std::string& yaml) {
    auto obj = parseYaml(yaml);
    ASSERT_TRUE(obj.ok());
    auto created = rest_->create(r, "default", *obj);
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  testing::InProcessApiServer server_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<ConfigWatcher> watcher_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const MeshConfig> config_;
};

TEST_F(MeshConfigWatcherTest, ServicesEndpointsAndRulesReachTheProxyWithinASecond) {
  create(res::kPods, R"(
metadata: {name: web-v2, namespace: default, labels: {version: v2}}
spec: {containers: [{name: web, image: minik8s/python}]}
)");
  create(res::kServices, R"(
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 80, targetPort: 8080}], selector: {app: web}}
)");
  auto svc = rest_->get(res::kServices, "default", "web");
  ASSERT_TRUE(svc.ok());
  std::string vip = (*svc)["spec"].value("clusterIP", "");
  ASSERT_FALSE(vip.empty());
  auto start = std::chrono::steady_clock::now();
  create(res::kEndpoints, R"(
metadata: {name: web, namespace: default}
subsets:
- addresses: [{ip: 10.1.0.7, targetRef: {kind: Pod, name: web-v2, namespace: default}}]
  ports: [{name: http, port: 8080}]
)");
  EXPECT_TRUE(waitFor(
      [&](const MeshConfig& c) {
        const MeshService* s = c.serviceAt(vip, 80);
        return s && s->port(80) && s->port(80)->endpoints.size() == 1;
      },
      1s));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 1s);

  create(kDestinationRules, R"(
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec: {host: web, subsets: [{name: v2, labels: {version: v2}}]}
)");
  create(kVirtualServices, R"(
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  hosts: [web]
  http: [{route: [{destination: {host: web, subset: v2}}]}]
)");
  EXPECT_TRUE(waitFor(
      [](const MeshConfig& c) {
        const MeshService* s = c.service("default/web");
        return s && s->routes.size() == 1 && s->subsets.count("v2") == 1 &&
               subsetEndpoints(*s, *s->port(80), "v2").size() == 1;
      },
      1s));
}

}  // namespace
}  // namespace minik8s::mesh
