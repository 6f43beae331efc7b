// Autoscaler: how many instances each Function should have, from the requests in flight at the
// gateway (Knative's KPA, concurrency-based).
//
// The gateway reports every request's start and end (held requests of a Function at zero count
// too, so a burst arriving at a cold Function asks for enough instances at once). sample(),
// called once a second, closes each Function's one-second bucket: the time-weighted average of
// its in-flight count over that second. decide() then computes
//   stable = mean of the samples of the last 60 s (the stable window),
//   panic  = mean of the samples of the last 6 s (the panic window),
//   desired = ceil(stable / targetConcurrency).
// When the panic average reaches twice the capacity of the ready instances (ready x target), the
// Function panics: desired = ceil(panic / target), and it never goes down while panicking; the
// panic ends after a stable window without that condition. A Function with no request in flight
// and none finished for scaleToZeroAfter goes to 0 (minScale 0) whatever the averages say; one
// with recent traffic keeps at least one instance (one the autoscaler has seen no request of yet,
// e.g. after a gateway restart, keeps what it has until its idle window passed). The result is
// clamped to [minScale, maxScale].
//
// Time comes from a client::Clock (tests use a fake one). Thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "client/work_queue.h"
#include "serverless/function.h"

namespace minik8s::serverless {

struct AutoscalerWindows {
  std::chrono::seconds stable{60};
  std::chrono::seconds panic{6};
  double panicThreshold = 2.0;  // panic average / (ready x target)
};

struct ScaleDecision {
  int desired = 0;
  bool panicking = false;
  double stableConcurrency = 0;
  double panicConcurrency = 0;
};

class Autoscaler {
 public:
  explicit Autoscaler(const client::Clock& clock, AutoscalerWindows windows = {});

  // Adds or updates a Function (key "ns/name"); its idle time starts now when new.
  void configure(const std::string& key, const ScaleSettings& settings);
  void forget(const std::string& key);

  void requestStarted(const std::string& key);
  void requestFinished(const std::string& key);
  int inFlight(const std::string& key) const;

  // Closes the current sample of every Function; call about once a second.
  void sample();
  // The instance count `key` should have, given its ready instances and the count asked for
  // now (the Deployment's spec.replicas). An unknown key: 0.
  ScaleDecision decide(const std::string& key, int readyInstances, int currentInstances);

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct FunctionStats {
    ScaleSettings settings;
    int inFlight = 0;
    double area = 0;  // in-flight x seconds since bucketStart
    TimePoint lastChange, bucketStart, lastActive;
    bool sawRequest = false;     // since configure()
    std::deque<double> samples;  // one per sample(), newest last
    bool panicking = false;
    TimePoint panicSince;
    int panicDesired = 0;  // the most asked for during this panic
  };
  void accumulate(FunctionStats& f, TimePoint now);

  const client::Clock& clock_;
  AutoscalerWindows windows_;
  mutable std::mutex mu_;
  std::map<std::string, FunctionStats> functions_;
};

}  // namespace minik8s::serverless
