// EventRecorder: writes core/v1 Events about API objects, as client-go's recorder does: the
// first occurrence creates an Event (count 1, firstTimestamp = lastTimestamp = now); the same
// (object, type, reason, message) again bumps count and lastTimestamp of that Event.
//
// Failures are logged, never returned: events are best-effort. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "client/rest_client.h"

namespace minik8s::scheduler {

class EventRecorder {
 public:
  // `component` is source.component and reportingComponent ("default-scheduler").
  EventRecorder(client::RestClient& client, std::string component);

  // `object` is the involved object (kind, apiVersion, metadata); `type` Normal or Warning.
  void record(const json& object, const std::string& type, const std::string& reason,
              const std::string& message);

  // The Event object record() would create first (exposed for tests).
  json newEvent(const json& object, const std::string& type, const std::string& reason,
                const std::string& message, const std::string& timestamp) const;

 private:
  struct Seen {
    std::string ns, name;
    int64_t count = 0;
  };

  client::RestClient& client_;
  std::string component_;
  std::mutex mu_;
  std::map<std::string, Seen> seen_;  // dedup key -> the Event written for it
};

}  // namespace minik8s::scheduler
