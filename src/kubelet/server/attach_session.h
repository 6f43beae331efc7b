// `kubectl attach` on the agent: the client's WebSocket (v5.channel.k8s.io or v4.channel.k8s.io,
// see exec_session.h) on one side, the container runtime's streaming server on the other.
//
// The runtime (containerd's CRI Attach URL) speaks the Kubernetes remote-command protocol
// v4.channel.k8s.io over SPDY/3.1: the client opens one SPDY stream per standard stream, named by
// its `streamType` header (error, stdin, stdout, stderr, resize), and the runtime ends the
// session with a meta/v1 Status on the error stream and closes the connection. The session
// translates: WebSocket channel 0 to the stdin stream (channel 255 [255, 0] ends it), channel 4
// to the resize stream, the stdout and stderr streams to channels 1 and 2, the error stream's
// Status to channel 3. Runs on the caller's thread plus one reader thread.
#pragma once

#include "common/spdy.h"
#include "common/websocket.h"
#include "kubelet/server/streaming_runtime.h"

namespace minik8s::kubelet::server {

inline constexpr const char* kRemoteCommandV4 = "v4.channel.k8s.io";

// Relays until the runtime ends the session or the client leaves (then the runtime's
// connection is closed, which detaches; the container keeps running).
void runAttachSession(ws::Connection& client, spdy::UpgradedStream upstream,
                      const AttachSpec& spec);

}  // namespace minik8s::kubelet::server
