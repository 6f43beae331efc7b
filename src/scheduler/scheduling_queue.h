// SchedulingQueue: the three queues of kube-scheduler for pods waiting to be scheduled.
//
// activeQ holds pods ready for an attempt (FIFO); backoffQ holds pods that failed recently and
// wait out a per-pod exponential back-off (initialBackoff doubling up to maxBackoff);
// unschedulablePods holds pods that fit nowhere until a cluster event (a node or pod change)
// moves them back, or until they have waited `unschedulableTimeout`. A pod that was found
// unschedulable while a move request happened during its attempt goes to backoffQ instead, so an
// event is never lost. Keys are "namespace/name". Time comes from a client::Clock so tests are
// exact. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/work_queue.h"

namespace minik8s::scheduler {

struct QueueOptions {
  std::chrono::milliseconds initialBackoff{1000};
  std::chrono::milliseconds maxBackoff{10000};
  std::chrono::milliseconds unschedulableTimeout{std::chrono::minutes(5)};
};

// Keys with a time each, also ordered by time: which keys are due is a walk from the earliest,
// not a scan of every waiting pod (with 10,000 pending pods a scan per pop() was a fifth of the
// server's CPU). Not thread-safe (SchedulingQueue's lock guards it).
class TimedKeys {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  void set(const std::string& key, TimePoint t);  // adds or moves the key to `t`
  bool erase(const std::string& key);
  bool contains(const std::string& key) const { return byKey_.count(key) > 0; }
  size_t size() const { return byKey_.size(); }
  // Removes the keys whose time is <= `until` and returns them, earliest first.
  std::vector<std::string> takeUntil(TimePoint until);
  // Removes every key and returns them with their times, earliest first.
  std::vector<std::pair<std::string, TimePoint>> takeAll();

 private:
  std::unordered_map<std::string, TimePoint> byKey_;
  std::set<std::pair<TimePoint, std::string>> byTime_;
};

class SchedulingQueue {
 public:
  explicit SchedulingQueue(const client::Clock& clock = client::RealClock::instance(),
                           QueueOptions options = {});

  // A new or changed pending pod: to activeQ unless it already waits somewhere.
  void add(const std::string& key);
  // Blocks until a pod is ready for an attempt (nullopt on timeout or close()). Also moves due
  // back-offs and timed-out unschedulable pods into activeQ.
  std::optional<std::string> pop(std::chrono::milliseconds maxWait = std::chrono::hours(1));
  // After a failed attempt that started at `cycle` (see schedulingCycle()).
  void addUnschedulable(const std::string& key, int64_t cycle);
  // After an error (such as a failed binding): retry after the pod's back-off.
  void addBackoff(const std::string& key);
  // A cluster change that may make unschedulable pods fit.
  void moveAllToActiveOrBackoff();
  // The pod was bound or deleted: forget it and its attempts.
  void remove(const std::string& key);
  void close();

  // The cycle number of the last pop(); an attempt remembers it for addUnschedulable().
  int64_t schedulingCycle();
  // Moves due pods (tests with a fake clock call it; pop() does it too).
  void flush();

  size_t activeLength();
  size_t backoffLength();
  size_t unschedulableLength();
  int attempts(const std::string& key);

 private:
  std::chrono::steady_clock::time_point backoffExpiry(const std::string& key);
  void flushLocked();
  void pushActiveLocked(const std::string& key);

  const client::Clock& clock_;
  QueueOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> active_;
  std::set<std::string> activeSet_;
  TimedKeys backoff_;        // key -> expiry
  TimedKeys unschedulable_;  // key -> since
  std::map<std::string, int> attempts_;
  std::map<std::string, std::chrono::steady_clock::time_point> lastFailure_;
  int64_t cycle_ = 0;
  int64_t moveRequestCycle_ = -1;
  bool closed_ = false;
};

}  // namespace minik8s::scheduler
