// WatchEventDecoder: turns the body of a watch response - newline-delimited JSON events
// ({"type":"ADDED","object":{...}}) arriving in arbitrary pieces - into WatchEvents.
//
// It trusts nothing it reads: lines that are not an event (not JSON, no string type, an object
// that is not a JSON object) are skipped, an ERROR event ends the stream with its Status (never
// an OK one), and an event larger than kMaxWatchEventBytes ends it with a failure instead of
// growing without bound. One decoder per watch; not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::client {

// Well above the API server's 3 MiB request limit plus the event's envelope.
inline constexpr size_t kMaxWatchEventBytes = 16 * 1024 * 1024;

class WatchEventDecoder {
 public:
  // Appends a piece of the body and calls onEvent for every complete event in order. Returns
  // false once reading should stop: onEvent returned false, or the stream failed (failure()).
  bool feed(std::string_view chunk, const std::function<bool(WatchEvent&)>& onEvent);
  // Why the stream failed: an ERROR event's Status, or an oversized event. OK otherwise.
  const Status& failure() const { return failure_; }
  size_t bufferedBytes() const { return pending_.size(); }

 private:
  std::string pending_;  // the start of an incomplete line
  Status failure_;
  bool stopped_ = false;
};

}  // namespace minik8s::client
