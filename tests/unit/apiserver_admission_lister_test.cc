// AdmissionLister (apiserver/admission_lister.h): answers from memory once started, a miss read
// from the registry, changes followed through the watch cache (this server's and another
// writer's), this server's writes seen at once, and ResourceQuota never losing a unit nor
// refusing on a stale copy. A watch cache on a second, idle store stands for a watch that lags.
#include <gtest/gtest.h>

#include <atomic>

#include "apiserver/admission/resource_quota_admission.h"
#include "apiserver/admission_lister.h"
#include "apiserver/watch_cache.h"
#include "eventually.h"
#include "fake_store.h"

namespace minik8s::apiserver {
namespace {

const api::ResourceInfo& core(const char* plural) {
  return *api::Scheme::builtin().byResource("", "v1", plural);
}

// Counts the reads that reach the store.
class CountingStore : public testing::FakeStore {
 public:
  Result<storage::KeyValue> get(const std::string& key) override {
    ++gets;
    return FakeStore::get(key);
  }
  Result<storage::ListResult> list(const std::string& prefix, int64_t revision, int64_t limit,
                                   const std::string& startKey) override {
    ++lists;
    return FakeStore::list(prefix, revision, limit, startKey);
  }
  std::atomic<int> gets{0}, lists{0};
};

json namespaceObject(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", labels}}}};
}

json serviceAccount(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", {{"name", name}, {"namespace", "team"}}}};
}

json limitRange(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "LimitRange"},
          {"metadata", {{"name", name}, {"namespace", "team"}}},
          {"spec", {{"limits", json::array()}}}};
}

std::string labelOf(const Result<AdmissionLister::Object>& ns) {
  if (!ns.ok()) return "<" + ns.status().toString() + ">";
  return (*ns)->value("/metadata/labels/tier"_json_pointer, std::string());
}

class AdmissionListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(registry.create(core("namespaces"), "", namespaceObject("team")).ok());
    ASSERT_TRUE(watchCache.start().ok());
  }
  // Until the watch cache has delivered everything written so far.
  void waitForWatch() {
    const int64_t revision = *store.currentRevision();
    ASSERT_TRUE(testing::eventually([&] { return watchCache.latestRevision() >= revision; }));
  }

  CountingStore store;
  Registry registry{store, api::Scheme::builtin()};
  WatchCache watchCache{store};
  std::shared_ptr<AdmissionLister> lister = std::make_shared<AdmissionLister>(registry);
};

TEST_F(AdmissionListerTest, ReadsTheRegistryUntilStarted) {
  const int gets = store.gets;
  auto ns = lister->get(core("namespaces"), "", "team");
  ASSERT_TRUE(ns.ok()) << ns.status().toString();
  EXPECT_EQ((*ns)->value("/metadata/name"_json_pointer, std::string()), "team");
  EXPECT_EQ(store.gets, gets + 1);
  EXPECT_EQ(lister->get(core("namespaces"), "", "gone").status().code(), 404);
}

TEST_F(AdmissionListerTest, HitsComeFromMemoryAndAMissFromTheRegistry) {
  lister->start(watchCache);
  const int gets = store.gets, lists = store.lists;
  for (int i = 0; i < 3; ++i) {
    auto ns = lister->get(core("namespaces"), "", "team");
    ASSERT_TRUE(ns.ok()) << ns.status().toString();
    auto ranges = lister->list(core("limitranges"), "team");
    ASSERT_TRUE(ranges.ok());
    EXPECT_TRUE(ranges->empty());
  }
  EXPECT_EQ(store.gets, gets);
  EXPECT_EQ(store.lists, lists);
  // Not in memory: read from the registry, found or not.
  EXPECT_EQ(lister->get(core("namespaces"), "", "absent").status().code(), 404);
  EXPECT_EQ(store.gets, gets + 1);
}

TEST_F(AdmissionListerTest, FollowsAnotherWritersChangesThroughTheWatch) {
  lister->start(watchCache);
  // Another API server on the same store: its writes never call resourceWritten here.
  Registry other(store, api::Scheme::builtin());
  auto ns = other.get(core("namespaces"), "", "team");
  ASSERT_TRUE(ns.ok());
  (*ns)["metadata"]["labels"]["tier"] = "gold";
  auto updated = other.update(core("namespaces"), "", "team", *ns);
  ASSERT_TRUE(updated.ok()) << updated.status().toString();
  ASSERT_TRUE(other.create(core("limitranges"), "team", limitRange("limits")).ok());
  ASSERT_TRUE(other.create(core("serviceaccounts"), "team", serviceAccount("robot")).ok());
  waitForWatch();
  const int gets = store.gets, lists = store.lists;
  EXPECT_EQ(labelOf(lister->get(core("namespaces"), "", "team")), "gold");
  auto ranges = lister->list(core("limitranges"), "team");
  ASSERT_TRUE(ranges.ok());
  ASSERT_EQ(ranges->size(), 1u);
  EXPECT_EQ((*ranges)[0]->value("/metadata/name"_json_pointer, std::string()), "limits");
  EXPECT_TRUE(lister->get(core("serviceaccounts"), "team", "robot").ok());
  EXPECT_EQ(store.gets, gets);
  EXPECT_EQ(store.lists, lists);

  // Deletes too: gone from memory (and then not found in the registry either).
  ASSERT_TRUE(other.remove(core("serviceaccounts"), "team", "robot", {}).ok());
  ASSERT_TRUE(other.remove(core("limitranges"), "team", "limits", {}).ok());
  waitForWatch();
  const int getsBefore = store.gets, listsBefore = store.lists;
  EXPECT_EQ(lister->get(core("serviceaccounts"), "team", "robot").status().code(), 404);
  EXPECT_EQ(store.gets, getsBefore + 1);
  ranges = lister->list(core("limitranges"), "team");
  ASSERT_TRUE(ranges.ok());
  EXPECT_TRUE(ranges->empty());
  EXPECT_EQ(store.lists, listsBefore);
}

