#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <numeric>
#include <thread>

#include "apiserver/watch_cache.h"
#include "fake_store.h"

namespace minik8s::apiserver {
namespace {

using namespace std::chrono_literals;

std::string obj(const std::string& name, int v) {
  return json{{"metadata", {{"name", name}}}, {"v", v}}.dump();
}

std::vector<CachedEvent> drain(Watcher& w, size_t want) {
  std::vector<CachedEvent> out;
  for (int i = 0; i < 50 && out.size() < want; ++i) {
    EXPECT_TRUE(w.next(out, 100ms).ok());
  }
  return out;
}

TEST(WatchCacheTest, DeliversChangesUnderPrefixInOrderWithVersions) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/core/pods/default/", 0);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(store.create("/registry/core/pods/default/a", obj("a", 1)).ok());
  ASSERT_TRUE(store.create("/registry/core/pods/other/b", obj("b", 1)).ok());
  ASSERT_TRUE(store.update("/registry/core/pods/default/a", obj("a", 2), 0).ok());
  ASSERT_TRUE(store.remove("/registry/core/pods/default/a", 0).ok());
  auto events = drain(**w, 3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, CachedEvent::Type::kAdded);
  EXPECT_EQ(events[1].type, CachedEvent::Type::kModified);
  EXPECT_EQ(eventObject(events[1])["v"], 2);
  EXPECT_EQ(json::parse(*events[1].prevText)["v"], 1);
  EXPECT_EQ(eventObject(events[1])["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(events[2].type, CachedEvent::Type::kDeleted);
  EXPECT_EQ(eventObject(events[2])["v"], 2);  // the last state
  EXPECT_EQ(eventObject(events[2])["metadata"]["resourceVersion"], "4");
  cache.stop();
}

// A key's events hold each version once: an update's previous text and attributes are the ones
// of the key's event before it, and a deletion's are the last ones; the deletion's object has the
// deletion's resourceVersion. Other keys' events in between change nothing.
TEST(WatchCacheTest, AKeysEventsShareTheTextsAndAttributesOfTheEventBefore) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/x/", 0);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(store.create("/registry/x/a", obj("a", 1)).ok());
  ASSERT_TRUE(store.create("/registry/x/b", obj("b", 1)).ok());
  ASSERT_TRUE(store.update("/registry/x/a", obj("a", 2), 0).ok());
  ASSERT_TRUE(store.update("/registry/x/b", obj("b", 2), 0).ok());
  ASSERT_TRUE(store.update("/registry/x/a", obj("a", 3), 0).ok());
  ASSERT_TRUE(store.remove("/registry/x/a", 0).ok());
  auto events = drain(**w, 6);
  ASSERT_EQ(events.size(), 6u);
  const CachedEvent &a1 = events[0], &b1 = events[1], &a2 = events[2], &b2 = events[3],
                    &a3 = events[4], &gone = events[5];
  EXPECT_EQ(a2.prevText, a1.text);
  EXPECT_EQ(a2.prevAttributes, a1.attributes);
  EXPECT_EQ(b2.prevText, b1.text);
  EXPECT_EQ(b2.prevAttributes, b1.attributes);
  EXPECT_EQ(a3.prevText, a2.text);
  EXPECT_EQ(a3.prevAttributes, a2.attributes);
  EXPECT_EQ(json::parse(*a3.prevText)["v"], 2);
  ASSERT_EQ(gone.type, CachedEvent::Type::kDeleted);
  EXPECT_EQ(gone.text, a3.text);
  EXPECT_EQ(gone.prevText, a3.text);
  EXPECT_EQ(gone.attributes, a3.attributes);
  EXPECT_EQ(gone.prevAttributes, a3.attributes);
  EXPECT_EQ(eventObject(gone)["v"], 3);
  EXPECT_EQ(eventObject(gone)["metadata"]["resourceVersion"], "6");

  // The key comes back: its first event starts afresh.
  ASSERT_TRUE(store.create("/registry/x/a", obj("a", 9)).ok());
  auto again = drain(**w, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].type, CachedEvent::Type::kAdded);
  EXPECT_EQ(again[0].prevText, nullptr);
  EXPECT_EQ(again[0].prevAttributes, nullptr);
  EXPECT_EQ(eventObject(again[0])["v"], 9);
  cache.stop();
}

TEST(WatchCacheTest, TwoWatchersShareOneEncodingOfAnEvent) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w1 = cache.watch("/registry/core/pods/", 0);
  auto w2 = cache.watch("/registry/core/pods/default/", 0);
  ASSERT_TRUE(w1.ok() && w2.ok());
  ASSERT_TRUE(store.create("/registry/core/pods/default/a", obj("a", 1)).ok());
  auto e1 = drain(**w1, 1);
  auto e2 = drain(**w2, 1);
  ASSERT_EQ(e1.size(), 1u);
  ASSERT_EQ(e2.size(), 1u);
  ASSERT_TRUE(e1[0].encoded && e1[0].encoded == e2[0].encoded);
  const std::string* first = e1[0].encoded->get(*e1[0].text, e1[0].revision, "v1", "Pod");
  const std::string* second = e2[0].encoded->get(*e2[0].text, e2[0].revision, "v1", "Pod");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);  // encoded once
  json expected = eventObject(e1[0]);
  expected["apiVersion"] = "v1";
  expected["kind"] = "Pod";
  EXPECT_EQ(*first, expected.dump());
  // Asked with another label, it is not the caller's text.
  EXPECT_EQ(e1[0].encoded->get(*e1[0].text, e1[0].revision, "v2", "Pod"), nullptr);
  cache.stop();
}

