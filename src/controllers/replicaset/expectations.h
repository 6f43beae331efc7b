// ControllerExpectations: the creations and deletions a controller has asked for but not yet
// seen in its informer, per controller key, so a sync that runs before the watch catches up
// never creates or deletes twice (client-go's UIDTrackingControllerExpectations).
//
// Expectations expire after a TTL (5 minutes) so a lost event cannot block a controller for
// ever. Time comes from a client::Clock. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "client/work_queue.h"

namespace minik8s::controllers {

class ControllerExpectations {
 public:
  explicit ControllerExpectations(const client::Clock& clock,
                                  std::chrono::milliseconds ttl = std::chrono::minutes(5))
      : clock_(clock), ttl_(ttl) {}

  // True when nothing is pending for `key` (or never recorded, or expired): sync may act.
  bool satisfied(const std::string& key);
  void expectCreations(const std::string& key, int count);
  void expectDeletions(const std::string& key, const std::set<std::string>& podUids);
  void creationObserved(const std::string& key);
  void deletionObserved(const std::string& key, const std::string& podUid);
  void erase(const std::string& key);
  int pendingCreations(const std::string& key);
  size_t pendingDeletions(const std::string& key);

 private:
  struct Entry {
    int adds = 0;
    std::set<std::string> deletes;
    std::chrono::steady_clock::time_point setAt;
  };
  const client::Clock& clock_;
  std::chrono::milliseconds ttl_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace minik8s::controllers
