#include <gtest/gtest.h>

#include <thread>

#include "controllers/serviceaccount/root_ca_publisher.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "in_process_api_server.h"

namespace minik8s::controllers {
namespace {

using namespace std::chrono_literals;
namespace res = client::resources;

constexpr const char* kCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

TEST(NamespaceTerminating, DeletionTimestampOrPhase) {
  EXPECT_FALSE(namespaceTerminating({{"metadata", {{"name", "a"}}}}));
  EXPECT_TRUE(namespaceTerminating(
      {{"metadata", {{"name", "a"}, {"deletionTimestamp", "2024-01-01T00:00:00Z"}}}}));
  EXPECT_TRUE(namespaceTerminating(
      {{"metadata", {{"name", "a"}}}, {"status", {{"phase", "Terminating"}}}}));
}

class ServiceAccountControllersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api.start().ok());
    rest = std::make_unique<client::RestClient>(api.url());
    namespaces = std::make_unique<client::Informer>(*rest, res::kNamespaces);
    accounts = std::make_unique<client::Informer>(*rest, res::kServiceAccounts);
    configMaps = std::make_unique<client::Informer>(*rest, res::kConfigMaps);
    saController = std::make_unique<ServiceAccountsController>(*rest, *namespaces, *accounts);
    publisher = std::make_unique<RootCaPublisher>(*rest, *namespaces, *configMaps, kCa);
    for (auto* inf : {namespaces.get(), accounts.get(), configMaps.get()}) inf->start();
    for (auto* inf : {namespaces.get(), accounts.get(), configMaps.get()}) {
      ASSERT_TRUE(inf->waitForSync(5s));
    }
    saController->start();
    publisher->start();
  }
  void TearDown() override {
    saController->stop();
    publisher->stop();
    for (auto* inf : {namespaces.get(), accounts.get(), configMaps.get()}) inf->stop();
    api.stop();
  }
  bool eventually(const std::function<bool()>& check) {
    for (int i = 0; i < 80; ++i) {
      if (check()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return check();
  }
  void createNamespace(const std::string& name) {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    ASSERT_TRUE(rest->create(res::kNamespaces, "", ns).ok());
  }
  bool hasAccount(const std::string& ns, const std::string& name = "default") {
    return rest->get(res::kServiceAccounts, ns, name).ok();
  }
  json rootCa(const std::string& ns) {
    auto cm = rest->get(res::kConfigMaps, ns, "kube-root-ca.crt");
    return cm.ok() ? *cm : json();
  }

  testing::InProcessApiServer api;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::Informer> namespaces, accounts, configMaps;
  std::unique_ptr<ServiceAccountsController> saController;
  std::unique_ptr<RootCaPublisher> publisher;
};

TEST_F(ServiceAccountControllersTest, EveryNamespaceGetsDefaultAccountBackAfterDeletion) {
  // The namespaces the server creates at start.
  EXPECT_TRUE(eventually([&] { return hasAccount("default") && hasAccount("kube-system"); }));
  createNamespace("team");
  EXPECT_TRUE(eventually([&] { return hasAccount("team"); }));
  auto first = rest->get(res::kServiceAccounts, "team", "default");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(rest->remove(res::kServiceAccounts, "team", "default").ok());
  EXPECT_TRUE(eventually([&] {
    auto again = rest->get(res::kServiceAccounts, "team", "default");
    return again.ok() && (*again)["metadata"]["uid"] != (*first)["metadata"]["uid"];
  }));
  // Other accounts are not the controller's business.
  json other = {{"metadata", {{"name", "robot"}}}};
  ASSERT_TRUE(rest->create(res::kServiceAccounts, "team", other).ok());
  ASSERT_TRUE(rest->remove(res::kServiceAccounts, "team", "robot").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(hasAccount("team", "robot"));
}

TEST_F(ServiceAccountControllersTest, RootCaIsPublishedRecreatedAndRepaired) {
  createNamespace("team");
  EXPECT_TRUE(eventually([&] { return !rootCa("team").is_null(); }));
  json cm = rootCa("team");
  EXPECT_EQ(cm["data"], json({{"ca.crt", kCa}}));
  EXPECT_TRUE(cm["metadata"]["annotations"].contains("kubernetes.io/description"));
  EXPECT_FALSE(rootCa("default").is_null());

  // Edited: repaired.
  cm["data"]["ca.crt"] = "forged";
  cm["data"]["extra"] = "x";
  ASSERT_TRUE(rest->update(res::kConfigMaps, cm).ok());
  EXPECT_TRUE(eventually([&] { return rootCa("team")["data"] == json({{"ca.crt", kCa}}); }));

  // Deleted: recreated.
  ASSERT_TRUE(rest->remove(res::kConfigMaps, "team", "kube-root-ca.crt").ok());
  EXPECT_TRUE(eventually([&] { return rootCa("team")["data"] == json({{"ca.crt", kCa}}); }));
}

TEST_F(ServiceAccountControllersTest, SyncIgnoresMissingNamespaces) {
  EXPECT_TRUE(saController->sync("nowhere").ok());
  EXPECT_TRUE(publisher->sync("nowhere").ok());
  EXPECT_FALSE(hasAccount("nowhere"));
}

}  // namespace
}  // namespace minik8s::controllers