// A stored text of the stored shape is sent without decoding and encoding it again: the same
// bytes, with the event's revision as resourceVersion, for a create, an update and a delete.
TEST(WatchCacheTest, EncodingFromTheStoredTextIsTheEncodingOfTheObject) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/core/pods/", 0);
  ASSERT_TRUE(w.ok());
  auto pod = [](const std::string& image) {
    return json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "a"}, {"namespace", "default"}, {"uid", "u-1"}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}}
        .dump();
  };
  auto created = store.create("/registry/core/pods/default/a", pod("x:1"));
  ASSERT_TRUE(created.ok());
  ASSERT_TRUE(store.update("/registry/core/pods/default/a", pod("x:2"), *created).ok());
  ASSERT_TRUE(store.remove("/registry/core/pods/default/a", 0).ok());
  auto events = drain(**w, 3);
  ASSERT_EQ(events.size(), 3u);
  for (const auto& ev : events) {
    const std::string* text = ev.encoded->get(*ev.text, ev.revision, "v1", "Pod");
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(*text, eventObject(ev).dump());
    EXPECT_NE(text->find("\"resourceVersion\":\"" + std::to_string(ev.revision) + "\""),
              std::string::npos);
  }
  cache.stop();
}

TEST(WatchCacheTest, ResumesFromARevisionInsideTheRing) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store.create("/registry/x/" + std::to_string(i), obj("o", i)).ok());
  }
  while (cache.latestRevision() < 5) std::this_thread::sleep_for(10ms);
  auto w = cache.watch("/registry/x/", 3);
  ASSERT_TRUE(w.ok());
  auto events = drain(**w, 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].revision, 4);
  EXPECT_EQ(events[1].revision, 5);
}

// A watcher from any revision the ring holds gets exactly the events after it, under its prefix,
// in order (the ring is searched by revision).
TEST(WatchCacheTest, ResumesFromEveryRevisionOfTheRingExactly) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  for (int i = 0; i < 12; ++i) {
    const std::string dir = i % 3 == 0 ? "/registry/y/" : "/registry/x/";
    ASSERT_TRUE(store.create(dir + std::to_string(i), obj("o", i)).ok());
  }
  while (cache.latestRevision() < 12) std::this_thread::sleep_for(10ms);
  for (int64_t from = 0; from <= 12; ++from) {
    auto w = cache.watch("/registry/x/", from);
    ASSERT_TRUE(w.ok());
    std::vector<int64_t> want;
    for (int64_t rev = from + 1; rev <= 12; ++rev) {
      if ((rev - 1) % 3 != 0) want.push_back(rev);
    }
    std::vector<CachedEvent> got;
    ASSERT_TRUE((*w)->next(got, 0ms).ok());
    std::vector<int64_t> revs;
    for (const auto& ev : got) revs.push_back(ev.revision);
    EXPECT_EQ(revs, want) << "from " << from;
  }
  cache.stop();
}

