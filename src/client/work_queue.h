// WorkQueue: the controller work queue of client-go, in C++.
//
// Keys (such as "namespace/name") are queued at most once while waiting; a key being processed
// is not handed to a second worker, and if it is added again meanwhile it is queued once more
// when done() is called. addAfter() delays a key; addRateLimited() delays it with per-key
// exponential back-off (5 ms doubling up to 1000 s by default) until forget() resets it.
// Time comes from a Clock so tests run instantly. Thread-safe.
//
// enableMetrics() records client-go's workqueue_* metrics (adds, depth, queue and work duration,
// retries) under the queue's name; controllers' WorkerPool names its queue after the controller.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/metrics.h"

namespace minik8s::client {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() const = 0;
};

class RealClock : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::now();
  }
  static const RealClock& instance();
};

class WorkQueue {
 public:
  explicit WorkQueue(const Clock& clock = RealClock::instance(),
                     std::chrono::milliseconds baseDelay = std::chrono::milliseconds(5),
                     std::chrono::milliseconds maxDelay = std::chrono::seconds(1000));

  void add(const std::string& key);
  void addAfter(const std::string& key, std::chrono::milliseconds delay);
  void addRateLimited(const std::string& key);
  void forget(const std::string& key);
  int requeues(const std::string& key);

  // Blocks until a key is ready or the queue shuts down (nullopt). `maxWait` bounds the wait.
  std::optional<std::string> get(std::chrono::milliseconds maxWait = std::chrono::hours(1));
  void done(const std::string& key);

  void shutDown();
  bool shuttingDown();
  size_t length();

  // Moves delayed keys whose time has come into the queue (tests with a fake clock call it).
  void promoteDue();

  // Records workqueue_adds_total, workqueue_depth, workqueue_queue_duration_seconds,
  // workqueue_work_duration_seconds and workqueue_retries_total with label name=`name` (durations
  // measured on the queue's Clock). Call once, before the queue is used.
  void enableMetrics(const std::string& name,
                     metrics::Registry& registry = metrics::defaultRegistry());

 private:
  // The children of this queue's name, resolved once.
  struct Metrics {
    metrics::Counter& adds;
    metrics::Gauge& depth;
    metrics::Histogram& queueDuration;
    metrics::Histogram& workDuration;
    metrics::Counter& retries;
  };

  void addLocked(const std::string& key);
  void promoteDueLocked();

  const Clock& clock_;
  std::chrono::milliseconds baseDelay_, maxDelay_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_, processing_;
  std::multimap<std::chrono::steady_clock::time_point, std::string> delayed_;
  std::map<std::string, int> failures_;
  bool shutdown_ = false;
  std::unique_ptr<Metrics> metrics_;
  // With metrics: when each dirty key was added, and when each key in processing was handed out.
  std::map<std::string, std::chrono::steady_clock::time_point> addedAt_, startedAt_;
};

}  // namespace minik8s::client
