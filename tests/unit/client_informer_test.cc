#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "client/informer.h"
#include "client/work_queue.h"
#include "common/http.h"
#include "eventually.h"
#include "fake_clock.h"
#include "in_process_api_server.h"
#include "storage/store.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;

// A real API server on an in-memory-like SQLite file, served on a free loopback port.
class ApiServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<RestClient>(apiServer.url());
  }
  void TearDown() override { apiServer.stop(); }
  json configMap(const std::string& name, const std::string& v) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"labels", {{"app", "x"}}}}},
            {"data", {{"v", v}}}};
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<RestClient> rest;
};

using testing::eventually;

TEST_F(ApiServerFixture, RestClientReportsServerStatuses) {
  ASSERT_TRUE(rest->create(resources::kConfigMaps, "default", configMap("a", "1")).ok());
  auto dup = rest->create(resources::kConfigMaps, "default", configMap("a", "1"));
  EXPECT_EQ(dup.status().reason(), "AlreadyExists");
  auto missing = rest->get(resources::kConfigMaps, "default", "nope");
  EXPECT_EQ(missing.status().code(), 404);
  auto patched = rest->patch(resources::kConfigMaps, "default", "a", {{"data", {{"v", "2"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["data"]["v"], "2");
}

TEST_F(ApiServerFixture, InformerListsWatchesAndCallsHandlers) {
  ASSERT_TRUE(rest->create(resources::kConfigMaps, "default", configMap("before", "1")).ok());
  Informer inf(*rest, resources::kConfigMaps, "default");
  std::mutex mu;
  std::vector<std::string> seen;
  inf.addHandlers({[&](const json& o) {
                     std::lock_guard l(mu);
                     seen.push_back("add " + objectKey(o));
                   },
                   [&](const json&, const json& n) {
                     std::lock_guard l(mu);
                     seen.push_back("update " + objectKey(n) + " " +
                                    n["data"]["v"].get<std::string>());
                   },
                   [&](const json& o) {
                     std::lock_guard l(mu);
                     seen.push_back("delete " + objectKey(o));
                   }});
  inf.addIndex("v", [](const json& o) {
    return std::vector<std::string>{o.value("/data/v"_json_pointer, std::string())};
  });
  inf.start();
  ASSERT_TRUE(inf.waitForSync(5s));
  ASSERT_TRUE(rest->create(resources::kConfigMaps, "default", configMap("after", "1")).ok());
  ASSERT_TRUE(
      rest->patch(resources::kConfigMaps, "default", "after", {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(rest->remove(resources::kConfigMaps, "default", "before").ok());
  ASSERT_TRUE(eventually([&] {
    std::lock_guard l(mu);
    return seen.size() >= 4;
  }));
  std::lock_guard l(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"add default/before", "add default/after",
                                            "update default/after 2", "delete default/before"}));
  EXPECT_FALSE(inf.get("default/before").has_value());
  EXPECT_EQ(inf.byIndex("v", "2").size(), 1u);
  inf.stop();
}

TEST(ObjectKeyTest, SplitsWhatObjectKeyJoins) {
  const json pod = {{"metadata", {{"namespace", "shop"}, {"name", "web-1"}}}};
  EXPECT_EQ(objectKey(pod), "shop/web-1");
  EXPECT_EQ(splitObjectKey(objectKey(pod)),
            std::make_pair(std::string("shop"), std::string("web-1")));
  EXPECT_EQ(splitObjectKey("node-1"), std::make_pair(std::string(""), std::string("node-1")));
  EXPECT_EQ(splitObjectKey("ns/a/b"), std::make_pair(std::string("ns"), std::string("a/b")));
}

TEST(WorkQueueTest, DeduplicatesAndRequeuesKeysAddedWhileProcessing) {
  WorkQueue q;
  q.add("a");
  q.add("a");
  q.add("b");
  EXPECT_EQ(q.length(), 2u);
  auto k = q.get(10ms);
  ASSERT_EQ(*k, "a");
  q.add("a");  // while processing: not handed out twice
  auto k2 = q.get(10ms);
  ASSERT_EQ(*k2, "b");
  EXPECT_FALSE(q.get(10ms).has_value());
  q.done("a");
  EXPECT_EQ(*q.get(10ms), "a");
}

using testing::FakeClock;

TEST(WorkQueueTest, RateLimitedBackoffDoublesUntilForgotten) {
  FakeClock clock;
  WorkQueue q(clock, 10ms, 1s);
  q.addRateLimited("k");  // 10 ms
  q.promoteDue();
  EXPECT_EQ(q.length(), 0u);
  clock.t += 10ms;
  q.promoteDue();
  EXPECT_EQ(q.length(), 1u);
  q.done(*q.get(1ms));
  q.addRateLimited("k");  // 20 ms
  clock.t += 19ms;
  q.promoteDue();
  EXPECT_EQ(q.length(), 0u);
  clock.t += 1ms;
  q.promoteDue();
  EXPECT_EQ(q.length(), 1u);
  EXPECT_EQ(q.requeues("k"), 2);
  q.forget("k");
  EXPECT_EQ(q.requeues("k"), 0);
}

}  // namespace
}  // namespace minik8s::client