// Every watcher gets the same events with the same shared encoding, however the store batched
// them, and in one next() once they are there.
TEST(WatchCacheTest, ManyWatchersGetEveryEventWithOneEncoding) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  std::vector<std::shared_ptr<Watcher>> watchers;
  for (int i = 0; i < 20; ++i) {
    auto w = cache.watch("/registry/x/", 0);
    ASSERT_TRUE(w.ok());
    watchers.push_back(*w);
  }
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(store.create("/registry/x/" + std::to_string(i), obj("o", i)).ok());
  }
  while (cache.latestRevision() < 30) std::this_thread::sleep_for(10ms);
  std::vector<CachedEvent> first;
  for (auto& w : watchers) {
    std::vector<CachedEvent> got;
    ASSERT_TRUE(w->next(got, 0ms).ok());
    ASSERT_EQ(got.size(), 30u);
    if (first.empty()) first = got;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].revision, static_cast<int64_t>(i + 1));
      EXPECT_EQ(got[i].encoded, first[i].encoded);
      EXPECT_EQ(got[i].text, first[i].text);
      EXPECT_EQ(got[i].attributes, first[i].attributes);
    }
  }
  cache.stop();
}

// A watch's selectors read each version's labels and selectable fields from attributes made
// once, by the first watcher that asks, and shared by the events holding that version; they are
// made for the watch's kind.
TEST(WatchCacheTest, AttributesAreTheLabelsAndSelectableFieldsOfEachVersion) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/core/pods/", 0);
  ASSERT_TRUE(w.ok());
  auto pod = [](const std::string& node, const std::string& tier) {
    json p = {{"metadata", {{"name", "a"}, {"namespace", "ns"}, {"labels", {{"tier", tier}}}}},
              {"spec", {{"nodeName", node}}},
              {"status", {{"phase", "Running"}, {"podIPs", {{{"ip", "10.0.0.7"}}}}}}};
    return p.dump();
  };
  ASSERT_TRUE(store.create("/registry/core/pods/ns/a", pod("n1", "web")).ok());
  ASSERT_TRUE(store.update("/registry/core/pods/ns/a", pod("n2", "db"), 0).ok());
  auto events = drain(**w, 2);
  ASSERT_EQ(events.size(), 2u);
  auto now = events[1].attributes->get("Pod");
  auto before = events[1].prevAttributes->get("Pod");
  EXPECT_EQ(before, events[0].attributes->get("Pod"));  // made once
  EXPECT_EQ(now->labels, (json{{"tier", "db"}}));
  EXPECT_EQ(before->labels, (json{{"tier", "web"}}));
  auto select = [](const std::string& text) {
    auto s = api::FieldSelector::parse(text);
    EXPECT_TRUE(s.ok());
    return *s;
  };
  EXPECT_TRUE(select("spec.nodeName=n2,metadata.namespace=ns").matches(now->fields));
  EXPECT_FALSE(select("spec.nodeName=n2").matches(before->fields));
  EXPECT_TRUE(select("status.podIP=10.0.0.7,spec.hostNetwork=false").matches(now->fields));
  EXPECT_FALSE(select("status.phase!=Running").matches(now->fields));
  // Asked for another kind, the values are that kind's, not the shared ones.
  auto asNode = events[1].attributes->get("Node");
  EXPECT_NE(asNode, now);
  EXPECT_TRUE(select("spec.unschedulable=false,metadata.name=a").matches(asNode->fields));
  EXPECT_FALSE(select("spec.nodeName=n2").matches(asNode->fields));
  cache.stop();
}

TEST(WatchCacheTest, OlderRevisionsComeFromTheStoreUntilCompacted) {
  testing::FakeStore store;
  ASSERT_TRUE(store.create("/registry/x/a", obj("a", 1)).ok());
  ASSERT_TRUE(store.create("/registry/x/b", obj("b", 1)).ok());
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());  // ring starts at revision 2
  auto w = cache.watch("/registry/x/", 1);
  ASSERT_TRUE(w.ok());
  auto events = drain(**w, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].key, "/registry/x/b");
  ASSERT_TRUE(store.compact(2).ok());
  auto expired = cache.watch("/registry/x/", 1);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.status().code(), 410);
}

