// StreamingRuntime: where the agent's HTTP server gets the container runtime's streaming URLs
// for `kubectl attach` and `kubectl port-forward`.
//
// As with a real kubelet, the runtime (containerd's CRI plugin) answers Attach and PortForward
// with a one-time URL of its streaming server, which speaks SPDY/3.1; the agent connects to it
// and relays (port_forward.h, attach_session.h). The kubelet core implements this from its CRI
// runtime and its view of the node's pods. Implementations are thread-safe.
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::kubelet::server {

struct AttachSpec {
  std::string containerId;
  bool stdin = false;
  bool stdout = true;
  bool stderr = true;
  bool tty = false;
};

class StreamingRuntime {
 public:
  virtual ~StreamingRuntime() = default;
  // The URL to attach to a running container's main process.
  virtual Result<std::string> attachUrl(const AttachSpec& spec) = 0;
  // The URL to forward ports into the network namespace of pod ns/name (its ready sandbox);
  // NotFound when the pod has none on this node.
  virtual Result<std::string> portForwardUrl(const std::string& ns, const std::string& pod) = 0;
};

}  // namespace minik8s::kubelet::server
