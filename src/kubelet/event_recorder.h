// Kubelet Events: what `kubectl describe pod` lists under Events (Pulling, Pulled, Created,
// Started, Killing, BackOff, Unhealthy, Failed ...), written as core/v1 Events with source
// {component: kubelet, host: <node>} and reportingComponent kubelet.
//
// EventRecorder is the seam the pod sync writes to; ApiEventRecorder is the real one. It never
// blocks the caller on the API: record() queues, a writer thread correlates and writes. The
// correlation follows Kubernetes' EventCorrelator in spirit (see EventCorrelator below):
// identical events become one Event whose count and lastTimestamp grow (PATCHed at most once per
// `updateInterval`), many different messages of one reason are combined, and a token bucket per
// involved object limits how many new Events a pod can create. Events are best effort: failures
// are logged, never returned.
//
// Thread-safety: EventCorrelator is not thread-safe (the writer thread owns it);
// ApiEventRecorder::record() may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "client/rest_client.h"
#include "common/time_util.h"

namespace minik8s::kubelet {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // `pod` is the API object; `fieldPath` names a container ("spec.containers{app}") or is
  // empty for the pod itself; `type` is Normal or Warning.
  virtual void record(const json& pod, const std::string& fieldPath, const std::string& type,
                      const std::string& reason, const std::string& message) = 0;
};

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
    json involvedObject;  // kind, namespace, name, uid, apiVersion, resourceVersion, fieldPath
    std::string type, reason, message;
  };
  struct Decision {
    enum Kind { kCreate, kUpdate, kDrop } kind = kDrop;
    std::string key;      // identifies the Event (its name is assigned when it is created)
    std::string message;  // possibly "(combined from similar events): ..."
    int64_t count = 1;
    Clock::time_point firstTimestamp, lastTimestamp;
  };

  explicit EventCorrelator(EventCorrelatorOptions options = {}) : options_(options) {}
  Decision observe(const Input& in, Clock::time_point now);

 private:
  struct Seen {
    int64_t count = 0;
    Clock::time_point first;
  };
  struct Similar {
    std::map<std::string, Clock::time_point> messages;  // message -> last seen
  };
  struct Bucket {
    double tokens = 0;
    Clock::time_point last;
  };

  EventCorrelatorOptions options_;
  std::map<std::string, Similar> similar_;  // by aggregate key
  std::map<std::string, Seen> seen_;        // by event key
  std::map<std::string, Bucket> buckets_;   // by involved object
};

struct ApiEventRecorderOptions {
  std::string nodeName;
  std::chrono::milliseconds updateInterval{5000};  // coalesces count bumps of one Event
  size_t maxQueued = 1000;                         // beyond this, new records are dropped
  EventCorrelatorOptions correlator;
};

class ApiEventRecorder : public EventRecorder {
 public:
  ApiEventRecorder(client::RestClient& client, ApiEventRecorderOptions options);
  ~ApiEventRecorder() override;  // writes what is pending, then stops the writer
  ApiEventRecorder(const ApiEventRecorder&) = delete;
  ApiEventRecorder& operator=(const ApiEventRecorder&) = delete;

  void record(const json& pod, const std::string& fieldPath, const std::string& type,
              const std::string& reason, const std::string& message) override;

  // Writes everything queued and every pending count bump now (tests, shutdown).
  void flush();

  // The Event object a first occurrence creates (exposed for tests).
  json newEvent(const EventCorrelator::Input& in, const EventCorrelator::Decision& d) const;

 private:
  struct Written {
    std::string ns, name;
    int64_t count = 0;         // as last written
    int64_t pendingCount = 0;  // as last observed
    std::string pendingMessage;
    Clock::time_point pendingLast;
    EventCorrelator::Input input;
    Clock::time_point firstTimestamp;
    std::chrono::steady_clock::time_point writtenAt;
  };
  struct Queued {
    EventCorrelator::Input input;
    Clock::time_point at;
  };

  void writerLoop();
  void process(const Queued& q);
  void writePending(bool all);
  void create(Written& w, const EventCorrelator::Decision& d);

  client::RestClient& client_;
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

}  // namespace minik8s::kubelet