// Beyond its latest kEncodedWindow events, the ring keeps only up to maxTextBytes of texts: a
// watcher from further back is served from the store, and gets 410 once the store has compacted
// that far, where a ring bounded by count alone would still serve it.
TEST(WatchCacheTest, TheRingKeepsItsTextsWithinItsByteBound) {
  const int total = static_cast<int>(kEncodedWindow) + 200;
  for (size_t maxTextBytes : {size_t(1) << 30, size_t(1000)}) {
    testing::FakeStore store;
    WatchCache cache(store, /*capacity=*/20000, /*maxQueue=*/20000, maxTextBytes);
    ASSERT_TRUE(cache.start().ok());
    for (int i = 0; i < total; ++i) {
      ASSERT_TRUE(store.create("/registry/x/" + std::to_string(i), obj("o", i)).ok());
    }
    while (cache.latestRevision() < total) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(store.compact(total - 10).ok());
    auto fromStart = cache.watch("/registry/x/", 5);
    auto recent = cache.watch("/registry/x/", total - kEncodedWindow + 1);
    ASSERT_TRUE(recent.ok());
    EXPECT_EQ(drain(**recent, kEncodedWindow - 1).size(), kEncodedWindow - 1);
    if (maxTextBytes > 1000) {
      ASSERT_TRUE(fromStart.ok());
      EXPECT_EQ(drain(**fromStart, total - 5).size(), static_cast<size_t>(total - 5));
    } else {
      ASSERT_FALSE(fromStart.ok());
      EXPECT_EQ(fromStart.status().code(), 410);
    }
    cache.stop();
  }
}

TEST(WatchCacheTest, ASlowWatcherIsTerminatedWithoutBlockingOthers) {
  testing::FakeStore store;
  WatchCache cache(store, /*capacity=*/100, /*maxQueue=*/5);
  ASSERT_TRUE(cache.start().ok());
  auto slow = cache.watch("/registry/", 0);
  auto fast = cache.watch("/registry/", 0);
  ASSERT_TRUE(slow.ok() && fast.ok());
  std::vector<CachedEvent> got;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store.create("/registry/k" + std::to_string(i), obj("k", i)).ok());
    // the fast watcher keeps up
    for (int j = 0; j < 50 && got.size() < static_cast<size_t>(i + 1); ++j) {
      ASSERT_TRUE((*fast)->next(got, 20ms).ok());
    }
  }
  EXPECT_EQ(got.size(), 20u);
  std::vector<CachedEvent> none;
  Status s = (*slow)->next(none, 10ms);
  EXPECT_EQ(s.code(), 410);
}

// Write-through: events for a watcher whose thread waits in next() go to its sink on the cache's
// thread; what the sink declines comes out of next() instead, and every event arrives exactly once
// and in order, one way or the other.
TEST(WatchCacheTest, AWaitingWatchersSinkTakesItsEventsAndNextGetsWhatItDeclines) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/x/", 0);
  ASSERT_TRUE(w.ok());
  std::mutex mu;
  std::vector<int64_t> arrived, sunk;  // revisions, in the order they came
  std::atomic<bool> accept{true};
  (*w)->setSink([&](const std::vector<CachedEvent>& events) {
    if (!accept) return false;
    std::lock_guard lock(mu);
    for (const auto& ev : events) arrived.push_back(ev.revision), sunk.push_back(ev.revision);
    return true;
  });
  std::atomic<bool> done{false};
  std::thread thread([&] {
    while (!done) {
      std::vector<CachedEvent> got;
      ASSERT_TRUE((*w)->next(got, 50ms).ok());
      std::lock_guard lock(mu);
      for (const auto& ev : got) arrived.push_back(ev.revision);
    }
  });
  auto arrivedCount = [&] {
    std::lock_guard lock(mu);
    return arrived.size();
  };
  for (int i = 1; i <= 40; ++i) {
    if (i == 21) accept = false;
    ASSERT_TRUE(store.create("/registry/x/" + std::to_string(i), obj("o", i)).ok());
    for (int j = 0; j < 500 && arrivedCount() < static_cast<size_t>(i); ++j) {
      std::this_thread::sleep_for(2ms);
    }
  }
  done = true;
  thread.join();
  std::vector<int64_t> all(40);
  std::iota(all.begin(), all.end(), 1);
  EXPECT_EQ(arrived, all);
  // The thread waits nearly all the time: most of the first 20 went through the sink, none after.
  EXPECT_GE(sunk.size(), 5u);
  for (int64_t rev : sunk) EXPECT_LE(rev, 20);
  cache.stop();
}

