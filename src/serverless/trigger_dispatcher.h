// TriggerDispatcher: delivers CloudEvents to a Trigger's target with its retry policy, without
// blocking the sender: submit() queues (the broker answers 202 at once), worker threads take
// the deliveries whose time has come, a failed attempt is queued again after the back-off
// (retryBackoff), and after the last attempt the outcome goes to the DeliveryRecorder (status
// counts, the dead letter). Per Trigger, `forbidConcurrent` refuses a submission while an
// earlier event of the same Trigger is still queued or being delivered (a schedule's
// concurrencyPolicy Forbid).
//
// Time comes from a client::Clock; runDue() runs what is due now in the caller's thread, so a
// test with a fake clock and a fake target sees every attempt exactly. Thread-safe.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "client/work_queue.h"
#include "serverless/cloud_event.h"
#include "serverless/trigger.h"

namespace minik8s::serverless {

// Where events go: a Function through the gateway, a Workflow as a new WorkflowExecution.
class DeliveryTarget {
 public:
  virtual ~DeliveryTarget() = default;
  // OK when the target took the event (a Function answered 2xx); the error otherwise.
  virtual Status deliver(const std::string& ns, const TriggerTarget& target,
                         const CloudEvent& event) = 0;
};

// Where outcomes go (the Trigger's status and Events; tests: a list).
class DeliveryRecorder {
 public:
  virtual ~DeliveryRecorder() = default;
  virtual void record(const std::string& ns, const std::string& trigger,
                      const DeliveryOutcome& outcome, bool deadLetter) = 0;
};

struct Delivery {
  std::string ns, trigger;
  TriggerTarget target;
  DeliveryPolicy policy;
  CloudEvent event;
  std::string firedAt;  // RFC 3339, when it was received
  int attempts = 0;
  std::string lastError;
};

class TriggerDispatcher {
 public:
  TriggerDispatcher(DeliveryTarget& target, DeliveryRecorder& recorder,
                    const client::Clock& clock = client::RealClock::instance(),
                    size_t maxQueued = 10000);
  ~TriggerDispatcher();
  TriggerDispatcher(const TriggerDispatcher&) = delete;
  TriggerDispatcher& operator=(const TriggerDispatcher&) = delete;

  // Queues the first attempt now. Unavailable when the queue is full; AlreadyExists-like
  // Conflict when `forbidConcurrent` and the Trigger has one in progress.
  Status submit(Delivery delivery, bool forbidConcurrent = false);

  // Runs every attempt due at clock.now() in this thread; the number run.
  size_t runDue();
  // When the next queued attempt is due (nullopt: none queued).
  std::optional<std::chrono::steady_clock::time_point> nextDue() const;
  size_t queued() const;

  // Worker threads that run attempts when due (real clock).
  void start(int workers);
  void stop();

 private:
  struct Entry {
    std::chrono::steady_clock::time_point due;
    uint64_t seq;
    Delivery delivery;
    bool operator>(const Entry& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  // Pops one due entry (lock held); false when none is due.
  bool popDue(std::unique_lock<std::mutex>& lock, Delivery* out);
  void attempt(Delivery d);
  void workerLoop();

  DeliveryTarget& target_;
  DeliveryRecorder& recorder_;
  const client::Clock& clock_;
  const size_t maxQueued_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
  uint64_t seq_ = 0;
  size_t inProgress_ = 0;
  std::map<std::string, int> perTrigger_;  // "ns/name" -> queued + in progress
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace minik8s::serverless
