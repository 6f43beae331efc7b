#include "mesh/interception.h"

namespace minik8s::mesh {

std::string interceptionRules(const InterceptionOptions& o) {
  std::string r = "*nat\n";
  for (const char* chain : {"MESH_INBOUND", "MESH_IN_REDIRECT", "MESH_OUTPUT", "MESH_REDIRECT"}) {
    r += ":" + std::string(chain) + " - [0:0]\n";
  }
  r += "-A MESH_REDIRECT -p tcp -j REDIRECT --to-ports " + std::to_string(o.outboundPort) + "\n";
  r += "-A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports " + std::to_string(o.inboundPort) + "\n";
  r += "-A PREROUTING -p tcp -j MESH_INBOUND\n";
  for (int port : o.excludeInboundPorts) {
    r += "-A MESH_INBOUND -p tcp --dport " + std::to_string(port) + " -j RETURN\n";
  }
  r += "-A MESH_INBOUND -p tcp -j MESH_IN_REDIRECT\n";
  r += "-A OUTPUT -p tcp -j MESH_OUTPUT\n";
  // The sidecar's own connections (to endpoints, and inbound ones to 127.0.0.1:<app port>).
  r += "-A MESH_OUTPUT -m owner --uid-owner " + std::to_string(o.proxyUid) + " -j RETURN\n";
  r += "-A MESH_OUTPUT -o lo -j RETURN\n";
  r += "-A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN\n";
  r += "-A MESH_OUTPUT -j MESH_REDIRECT\n";
  r += "COMMIT\n";
  return r;
}

}  // namespace minik8s::mesh