// next() does not return while a sink runs on the cache's thread: the sink may use what the
// watcher's thread owns. After stop() the sink is not called again.
TEST(WatchCacheTest, NextWaitsForARunningSinkAndStopEndsIt) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  auto w = cache.watch("/registry/x/", 0);
  ASSERT_TRUE(w.ok());
  std::atomic<bool> inSink{false};
  std::atomic<int> calls{0};
  (*w)->setSink([&](const std::vector<CachedEvent>&) {
    inSink = true;
    std::this_thread::sleep_for(100ms);  // longer than next()'s wait
    inSink = false;
    ++calls;
    return true;
  });
  std::atomic<bool> done{false}, returnedDuringSink{false};
  std::atomic<int> fromNext{0};
  std::thread thread([&] {
    while (!done) {
      std::vector<CachedEvent> got;
      (*w)->next(got, 10ms);
      if (inSink) returnedDuringSink = true;
      fromNext += static_cast<int>(got.size());
    }
  });
  // An event that finds the thread between two next() calls is queued for it instead: try again.
  int created = 0;
  while (calls == 0 && created < 20) {
    ASSERT_TRUE(store.create("/registry/x/" + std::to_string(created), obj("a", 1)).ok());
    ++created;
    for (int j = 0; j < 400 && calls + fromNext < created; ++j) std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(calls, 1);
  done = true;
  thread.join();
  EXPECT_FALSE(returnedDuringSink);
  (*w)->stop();
  ASSERT_TRUE(store.create("/registry/x/after", obj("b", 1)).ok());
  while (cache.latestRevision() < created + 1) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls, 1);
  cache.stop();
}

// Many waiting watchers: their sinks run on two threads (the cache's and a helper), each
// watcher still gets every event once and in order, through its sink or its next().
TEST(WatchCacheTest, ManySinksSplitBetweenTwoThreadsKeepEachWatchersOrder) {
  testing::FakeStore store;
  WatchCache cache(store);
  ASSERT_TRUE(cache.start().ok());
  constexpr int kWatchers = 40, kEvents = 30;
  struct Seen {
    std::mutex mu;
    std::vector<int64_t> revisions;
  };
  std::vector<Seen> seen(kWatchers);
  std::vector<std::shared_ptr<Watcher>> watchers;
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWatchers; ++i) {
    auto w = cache.watch("/registry/x/", 0);
    ASSERT_TRUE(w.ok());
    watchers.push_back(*w);
    Seen& mine = seen[i];
    (*w)->setSink([&mine](const std::vector<CachedEvent>& events) {
      std::lock_guard lock(mine.mu);
      for (const auto& ev : events) mine.revisions.push_back(ev.revision);
      return true;
    });
    threads.emplace_back([&mine, w = *w, &done] {
      while (!done) {
        std::vector<CachedEvent> got;
        w->next(got, 50ms);
        std::lock_guard lock(mine.mu);
        for (const auto& ev : got) mine.revisions.push_back(ev.revision);
      }
    });
  }
  for (int i = 1; i <= kEvents; ++i) {
    ASSERT_TRUE(store.create("/registry/x/" + std::to_string(i), obj("o", i)).ok());
  }
  auto complete = [&] {
    for (auto& s : seen) {
      std::lock_guard lock(s.mu);
      if (s.revisions.size() < static_cast<size_t>(kEvents)) return false;
    }
    return true;
  };
  for (int j = 0; j < 500 && !complete(); ++j) std::this_thread::sleep_for(5ms);
  done = true;
  for (auto& t : threads) t.join();
  std::vector<int64_t> all(kEvents);
  std::iota(all.begin(), all.end(), 1);
  for (auto& s : seen) EXPECT_EQ(s.revisions, all);
  cache.stop();
}

}  // namespace
}  // namespace minik8s::apiserver
