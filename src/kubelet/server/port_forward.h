// `kubectl port-forward` on the agent: the client's connection is relayed to the container
// runtime's streaming server (containerd's CRI PortForward URL), which dials the ports inside the
// pod's network namespace, as a real kubelet does.
//
// kubectl 1.32 speaks SPDY/3.1 with the portforward.k8s.io stream protocol (per forwarded
// connection an `error` and a `data` stream with `port` and `requestID` headers) either after an
// HTTP upgrade (`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`) or tunnelled
// in the binary messages of a WebSocket with subprotocol `SPDY/3.1+portforward.k8s.io`. Both
// carry the same SPDY bytes, so the agent upgrades its own connection to the runtime and copies
// the bytes: the SPDY session (streams, header compression, pings) is between kubectl and the
// runtime.
#pragma once

#include <string>

#include "common/stream.h"
#include "common/websocket.h"

namespace minik8s::kubelet::server {

inline constexpr const char* kPortForwardProtocol = "portforward.k8s.io";
inline constexpr const char* kPortForwardTunnelProtocol = "SPDY/3.1+portforward.k8s.io";

// Copies a WebSocket tunnel's binary messages to `upstream` and `upstream`'s bytes (after
// `upstreamAlreadyRead`) back as binary messages, until either side ends. Runs on the caller's
// thread plus one reader thread.
void relayTunnel(ws::Connection& client, http::Stream& upstream,
                 const std::string& upstreamAlreadyRead);

}  // namespace minik8s::kubelet::server
