// SharedInformers: several handles on one list + watch, each with its own handlers.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "client/shared_informers.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

json configMap(const std::string& name, const std::string& v) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", {{"v", v}}}};
}

// What one consumer's handlers saw, in order.
class Recorder {
 public:
  EventHandlers handlers() {
    return {[this](const json& o) { push("add " + objectKey(o)); },
            [this](const json&, const json& n) {
              push("update " + objectKey(n) + " " + n["data"]["v"].get<std::string>());
            },
            [this](const json& o) { push("delete " + objectKey(o)); }};
  }
  std::vector<std::string> seen() const {
    std::lock_guard l(mu_);
    return seen_;
  }
  size_t size() const { return seen().size(); }

 private:
  void push(std::string s) {
    std::lock_guard l(mu_);
    seen_.push_back(std::move(s));
  }
  mutable std::mutex mu_;
  std::vector<std::string> seen_;
};

class SharedInformersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(apiServer.start().ok());
    rest = std::make_unique<RestClient>(apiServer.url());
    informers = std::make_unique<SharedInformers>(*rest);
  }
  void TearDown() override {
    informers.reset();
    apiServer.stop();
  }
  Status create(const std::string& name, const std::string& v = "1") {
    return rest->create(resources::kConfigMaps, "default", configMap(name, v)).status();
  }

  testing::InProcessApiServer apiServer;
  std::unique_ptr<RestClient> rest;
  std::unique_ptr<SharedInformers> informers;
};

