// PodLookup: how the agent's HTTP server finds a container of a pod on this node.
//
// The kubelet core implements it from its pod workers' state: the CRI container id of the
// current (or previous) instance of a container, its CRI log file, and whether it still runs.
// The server only reads through it. Implementations must be thread-safe (each HTTP connection
// runs on its own thread).
#pragma once

#include <string>

#include "common/status.h"

namespace minik8s::kubelet::server {

struct ContainerLocation {
  std::string containerId;  // CRI container id (what `ctr` calls the container)
  std::string
      logPath;  // CRI log file of this instance (/var/log/pods/<ns>_<pod>_<uid>/<c>/<n>.log)
  bool running = false;
};

class PodLookup {
 public:
  virtual ~PodLookup() = default;
  // `previous` selects the instance before the current one (kubectl logs --previous); NotFound
  // (with a message kubectl can print) when the pod, the container or that instance is unknown.
  virtual Result<ContainerLocation> findContainer(const std::string& ns, const std::string& pod,
                                                  const std::string& container, bool previous) = 0;
};

}  // namespace minik8s::kubelet::server
