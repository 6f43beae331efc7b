// BoundedFrequencyRunner: runs a function on its own thread when asked, coalescing requests, like
// Kubernetes' async.BoundedFrequencyRunner: never more often than `minInterval`, at least every
// `maxInterval` (a periodic repair), and again after `retryInterval` when the function reports
// failure. A request made while the function runs causes one more run afterwards.
//
// CoalescedSync wires it to informers, the way the node's service proxy, cluster DNS and Dns
// gateway converge: every informer event requests one run of a level-triggered sync function.
//
// requestRun()/requestSync() are thread-safe and cheap (fit for informer handlers);
// start()/stop() are called by the owner.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "client/informer.h"

namespace minik8s::client {

class BoundedFrequencyRunner {
 public:
  using Clock = std::chrono::steady_clock;

  // `fn` returns false on failure (then it is retried after retryInterval).
  BoundedFrequencyRunner(std::function<bool()> fn, std::chrono::milliseconds minInterval,
                         std::chrono::milliseconds maxInterval,
                         std::chrono::milliseconds retryInterval);
  ~BoundedFrequencyRunner() { stop(); }
  BoundedFrequencyRunner(const BoundedFrequencyRunner&) = delete;
  BoundedFrequencyRunner& operator=(const BoundedFrequencyRunner&) = delete;

  // Starts the thread; the first run happens at once.
  void start();
  // Waits for a run in progress, then ends the thread. start() may follow.
  void stop();
  void requestRun();

 private:
  void loop();

  std::function<bool()> fn_;
  const std::chrono::milliseconds minInterval_, maxInterval_, retryInterval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

struct SyncIntervals {
  std::chrono::milliseconds min{100};     // at most one sync this often
  std::chrono::milliseconds max{30000};   // at least one sync this often (repair)
  std::chrono::milliseconds retry{1000};  // after a failed sync
};

class CoalescedSync {
 public:
  // Adds handlers to `informers` (not started yet; the owner keeps them and reads their caches in
  // `sync`, which returns false on failure).
  CoalescedSync(std::vector<Informer*> informers, std::function<bool()> sync,
                SyncIntervals intervals);
  ~CoalescedSync() { stop(); }
  CoalescedSync(const CoalescedSync&) = delete;
  CoalescedSync& operator=(const CoalescedSync&) = delete;

  // Starts the informers and waits until each has listed, `timeout` for all of them. False when
  // one has not (it goes on in the background; the syncs follow once it has).
  bool startInformers(std::chrono::milliseconds timeout);
  // The first sync at once, then one per burst of events, repairs and retries.
  void startSyncing() { runner_.start(); }
  void requestSync() { runner_.requestRun(); }
  // Stops syncing (after a sync in progress), then the informers.
  void stop();

 private:
  std::vector<Informer*> informers_;
  BoundedFrequencyRunner runner_;
};

}  // namespace minik8s::client
