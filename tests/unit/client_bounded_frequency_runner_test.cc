// BoundedFrequencyRunner: a first run at once, bursts of requests coalesced into one run no sooner
// than minInterval, a request during a run gives one more, retries after a failure, periodic
// repairs, stop/start. CoalescedSync: informer events of a real in-process API server become
// syncs that see the change in the informer's cache.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/bounded_frequency_runner.h"
#include "client/rest_client.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

using testing::eventually;

// The runner spaces its runs by the time it reads just before calling the function; the recorder
// reads the clock inside the call, a few microseconds later, or milliseconds when the thread is
// preempted in between. A gap the runner kept can look that much shorter here (299.94 ms for
// 300 in one CI run), so the lower bounds below allow for it.
constexpr auto kClockSlack = 20ms;

// Records when each run started; the function's result comes from `fail`.
struct Recorder {
  std::mutex mu;
  std::vector<SteadyClock::time_point> runs;
  std::atomic<int> failuresLeft{0};
  std::chrono::milliseconds runTime{0};

  bool run() {
    {
      std::lock_guard lock(mu);
      runs.push_back(SteadyClock::now());
    }
    std::this_thread::sleep_for(runTime);
    if (failuresLeft > 0) {
      --failuresLeft;
      return false;
    }
    return true;
  }
  size_t count() {
    std::lock_guard lock(mu);
    return runs.size();
  }
  SteadyClock::duration gap(size_t i) {  // between run i-1 and run i
    std::lock_guard lock(mu);
    return runs.at(i) - runs.at(i - 1);
  }
};

TEST(BoundedFrequencyRunnerTest, CoalescesABurstIntoOneRunAfterMinInterval) {
  Recorder r;
  BoundedFrequencyRunner runner([&] { return r.run(); }, 300ms, 1h, 1h);
  runner.start();
  ASSERT_TRUE(eventually([&] { return r.count() == 1; }));  // the first run comes at once
  for (int i = 0; i < 20; ++i) runner.requestRun();
  ASSERT_TRUE(eventually([&] { return r.count() == 2; }));
  EXPECT_GE(r.gap(1), 300ms - kClockSlack);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(r.count(), 2u);  // twenty requests, one run
  runner.stop();
}

TEST(BoundedFrequencyRunnerTest, ARequestDuringARunGivesOneMoreRun) {
  Recorder r;
  r.runTime = 200ms;
  BoundedFrequencyRunner runner([&] { return r.run(); }, 10ms, 1h, 1h);
  runner.start();
  ASSERT_TRUE(eventually([&] { return r.count() == 1; }));
  runner.requestRun();  // the first run is still sleeping
  runner.requestRun();
  ASSERT_TRUE(eventually([&] { return r.count() == 2; }));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(r.count(), 2u);
  runner.stop();
}

TEST(BoundedFrequencyRunnerTest, RetriesAFailureAfterRetryInterval) {
  Recorder r;
  r.failuresLeft = 1;
  BoundedFrequencyRunner runner([&] { return r.run(); }, 10ms, 1h, 150ms);
  runner.start();
  ASSERT_TRUE(eventually([&] { return r.count() == 2; }));
  EXPECT_GE(r.gap(1), 150ms);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(r.count(), 2u);  // succeeded: no more retries
  runner.stop();
}

TEST(BoundedFrequencyRunnerTest, RunsAtLeastEveryMaxIntervalAndRestarts) {
  Recorder r;
  BoundedFrequencyRunner runner([&] { return r.run(); }, 10ms, 100ms, 1h);
  runner.start();
  ASSERT_TRUE(eventually([&] { return r.count() >= 3; }));
  EXPECT_GE(r.gap(2), 100ms - kClockSlack);
  runner.stop();
  const size_t stopped = r.count();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(r.count(), stopped);
  runner.start();  // runs at once again
  EXPECT_TRUE(eventually([&] { return r.count() > stopped; }));
  runner.stop();
}

TEST(CoalescedSyncTest, InformerEventsBecomeSyncsThatSeeTheChange) {
  testing::InProcessApiServer apiServer;
  ASSERT_TRUE(apiServer.start().ok());
  RestClient rest(apiServer.url());
  Informer configMaps(rest, resources::kConfigMaps, "default");
  Informer secrets(rest, resources::kSecrets, "default");
  std::mutex mu;
  std::vector<size_t> seen;  // objects in both caches at each sync
  CoalescedSync sync(
      {&configMaps, &secrets},
      [&] {
        std::lock_guard lock(mu);
        seen.push_back(configMaps.list().size() + secrets.list().size());
        return true;
      },
      SyncIntervals{.min = 10ms, .max = 1h, .retry = 1h});
  auto syncs = [&] {
    std::lock_guard lock(mu);
    return seen;
  };
  ASSERT_TRUE(sync.startInformers(5s));
  EXPECT_TRUE(configMaps.hasSynced() && secrets.hasSynced());
  EXPECT_TRUE(syncs().empty());  // nothing runs before startSyncing()
  sync.startSyncing();
  ASSERT_TRUE(eventually([&] { return syncs() == std::vector<size_t>{0}; }));
  json cm = {{"metadata", {{"name", "a"}}}, {"data", {{"k", "v"}}}};
  ASSERT_TRUE(rest.create(resources::kConfigMaps, "default", cm).ok());
  ASSERT_TRUE(eventually([&] { return !syncs().empty() && syncs().back() == 1; }));
  json secret = {{"metadata", {{"name", "s"}}}, {"data", {{"k", "dg=="}}}};
  ASSERT_TRUE(rest.create(resources::kSecrets, "default", secret).ok());
  ASSERT_TRUE(eventually([&] { return syncs().back() == 2; }));
  const size_t before = syncs().size();  // read first: the requested sync may run at once
  sync.requestSync();
  EXPECT_TRUE(eventually([&] { return syncs().size() > before; }));
  sync.stop();
  const size_t stopped = syncs().size();
  ASSERT_TRUE(rest.remove(resources::kConfigMaps, "default", "a").ok());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(syncs().size(), stopped);  // informers and runner are stopped
  apiServer.stop();
}

}  // namespace
}  // namespace minik8s::client
