// The Store contract (src/storage/store.h), run against every backend: SQLite on a fresh temp
// file per test, and etcd on one real etcd server started for this binary (each test works under
// its own key prefix, since etcd revisions are shared).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "storage/etcd/etcd_process.h"
#include "storage/store.h"

namespace minik8s::storage {
namespace {

using namespace std::chrono_literals;

std::string tempDir() {
  char tmpl[] = "/tmp/minik8s-storage-test-XXXXXX";
  return ::mkdtemp(tmpl) ? std::string(tmpl) : std::string();
}

class StoreConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void TearDownTestSuite() { etcd_.reset(); }

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    prefix_ = std::string("/registry/") + info->name() + "/";
    if (GetParam() == "sqlite") {
      dir_ = tempDir();
      ASSERT_FALSE(dir_.empty());
      auto store = openStore("sqlite://" + dir_ + "/state.db");
      ASSERT_TRUE(store.ok()) << store.status().toString();
      store_ = std::move(store).value();
    } else {
      if (!etcd_) {
        auto proc = etcd::EtcdProcess::start();
        ASSERT_TRUE(proc.ok()) << "the etcd backend needs a real etcd (/usr/bin/etcd): "
                               << proc.status().toString();
        etcd_ = std::move(proc).value();
      }
      auto store = openStore("etcd://" + etcd_->endpoint());
      ASSERT_TRUE(store.ok()) << store.status().toString();
      store_ = std::move(store).value();
    }
  }

  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::string key(const std::string& name) const { return prefix_ + name; }

  int64_t mustCreate(const std::string& k, const std::string& v) {
    auto r = store_->create(k, v);
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() ? *r : 0;
  }

  // Reads from `w` until `n` events arrived or `total` passed.
  static std::vector<WatchEvent> collect(WatchStream& w, size_t n,
                                         std::chrono::milliseconds total = 10s) {
    std::vector<WatchEvent> out;
    auto deadline = std::chrono::steady_clock::now() + total;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      Status s = w.next(out, 100ms);
      EXPECT_TRUE(s.ok()) << s.toString();
      if (!s.ok()) break;
    }
    return out;
  }

  static inline std::unique_ptr<etcd::EtcdProcess> etcd_;
  std::string dir_;
  std::string prefix_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformanceTest, CreateGetUpdateRemoveAndTheirErrors) {
  const std::string k = key("pod");
  int64_t r1 = mustCreate(k, "v1");
  ASSERT_GT(r1, 0);

  auto got = store_->get(k);
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ(got->key, k);
  EXPECT_EQ(got->value, "v1");
  EXPECT_EQ(got->createRevision, r1);
  EXPECT_EQ(got->modRevision, r1);

  auto again = store_->create(k, "other");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().reason(), "AlreadyExists");
  EXPECT_EQ(again.status().code(), 409);

  auto r2 = store_->update(k, "v2", r1);
  ASSERT_TRUE(r2.ok()) << r2.status().toString();
  EXPECT_GT(*r2, r1);
  got = store_->get(k);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->value, "v2");
  EXPECT_EQ(got->createRevision, r1);
  EXPECT_EQ(got->modRevision, *r2);

  auto stale = store_->update(k, "v3", r1);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().reason(), "Conflict");
  EXPECT_EQ(store_->get(k)->value, "v2");  // the refused update changed nothing

  auto r3 = store_->update(k, "v3", 0);  // unconditional
  ASSERT_TRUE(r3.ok()) << r3.status().toString();
  EXPECT_GT(*r3, *r2);

  auto missing = store_->update(key("absent"), "x", 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().reason(), "NotFound");
  EXPECT_EQ(missing.status().code(), 404);
  auto missingAt = store_->update(key("absent"), "x", *r3);
  ASSERT_FALSE(missingAt.ok());
  EXPECT_EQ(missingAt.status().reason(), "NotFound");

  auto staleRemove = store_->remove(k, *r2);
  ASSERT_FALSE(staleRemove.ok());
  EXPECT_EQ(staleRemove.status().reason(), "Conflict");
  EXPECT_TRUE(store_->get(k).ok());

  auto removed = store_->remove(k, *r3);
  ASSERT_TRUE(removed.ok()) << removed.status().toString();
  EXPECT_EQ(removed->key, k);
  EXPECT_EQ(removed->value, "v3");
  EXPECT_EQ(removed->createRevision, r1);
  EXPECT_GT(removed->modRevision, *r3);
  EXPECT_EQ(*store_->currentRevision(), removed->modRevision);

  EXPECT_EQ(store_->get(k).status().reason(), "NotFound");
  EXPECT_EQ(store_->remove(k, 0).status().reason(), "NotFound");

  // A re-created key starts a new life: new create revision.
  int64_t r5 = mustCreate(k, "again");
  EXPECT_EQ(store_->get(k)->createRevision, r5);
  auto removedAny = store_->remove(k, 0);
  ASSERT_TRUE(removedAny.ok());
  EXPECT_EQ(removedAny->value, "again");
}

