// Backoff: per-key exponential back-off for container restarts and image pulls, as the
// kubelet's flowcontrol.Backoff: 10 s doubling up to 5 min, forgotten after twice the maximum
// without use. Time comes from a client::Clock so tests drive it. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "client/work_queue.h"

namespace minik8s::kubelet {

class Backoff {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit Backoff(const client::Clock& clock, Duration initial = std::chrono::seconds(10),
                   Duration max = std::chrono::minutes(5));

  // True while `key` is backing off from something that happened at `eventTime` (for a restart:
  // when the container exit was seen): now - eventTime < current delay.
  bool inBackoffSince(const std::string& key, TimePoint eventTime);
  // Records an attempt now: the first sets the delay to `initial`, each next one doubles it.
  void next(const std::string& key);
  // The current delay of `key` (zero when unknown).
  Duration get(const std::string& key);
  void reset(const std::string& key);
  // Drops entries unused for twice the maximum delay.
  void gc();

 private:
  struct Entry {
    Duration delay;
    TimePoint lastUpdate;
  };
  const client::Clock& clock_;
  const Duration initial_, max_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace minik8s::kubelet
