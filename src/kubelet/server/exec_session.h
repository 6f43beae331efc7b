// The Kubernetes remote-command protocol over WebSocket (v4.channel.k8s.io, v5.channel.k8s.io)
// between a client (kubectl exec, the Python client) and an ExecProcess.
//
// Every binary message starts with a channel byte: 0 stdin, 1 stdout, 2 stderr, 3 the final
// meta/v1 Status as JSON, 4 terminal resize {"Width":W,"Height":H}, and in v5 255 = close a
// stream ([255, 0] closes stdin). The session ends with channel 3 (Success, or Failure with
// reason NonZeroExitCode and an ExitCode cause) and a close frame. Runs on the caller's thread
// plus one reader thread; returns when both ended.
#pragma once

#include <cstdint>
#include <string>

#include "common/websocket.h"
#include "kubelet/server/exec_backend.h"

namespace minik8s::kubelet::server {

// The channel byte at the start of every binary message.
enum Channel : uint8_t {
  kStdin = 0,
  kStdout = 1,
  kStderr = 2,
  kError = 3,
  kResize = 4,
  kClose = 255
};

inline constexpr const char* kChannelV5 = "v5.channel.k8s.io";
inline constexpr const char* kChannelV4 = "v4.channel.k8s.io";

// The channel-3 Status for an exit code.
json execExitStatus(int exitCode);

// Pumps `process` through `conn` until the process ended and its output was sent; kills the
// process when the client goes away first. Returns the exit code (-1 when killed for the client).
int runExecSession(ws::Connection& conn, ExecProcess& process);

// Sends channel 3 with `status` (a failure before anything ran) and closes.
void failExecSession(ws::Connection& conn, const Status& status);

}  // namespace minik8s::kubelet::server