TEST_P(StoreConformanceTest, RevisionsAreMonotonicAndEqualModRevision) {
  int64_t last = *store_->currentRevision();
  for (int i = 0; i < 20; ++i) {
    const std::string k = key("k" + std::to_string(i));
    int64_t rev = mustCreate(k, "v");
    EXPECT_GT(rev, last);
    EXPECT_EQ(store_->get(k)->modRevision, rev);
    auto upd = store_->update(k, "w", rev);
    ASSERT_TRUE(upd.ok());
    EXPECT_GT(*upd, rev);
    EXPECT_EQ(store_->get(k)->modRevision, *upd);
    last = *upd;
  }
  EXPECT_EQ(*store_->currentRevision(), last);
  // Failed writes do not consume revisions.
  EXPECT_FALSE(store_->create(key("k0"), "dup").ok());
  EXPECT_FALSE(store_->update(key("k0"), "x", 1).ok());
  EXPECT_EQ(*store_->currentRevision(), last);
}

TEST_P(StoreConformanceTest, ListWithPrefixLimitAndContinuation) {
  for (int i = 1; i <= 9; ++i) mustCreate(key("a/" + std::to_string(i)), "v" + std::to_string(i));
  mustCreate(key("ab/1"), "sibling prefix");  // "a/" must not match "ab/"
  mustCreate(key("b/1"), "other");

  auto all = store_->list(key("a/"));
  ASSERT_TRUE(all.ok()) << all.status().toString();
  ASSERT_EQ(all->items.size(), 9u);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(all->items[i].key, key("a/" + std::to_string(i + 1)));
    EXPECT_EQ(all->items[i].value, "v" + std::to_string(i + 1));
    EXPECT_EQ(all->items[i].createRevision, all->items[i].modRevision);
  }
  EXPECT_FALSE(all->more);
  EXPECT_EQ(all->revision, *store_->currentRevision());

  auto everything = store_->list(prefix_);
  ASSERT_TRUE(everything.ok());
  EXPECT_EQ(everything->items.size(), 11u);

  // Pages of 4, continuing after the last key seen.
  std::vector<std::string> seen;
  std::string start;
  int pages = 0;
  while (true) {
    auto page = store_->list(key("a/"), 0, 4, start);
    ASSERT_TRUE(page.ok()) << page.status().toString();
    ++pages;
    for (auto& kv : page->items) seen.push_back(kv.key);
    if (!page->more) {
      EXPECT_EQ(page->items.size(), 1u);
      break;
    }
    EXPECT_EQ(page->items.size(), 4u);
    start = page->items.back().key + '\0';
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 9u);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(seen[i], key("a/" + std::to_string(i + 1)));

  // startKey is inclusive; a limit equal to the rest says there is no more.
  auto fromFive = store_->list(key("a/"), 0, 5, key("a/5"));
  ASSERT_TRUE(fromFive.ok());
  ASSERT_EQ(fromFive->items.size(), 5u);
  EXPECT_EQ(fromFive->items.front().key, key("a/5"));
  EXPECT_FALSE(fromFive->more);

  auto none = store_->list(key("zzz/"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->items.empty());
}

