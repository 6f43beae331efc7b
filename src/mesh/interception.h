// The iptables nat rules mesh-init installs in a meshed pod's network namespace, in Istio's
// scheme: every outbound TCP connection is redirected to the sidecar's outbound port except the
// sidecar's own (its UID) and loopback; every inbound TCP connection goes to its inbound port
// except the ports the sidecar serves itself (metrics). A pure function, so it is tested alone.
#pragma once

#include <string>
#include <vector>

namespace minik8s::mesh {

struct InterceptionOptions {
  int outboundPort = 15001;
  int inboundPort = 15006;
  int proxyUid = 1337;
  std::vector<int> excludeInboundPorts = {15090};
};

// Input for `iptables-restore` (table nat, chains MESH_*).
std::string interceptionRules(const InterceptionOptions& options);

}  // namespace minik8s::mesh
