#include <gtest/gtest.h>

#include <algorithm>

#include "client/informer.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "kubelet/object_source.h"

namespace minik8s::kubelet {
namespace {

using namespace std::chrono_literals;

json service(const std::string& ns, const std::string& name, const std::string& ip) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"clusterIP", ip}, {"ports", {{{"port", 80}, {"protocol", "TCP"}}}}}}};
}

std::vector<std::string> names(const std::vector<json>& services) {
  std::vector<std::string> out;
  for (const auto& s : services) out.push_back(s["metadata"].value("name", ""));
  std::sort(out.begin(), out.end());
  return out;
}

class ObjectSourceServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<client::RestClient>(apiServer.url());
    ASSERT_TRUE(
        rest->create(
                client::resources::kNamespaces, "",
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "shop"}}}})
            .ok());
    ASSERT_TRUE(
        rest->create(client::resources::kServices, "shop", service("shop", "cart", "10.96.7.1"))
            .ok());
  }
  void TearDown() override { apiServer.stop(); }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<client::RestClient> rest;
};

// Without a cache every call lists from the API; with one, the namespace's Services come from
// the informer (still answered with the API server gone) and follow its watch.
TEST_F(ObjectSourceServicesTest, ServicesComeFromTheCacheOnceItHasSynced) {
  RestClientObjectSource objects(*rest);
  auto direct = objects.services("shop");
  ASSERT_TRUE(direct.ok()) << direct.status().message();
  EXPECT_EQ(names(*direct), std::vector<std::string>{"cart"});

  client::Informer services(*rest, client::resources::kServices);
  services.addIndex(client::kNamespaceIndex, client::namespaceIndex());
  services.start();
  ASSERT_TRUE(services.waitForSync(5s));
  objects.useServiceCache(&services);
  ASSERT_TRUE(
      rest->create(client::resources::kServices, "shop", service("shop", "pay", "10.96.7.2")).ok());
  EXPECT_TRUE(testing::eventually([&] {
    auto got = objects.services("shop");
    return got.ok() && names(*got) == std::vector<std::string>{"cart", "pay"};
  }));
  auto other = objects.services("default");  // only the API server's own Service there
  ASSERT_TRUE(other.ok());
  const auto defaultNames = names(*other);
  EXPECT_EQ(std::count(defaultNames.begin(), defaultNames.end(), "cart"), 0);

  services.stop();
  apiServer.stop();
  auto cached = objects.services("shop");
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(names(*cached), (std::vector<std::string>{"cart", "pay"}));
  objects.useServiceCache(nullptr);
  EXPECT_FALSE(objects.services("shop").ok());  // from the API again, which is gone
}

}  // namespace
}  // namespace minik8s::kubelet