TEST_P(StoreConformanceTest, ListAtAPastRevision) {
  int64_t r1 = mustCreate(key("k1"), "one");
  int64_t r2 = mustCreate(key("k2"), "two");
  int64_t r3 = *store_->update(key("k1"), "one-b", r1);
  int64_t r4 = store_->remove(key("k2"), r2)->modRevision;
  int64_t r5 = mustCreate(key("k3"), "three");
  int64_t r6 = mustCreate(key("k2"), "two-again");

  auto at2 = store_->list(prefix_, r2);
  ASSERT_TRUE(at2.ok()) << at2.status().toString();
  EXPECT_EQ(at2->revision, r2);
  ASSERT_EQ(at2->items.size(), 2u);
  EXPECT_EQ(at2->items[0].key, key("k1"));
  EXPECT_EQ(at2->items[0].value, "one");
  EXPECT_EQ(at2->items[0].modRevision, r1);
  EXPECT_EQ(at2->items[1].key, key("k2"));
  EXPECT_EQ(at2->items[1].value, "two");
  EXPECT_EQ(at2->items[1].createRevision, r2);

  auto at3 = store_->list(prefix_, r3);
  ASSERT_TRUE(at3.ok());
  ASSERT_EQ(at3->items.size(), 2u);
  EXPECT_EQ(at3->items[0].value, "one-b");
  EXPECT_EQ(at3->items[0].createRevision, r1);
  EXPECT_EQ(at3->items[0].modRevision, r3);

  auto at4 = store_->list(prefix_, r4);
  ASSERT_TRUE(at4.ok());
  ASSERT_EQ(at4->items.size(), 1u);
  EXPECT_EQ(at4->items[0].key, key("k1"));

  auto at5 = store_->list(prefix_, r5, /*limit=*/1);
  ASSERT_TRUE(at5.ok());
  ASSERT_EQ(at5->items.size(), 1u);
  EXPECT_EQ(at5->items[0].key, key("k1"));
  EXPECT_TRUE(at5->more);
  auto at5rest = store_->list(prefix_, r5, 0, key("k1") + '\0');
  ASSERT_TRUE(at5rest.ok());
  ASSERT_EQ(at5rest->items.size(), 1u);
  EXPECT_EQ(at5rest->items[0].key, key("k3"));

  auto now = store_->list(prefix_);
  ASSERT_TRUE(now.ok());
  ASSERT_EQ(now->items.size(), 3u);
  EXPECT_EQ(now->items[1].value, "two-again");
  EXPECT_EQ(now->items[1].createRevision, r6);
  EXPECT_EQ(now->revision, r6);

  auto future = store_->list(prefix_, r6 + 1000);
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.status().reason(), "BadRequest");
}

TEST_P(StoreConformanceTest, WatchFromRevisionSeesEverythingAfterItInOrder) {
  mustCreate(key("first"), "so that r0 - 1 > 0 (0 would mean \"from now\")");
  const std::string before = key("w/before");
  int64_t r0 = mustCreate(before, "old");
  auto w = store_->watch(key("w/"), r0);
  ASSERT_TRUE(w.ok()) << w.status().toString();

  const std::string k = key("w/obj");
  int64_t rc = mustCreate(k, "a");
  mustCreate(key("elsewhere"), "not watched");
  int64_t ru = *store_->update(k, "b", rc);
  int64_t rd = store_->remove(k, ru)->modRevision;
  int64_t rb = *store_->update(before, "new", r0);

  auto events = collect(**w, 4);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kPut);
  EXPECT_TRUE(events[0].isCreate());
  EXPECT_EQ(events[0].kv.key, k);
  EXPECT_EQ(events[0].kv.value, "a");
  EXPECT_EQ(events[0].kv.modRevision, rc);
  EXPECT_EQ(events[0].prevValue, "");

  EXPECT_EQ(events[1].type, WatchEvent::Type::kPut);
  EXPECT_FALSE(events[1].isCreate());
  EXPECT_EQ(events[1].kv.value, "b");
  EXPECT_EQ(events[1].kv.createRevision, rc);
  EXPECT_EQ(events[1].kv.modRevision, ru);
  EXPECT_EQ(events[1].prevValue, "a");

  EXPECT_EQ(events[2].type, WatchEvent::Type::kDelete);
  EXPECT_FALSE(events[2].isCreate());
  EXPECT_EQ(events[2].kv.key, k);
  EXPECT_EQ(events[2].kv.modRevision, rd);
  EXPECT_EQ(events[2].prevValue, "b");

  EXPECT_EQ(events[3].kv.key, before);
  EXPECT_EQ(events[3].kv.modRevision, rb);
  EXPECT_EQ(events[3].prevValue, "old");

  // Nothing else arrives (the unwatched key, or anything at or before r0).
  std::vector<WatchEvent> extra;
  EXPECT_TRUE((*w)->next(extra, 300ms).ok());
  EXPECT_TRUE(extra.empty());

  // A watch from an older revision replays the history after it.
  auto replay = store_->watch(key("w/"), r0 - 1);
  ASSERT_TRUE(replay.ok()) << replay.status().toString();
  auto all = collect(**replay, 5);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].kv.key, before);
  EXPECT_EQ(all[0].kv.modRevision, r0);
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_EQ(all[i].kv.modRevision, events[i - 1].kv.modRevision);
  }
}

