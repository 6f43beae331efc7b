// Events: what `kubectl describe` lists under Events (Scheduled, Pulling, Started, BackOff,
// SuccessfulRescale, ...), written as core/v1 Events with involvedObject, reason, message, type,
// source {component, host}, reportingComponent/Instance, count and first/lastTimestamp, as
// client-go's event recorder does. The one recorder of minik8s: the scheduler, the kubelet, the
// DNS gateway and the controllers all write Events through it.
//
// EventRecorder is the seam callers write to. ApiEventRecorder is the real one: record() only
// queues (bounded; beyond `maxQueued` records are dropped), so it never blocks the caller on the
// API; a writer thread correlates and writes. The correlation follows Kubernetes'
// EventCorrelator: identical events become one Event whose count and lastTimestamp grow (PATCHed
// at most once per `updateInterval`), many different messages of one reason are combined, and a
// token bucket per involved object limits how many new Events it can create. Events are best
// effort: failures are logged, never returned. FakeEventRecorder keeps records in memory for
// tests.
//
// Thread-safety: EventCorrelator is not thread-safe (the writer thread owns it); record() of
// ApiEventRecorder and FakeEventRecorder may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/rest_client.h"
#include "common/time_util.h"

namespace minik8s::client {

// Event timestamps are wall time (client::Clock is the steady clock of work queues).
using EventClock = std::chrono::system_clock;

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `object` is the involved API object (kind, apiVersion, metadata; kind and apiVersion default
  // to Pod and v1, as list items carry neither); `type` is Normal or Warning.
  void record(const json& object, const std::string& type, const std::string& reason,
              const std::string& message) {
    recordAt(object, "", type, reason, message);
  }
  // `fieldPath` names a part of the object, such as a container ("spec.containers{app}").
  void record(const json& object, const std::string& fieldPath, const std::string& type,
              const std::string& reason, const std::string& message) {
    recordAt(object, fieldPath, type, reason, message);
  }

 protected:
  virtual void recordAt(const json& object, const std::string& fieldPath, const std::string& type,
                        const std::string& reason, const std::string& message) = 0;
};

// The involvedObject of an Event about `object`: kind, namespace ("default" for cluster-scoped
// objects, as Kubernetes writes them), name, uid, apiVersion, resourceVersion, fieldPath.
json objectReference(const json& object, const std::string& fieldPath = "");

// "spec.containers{name}" or "spec.initContainers{name}".
std::string containerFieldPath(const std::string& name, bool isInit);

struct EventCorrelatorOptions {
  // Distinct messages of one (object, type, reason) within `aggregateWindow` before they are
  // combined into one Event (Kubernetes: 10 within 10 minutes).
  size_t maxSimilarMessages = 10;
  std::chrono::seconds aggregateWindow{600};
  // New Events per involved object: a burst, then one per `refillEvery` (Kubernetes: 25, 5 min).
  double burst = 25;
  std::chrono::seconds refillEvery{300};
  // Bounds memory on long runs; forgetting only means the next repeat starts a new Event.
  size_t maxRemembered = 4096;
};

// Decides, for each recorded event, whether it creates a new Event, bumps the count of an
// earlier one, or is dropped by the rate limit. Pure apart from its memory; time comes in.
class EventCorrelator {
 public:
  struct Input {
    json involvedObject;  // objectReference()
    std::string type, reason, message;
  };
  struct Decision {
    enum Kind { kCreate, kUpdate, kDrop } kind = kDrop;
    std::string key;      // identifies the Event (its name is assigned when it is created)
    std::string message;  // possibly "(combined from similar events): ..."
    int64_t count = 1;
    EventClock::time_point firstTimestamp, lastTimestamp;
  };

  explicit EventCorrelator(EventCorrelatorOptions options = {}) : options_(options) {}
  Decision observe(const Input& in, EventClock::time_point now);

 private:
  struct Seen {
    int64_t count = 0;
    EventClock::time_point first;
  };
  struct Similar {
    std::map<std::string, EventClock::time_point> messages;  // message -> last seen
  };
  struct Bucket {
    double tokens = 0;
    EventClock::time_point last;
  };

  EventCorrelatorOptions options_;
  std::map<std::string, Similar> similar_;  // by aggregate key
  std::map<std::string, Seen> seen_;        // by event key
  std::map<std::string, Bucket> buckets_;   // by involved object
};

struct ApiEventRecorderOptions {
  std::string component;  // source.component and reportingComponent: "kubelet", "default-scheduler"
  std::string host;       // source.host and reportingInstance: the node name, or empty
  std::chrono::milliseconds updateInterval{5000};  // coalesces count bumps of one Event
  size_t maxQueued = 1000;                         // beyond this, new records are dropped
  EventCorrelatorOptions correlator;
  std::function<EventClock::time_point()> now = [] { return EventClock::now(); };  // event timestamps
};

class ApiEventRecorder : public EventRecorder {
 public:
  ApiEventRecorder(RestClient& client, ApiEventRecorderOptions options);
  ~ApiEventRecorder() override;  // writes what is pending, then stops the writer
  ApiEventRecorder(const ApiEventRecorder&) = delete;
  ApiEventRecorder& operator=(const ApiEventRecorder&) = delete;

  // Writes everything queued and every pending count bump now (tests, shutdown).
  void flush();

  // The Event object a first occurrence creates (exposed for tests).
  json newEvent(const EventCorrelator::Input& in, const EventCorrelator::Decision& d) const;

 protected:
  void recordAt(const json& object, const std::string& fieldPath, const std::string& type,
                const std::string& reason, const std::string& message) override;

 private:
  struct Written {
    std::string ns, name;
    int64_t count = 0;         // as last written
    int64_t pendingCount = 0;  // as last observed
    std::string pendingMessage;
    EventClock::time_point pendingLast;
    EventCorrelator::Input input;
    EventClock::time_point firstTimestamp;
    std::chrono::steady_clock::time_point writtenAt;
  };
  struct Queued {
    EventCorrelator::Input input;
    EventClock::time_point at;
  };

  void writerLoop();
  void process(const Queued& q);
  void writePending(bool all);
  void create(Written& w, const EventCorrelator::Decision& d);

  RestClient& client_;
  ApiEventRecorderOptions options_;
  EventCorrelator correlator_;  // writer thread only (or under writeMu_)

  std::mutex writeMu_;                      // one writer at a time: the thread or flush()
  std::map<std::string, Written> written_;  // by correlator key

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;
  bool stopping_ = false;
  std::thread writer_;
};

// Keeps every record in memory, in order, for tests.
class FakeEventRecorder : public EventRecorder {
 public:
  struct Recorded {
    json involvedObject;  // objectReference()
    std::string type, reason, message;
  };
  std::vector<Recorded> events() const;
  std::vector<std::string> reasons() const;
  // The first record with this reason, if any.
  std::optional<Recorded> find(const std::string& reason) const;
  void clear();

 protected:
  void recordAt(const json& object, const std::string& fieldPath, const std::string& type,
                const std::string& reason, const std::string& message) override;

 private:
  mutable std::mutex mu_;
  std::vector<Recorded> events_;
};

}  // namespace minik8s::client