TEST_F(SharedInformersTest, TwoConsumersGetEveryEventFromOneCache) {
  auto first = informers->informer(resources::kConfigMaps, "default");
  auto second = informers->informer(resources::kConfigMaps, "default");
  EXPECT_EQ(informers->size(), 1u);  // one list + watch for both
  Recorder a, b;
  first->addHandlers(a.handlers());
  second->addHandlers(b.handlers());
  first->start();
  second->start();
  ASSERT_TRUE(first->waitForSync(5s));
  ASSERT_TRUE(create("x").ok());
  ASSERT_TRUE(rest->patch(resources::kConfigMaps, "default", "x", {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(rest->remove(resources::kConfigMaps, "default", "x").ok());
  const std::vector<std::string> want = {"add default/x", "update default/x 2", "delete default/x"};
  ASSERT_TRUE(eventually([&] { return a.size() >= 3 && b.size() >= 3; }));
  EXPECT_EQ(a.seen(), want);
  EXPECT_EQ(b.seen(), want);

  // Both read the same cached object, not copies of it.
  ASSERT_TRUE(create("y").ok());
  ASSERT_TRUE(eventually([&] { return second->getShared("default/y") != nullptr; }));
  EXPECT_EQ(first->getShared("default/y").get(), second->getShared("default/y").get());
  EXPECT_EQ((*first->get("default/y"))["data"]["v"], "1");
}

TEST_F(SharedInformersTest, StoppedConsumersHandlersNeverRunAgain) {
  auto stopping = informers->informer(resources::kConfigMaps, "default");
  auto staying = informers->informer(resources::kConfigMaps, "default");
  // The stopped consumer's state is freed once stop() returns: a handler still running then, or
  // run later, would touch it.
  auto state = std::make_unique<std::atomic<int>>(0);
  std::atomic<bool> freed{false};
  std::atomic<bool> ranAfterFree{false};
  stopping->addHandlers({[&, counter = state.get()](const json&) {
                           if (freed) ranAfterFree = true;
                           std::this_thread::sleep_for(1ms);  // widen the window
                           ++*counter;
                         },
                         nullptr, nullptr});
  Recorder b;
  staying->addHandlers(b.handlers());
  stopping->start();
  staying->start();
  ASSERT_TRUE(staying->waitForSync(5s));
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(create("w" + std::to_string(i)).ok());
  });
  ASSERT_TRUE(eventually([&] { return *state > 0; }));
  stopping->stop();
  freed = true;
  state.reset();
  writer.join();
  ASSERT_TRUE(eventually([&] { return b.size() >= 40; }));
  EXPECT_FALSE(ranAfterFree);
  // The shared cache lives on for the other consumer, and the stopped handle still reads it.
  EXPECT_EQ(staying->list().size(), 40u);
  EXPECT_EQ(stopping->list().size(), 40u);
}

TEST_F(SharedInformersTest, LateConsumerSeesTheCachedObjectsFirst) {
  ASSERT_TRUE(create("a").ok());
  ASSERT_TRUE(create("b").ok());
  auto early = informers->informer(resources::kConfigMaps, "default");
  early->start();
  ASSERT_TRUE(early->waitForSync(5s));

  auto late = informers->informer(resources::kConfigMaps, "default");
  Recorder r;
  late->addHandlers(r.handlers());
  late->start();  // the cached objects are replayed on this thread, before it returns
  EXPECT_EQ(r.seen(), (std::vector<std::string>{"add default/a", "add default/b"}));
  ASSERT_TRUE(create("c").ok());
  ASSERT_TRUE(eventually([&] { return r.size() >= 3; }));
  EXPECT_EQ(r.seen().back(), "add default/c");

  // Handlers added to a started handle get the replay too.
  Recorder more;
  late->addHandlers(more.handlers());
  EXPECT_EQ(more.size(), 3u);
}

TEST_F(SharedInformersTest, IndexesFollowChangesAndAreSharedByName) {
  auto first = informers->informer(resources::kConfigMaps, "default");
  auto second = informers->informer(resources::kConfigMaps, "default");
  auto byValue = [](const json& o) {
    return std::vector<std::string>{o.value("/data/v"_json_pointer, std::string())};
  };
  first->addIndex("v", byValue);
  second->addIndex("v", [](const json&) { return std::vector<std::string>{"other"}; });  // kept
  first->start();
  ASSERT_TRUE(first->waitForSync(5s));
  ASSERT_TRUE(create("x", "1").ok());
  ASSERT_TRUE(create("y", "1").ok());
  ASSERT_TRUE(eventually([&] { return second->byIndex("v", "1").size() == 2; }));
  ASSERT_TRUE(rest->patch(resources::kConfigMaps, "default", "x", {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(eventually([&] { return second->byIndex("v", "2").size() == 1; }));
  EXPECT_EQ(second->byIndex("v", "1").size(), 1u);
  EXPECT_TRUE(second->byIndex("v", "other").empty());
  // An index added once objects are cached covers them.
  second->addIndex("name", [](const json& o) {
    return std::vector<std::string>{o.value("/metadata/name"_json_pointer, std::string())};
  });
  EXPECT_EQ(first->byIndexShared("name", "y").size(), 1u);
}

TEST_F(SharedInformersTest, TheWatchEndsWithItsLastHandle) {
  auto handle = informers->informer(resources::kConfigMaps, "default");
  auto other = informers->informer(resources::kConfigMaps, "kube-system");  // its own watch
  EXPECT_EQ(informers->size(), 2u);
  handle->start();
  ASSERT_TRUE(handle->waitForSync(5s));
  handle.reset();
  EXPECT_EQ(informers->size(), 1u);
  // A new handle lists again from scratch and sees what changed meanwhile.
  ASSERT_TRUE(create("later").ok());
  auto again = informers->informer(resources::kConfigMaps, "default");
  again->start();
  ASSERT_TRUE(again->waitForSync(5s));
  EXPECT_TRUE(again->get("default/later").has_value());
}

// informerOf: a handle on the factory's informer where there is a factory (the agent's service
// proxy, DNS, gateway and kubelet share one), an informer of its own where there is none.
TEST_F(SharedInformersTest, InformerOfSharesWhereItIsGivenAFactory) {
  ASSERT_TRUE(create("x").ok());
  auto a = SharedInformers::informerOf(informers.get(), *rest, resources::kConfigMaps);
  auto b = SharedInformers::informerOf(informers.get(), *rest, resources::kConfigMaps);
  EXPECT_EQ(informers->size(), 1u);
  a->start();
  ASSERT_TRUE(a->waitForSync(5s));
  EXPECT_TRUE(b->hasSynced());  // b's cache is a's: synced without b starting anything
  auto own = SharedInformers::informerOf(nullptr, *rest, resources::kConfigMaps);
  EXPECT_EQ(informers->size(), 1u);
  EXPECT_FALSE(own->hasSynced());
  own->start();
  ASSERT_TRUE(own->waitForSync(5s));
  EXPECT_TRUE(own->get("default/x").has_value());
  own->stop();
}

TEST_F(SharedInformersTest, HandlesOfAStoppedFactoryNeverStartAWatch) {
  informers->stop();
  auto handle = informers->informer(resources::kConfigMaps, "default");
  handle->start();
  EXPECT_FALSE(handle->waitForSync(200ms));
}

}  // namespace
}  // namespace minik8s::client
