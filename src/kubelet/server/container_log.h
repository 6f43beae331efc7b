// Container logs in containerd's CRI format, read the way `kubectl logs` expects.
//
// Each line of a CRI log file is "<RFC3339Nano time> <stdout|stderr> <F|P> <text>": F ends a
// logical line, P is a fragment of a longer one (continued by the next record). streamContainerLog
// prints the text (optionally prefixed by the record's time), honours tailLines, sinceSeconds /
// sinceTime and limitBytes, and with follow keeps printing appended records until the caller says
// stop. Pure functions plus file reads; thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/http.h"
#include "common/status.h"
#include "common/time_util.h"

namespace minik8s::kubelet::server {

struct LogOptions {
  bool follow = false;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> tailLines;
  std::optional<int64_t> limitBytes;
  std::optional<Clock::time_point> since;  // from sinceSeconds or sinceTime
};

// Reads follow, previous, timestamps, tailLines, limitBytes, sinceSeconds, sinceTime from the
// query; BadRequest naming the parameter when a value is malformed or negative.
Result<LogOptions> parseLogOptions(const http::Request& req, Clock::time_point now);

struct CriLogRecord {
  std::string_view time;    // as written (RFC 3339 with nanoseconds)
  std::string_view stream;  // "stdout" or "stderr"
  bool partial = false;
  std::string_view text;  // without the trailing newline
};

// Parses one line (without its '\n'); nullopt when it is not in CRI format.
std::optional<CriLogRecord> parseCriLogLine(std::string_view line);

// Receives output; returns false to stop (the client went away).
using LogSink = std::function<bool(std::string_view)>;
// Asked when a following reader reaches the end of the file: true = wait for more.
using KeepFollowing = std::function<bool()>;

// Writes the log at `path` to `sink`. With opts.follow, waits at the end of the file (polling
// every `pollInterval`) for as long as keepFollowing() says so.
Status streamContainerLog(const std::string& path, const LogOptions& opts, const LogSink& sink,
                          const KeepFollowing& keepFollowing,
                          std::chrono::milliseconds pollInterval = std::chrono::milliseconds(100));

}  // namespace minik8s::kubelet::server