// The lister follows a watch cache of another, idle store: nothing written after start() ever
// arrives through the watch, as when the watch lags.
class LaggingWatchTest : public AdmissionListerTest {
 protected:
  void SetUp() override {
    AdmissionListerTest::SetUp();
    startLagging();
  }
  void startLagging() {
    ASSERT_TRUE(idleWatchCache.start().ok());
    lister->start(idleWatchCache);
  }
  testing::FakeStore idleStore;
  WatchCache idleWatchCache{idleStore};
};

TEST_F(LaggingWatchTest, AMissIsReadFromTheRegistry) {
  // A namespace created a moment ago (through this server or another) is found.
  ASSERT_TRUE(registry.create(core("namespaces"), "", namespaceObject("new")).ok());
  const int gets = store.gets;
  auto ns = lister->get(core("namespaces"), "", "new");
  ASSERT_TRUE(ns.ok()) << ns.status().toString();
  EXPECT_EQ(store.gets, gets + 1);
}

TEST_F(LaggingWatchTest, ThisServersWritesAreSeenAtOnce) {
  auto ns = registry.get(core("namespaces"), "", "team");
  ASSERT_TRUE(ns.ok());
  (*ns)["metadata"]["labels"]["tier"] = "gold";
  ASSERT_TRUE(registry.update(core("namespaces"), "", "team", *ns).ok());
  ASSERT_TRUE(registry.create(core("limitranges"), "team", limitRange("limits")).ok());
  // Another writer's change waits for the watch (documented staleness) ...
  EXPECT_EQ(labelOf(lister->get(core("namespaces"), "", "team")), "");
  EXPECT_TRUE(lister->list(core("limitranges"), "team")->empty());
  // ... this server's is read from the registry until the watch has delivered it.
  lister->resourceWritten(core("namespaces"));
  lister->resourceWritten(core("limitranges"));
  EXPECT_EQ(labelOf(lister->get(core("namespaces"), "", "team")), "gold");
  EXPECT_EQ(lister->list(core("limitranges"), "team")->size(), 1u);
  EXPECT_EQ(labelOf(lister->get(core("namespaces"), "", "team")), "gold");
}

class QuotaOnStaleListerTest : public LaggingWatchTest {
 protected:
  // The quota is in memory (listed at start) with used=0; what is written after that is not.
  void SetUp() override {
    AdmissionListerTest::SetUp();
    json quota = {{"apiVersion", "v1"},
                  {"kind", "ResourceQuota"},
                  {"metadata", {{"name", "pods"}, {"namespace", "team"}}},
                  {"spec", {{"hard", {{"pods", "1"}}}}}};
    auto created = registry.create(core("resourcequotas"), "team", quota);
    ASSERT_TRUE(created.ok());
    setUsed(*created, "0");
    startLagging();
  }
  // What another server (or the quota controller) writes: status.used of quota "pods".
  void setUsed(json quota, const std::string& used) {
    quota["status"] = {{"hard", {{"pods", "1"}}}, {"used", {{"pods", used}}}};
    ASSERT_TRUE(registry.update(core("resourcequotas"), "team", "pods", quota, "status").ok());
  }
  json storedQuota() { return *registry.get(core("resourcequotas"), "team", "pods"); }
  Status admitPod(const std::string& name) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "team"}}},
                {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = "create";
    ri.version = "v1";
    ri.namespaceName = "team";
    ri.resource = "pods";
    ri.info = &core("pods");
    auth::UserInfo user{"alice", "", {}, {}};
    auth::AdmissionRequest req{user, ri, "CREATE", nullptr, &pod, false};
    return quota.admit(req);
  }
  admission::ResourceQuotaAdmission quota{registry, [] { return std::chrono::system_clock::now(); },
                                          lister};
};

TEST_F(QuotaOnStaleListerTest, AStaleQuotaNeverLosesAUnit) {
  // Another server took the last unit; the lister still holds used=0.
  setUsed(storedQuota(), "1");
  Status s = admitPod("late");
  EXPECT_EQ(s.code(), 403) << s.toString();
  EXPECT_NE(s.message().find("exceeded quota: pods"), std::string::npos) << s.message();
  EXPECT_EQ(storedQuota()["status"]["used"]["pods"], "1");
}

TEST_F(QuotaOnStaleListerTest, AStaleQuotaNeverRefuses) {
  ASSERT_TRUE(admitPod("first").ok());
  EXPECT_EQ(storedQuota()["status"]["used"]["pods"], "1");
  // The plugin's own charge is in memory (and in the registry): the next pod is refused ...
  EXPECT_EQ(admitPod("second").code(), 403);
  // ... but once the controller gives the unit back, the registry decides, not the stale copy.
  setUsed(storedQuota(), "0");
  EXPECT_TRUE(admitPod("third").ok());
  EXPECT_EQ(storedQuota()["status"]["used"]["pods"], "1");
}

}  // namespace
}  // namespace minik8s::apiserver