// A stream that keeps up (SQLite: served from the latest commits kept in memory) and one that
// starts from further back than those (SQLite: read from the log) see the same events.
TEST_P(StoreConformanceTest, AStreamThatKeepsUpAndOneFromFarBackSeeTheSameEvents) {
  mustCreate(key("first"), "so that r0 is not 0");
  const int64_t r0 = mustCreate(key("h/start"), "x");
  auto live = store_->watch(key("h/"), r0);
  ASSERT_TRUE(live.ok()) << live.status().toString();
  std::vector<WatchEvent> seen;
  // 400 KB values: the history is larger than what SQLite keeps in memory (1 MiB).
  auto big = [](char c, int i) { return std::string(400 << 10, c) + std::to_string(i); };
  std::vector<int64_t> revs;
  for (int i = 0; i < 4; ++i) {
    revs.push_back(mustCreate(key("h/k" + std::to_string(i)), big('a', i)));
    mustCreate(key("other/k" + std::to_string(i)), "not watched");
    ASSERT_TRUE((*live)->next(seen, 0ms).ok());
  }
  for (int i = 0; i < 4; ++i) {
    auto r = store_->update(key("h/k" + std::to_string(i)), big('b', i), revs[i]);
    ASSERT_TRUE(r.ok()) << r.status().toString();
    revs[i] = *r;
    ASSERT_TRUE((*live)->next(seen, 0ms).ok());
  }
  ASSERT_TRUE(store_->remove(key("h/k1"), revs[1]).ok());
  auto rest = collect(**live, 9 - seen.size());
  seen.insert(seen.end(), rest.begin(), rest.end());
  ASSERT_EQ(seen.size(), 9u);

  auto replay = store_->watch(key("h/"), r0);
  ASSERT_TRUE(replay.ok()) << replay.status().toString();
  auto again = collect(**replay, 9);
  ASSERT_EQ(again.size(), 9u);
  for (size_t i = 0; i < seen.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(again[i].type, seen[i].type);
    EXPECT_EQ(again[i].kv.key, seen[i].kv.key);
    EXPECT_EQ(again[i].kv.value, seen[i].kv.value);
    EXPECT_EQ(again[i].kv.createRevision, seen[i].kv.createRevision);
    EXPECT_EQ(again[i].kv.modRevision, seen[i].kv.modRevision);
    EXPECT_EQ(again[i].prevValue, seen[i].prevValue);
  }
  EXPECT_EQ(seen[4].prevValue, big('a', 0));
  EXPECT_EQ(seen[8].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(seen[8].prevValue, big('b', 1));
}

TEST_P(StoreConformanceTest, WatchNextTimesOutQuietlyAndCloseUnblocksIt) {
  auto w = store_->watch(key("quiet/"), *store_->currentRevision());
  ASSERT_TRUE(w.ok()) << w.status().toString();
  std::vector<WatchEvent> out;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE((*w)->next(out, 200ms).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 150ms);

  std::atomic<bool> returned{false};
  std::thread blocked([&] {
    std::vector<WatchEvent> ignored;
    (*w)->next(ignored, 30s);
    returned = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(returned);
  t0 = std::chrono::steady_clock::now();
  (*w)->close();
  blocked.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(returned);
  // A closed stream keeps failing instead of blocking.
  EXPECT_FALSE((*w)->next(out, 10s).ok());
}

TEST_P(StoreConformanceTest, CompactionExpiresOlderReadsAndWatches) {
  int64_t r1 = mustCreate(key("c1"), "a");
  int64_t r2 = *store_->update(key("c1"), "b", r1);
  int64_t r3 = mustCreate(key("c2"), "c");
  ASSERT_TRUE(store_->compact(r2).ok());
  EXPECT_GE(store_->compactedRevision(), r2);

  auto old = store_->list(prefix_, r1);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().reason(), "Expired");
  EXPECT_EQ(old.status().code(), 410);

  auto atCompaction = store_->list(prefix_, r2);
  ASSERT_TRUE(atCompaction.ok()) << atCompaction.status().toString();
  ASSERT_EQ(atCompaction->items.size(), 1u);
  EXPECT_EQ(atCompaction->items[0].value, "b");

  // Too old: Expired either at once or from the first next().
  auto w = store_->watch(prefix_, r1);
  if (w.ok()) {
    std::vector<WatchEvent> out;
    Status s;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (s.ok() && out.empty() && std::chrono::steady_clock::now() < deadline) {
      s = (*w)->next(out, 100ms);
    }
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(s.reason(), "Expired");
  } else {
    EXPECT_EQ(w.status().reason(), "Expired");
  }

  // From the compaction point on, history is whole.
  auto fresh = store_->watch(prefix_, r2);
  ASSERT_TRUE(fresh.ok()) << fresh.status().toString();
  auto events = collect(**fresh, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kv.modRevision, r3);

  // Compacting the same revision again is harmless; the data stays.
  EXPECT_TRUE(store_->compact(r2).ok());
  EXPECT_EQ(store_->get(key("c1"))->value, "b");
  // Compacting the future is refused.
  EXPECT_FALSE(store_->compact(*store_->currentRevision() + 1000).ok());
}

TEST_P(StoreConformanceTest, ConcurrentConditionalUpdatesLoseNoUpdate) {
  const std::string k = key("counter");
  mustCreate(k, "0");
  constexpr int kThreads = 8, kIncrements = 25;
  std::atomic<int> conflicts{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements;) {
        auto cur = store_->get(k);
        if (!cur.ok()) {
          ++failures;
          return;
        }
        auto next = std::to_string(std::stoi(cur->value) + 1);
        auto r = store_->update(k, next, cur->modRevision);
        if (r.ok()) {
          ++i;
        } else if (r.status().reason() == "Conflict") {
          ++conflicts;
        } else {
          ++failures;
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(store_->get(k)->value, std::to_string(kThreads * kIncrements));
}

TEST_P(StoreConformanceTest, ConcurrentCreatesOfOneKeyHaveOneWinner) {
  const std::string k = key("contended");
  std::atomic<int> wins{0}, exists{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto r = store_->create(k, std::to_string(t));
      if (r.ok())
        ++wins;
      else if (r.status().reason() == "AlreadyExists")
        ++exists;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins, 1);
  EXPECT_EQ(exists, 7);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformanceTest, ::testing::Values("sqlite", "etcd"),
                         [](const auto& info) { return info.param; });

TEST(OpenStoreTest, RejectsUnknownUrlsNamingTheAcceptedForms) {
  for (const char* url : {"mysql://localhost/db", "sqlite://relative/path.db", ""}) {
    auto store = openStore(url);
    ASSERT_FALSE(store.ok()) << url;
    EXPECT_EQ(store.status().reason(), "BadRequest");
    EXPECT_NE(store.status().message().find("sqlite:///"), std::string::npos)
        << store.status().message();
    EXPECT_NE(store.status().message().find("etcd://"), std::string::npos);
  }
}

TEST(OpenStoreTest, OpensABarePathAsSqlite) {
  std::string dir = tempDir();
  {
    auto store = openStore(dir + "/bare.db");
    ASSERT_TRUE(store.ok()) << store.status().toString();
    EXPECT_TRUE((*store)->create("/a", "b").ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/bare.db"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::storage
