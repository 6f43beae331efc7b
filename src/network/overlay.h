// Overlay: the routes between this node's pods and every other node's pods, kept equal to the
// Node objects, as flannel does.
//
// Backends:
//  - vxlan (default): one VXLAN device (VNI 1, UDP 8472, no learning) whose MAC and /32 address
//    derive from the node's podCIDR; for every peer a route `<peer podCIDR> via <peer net address>
//    dev vxlan0 onlink`, a permanent neighbour entry for that address with the peer's MAC and an
//    FDB entry sending that MAC to the peer's underlay IP. Works across L3 hops.
//  - host-gw: for every peer `<peer podCIDR> via <peer underlay IP>`; nodes must share an L2 link.
// Routes this code adds carry `proto 107`, so a sync (also after an agent restart) removes the
// stale ones of deleted nodes and nothing else. It masquerades the node's pods' traffic that
// leaves the pod network with one chain per node (the CNI bridge plugin runs with ipMasq off: its
// chain and rules per pod cost iptables runs under the xtables lock on every pod start and stop),
// and keeps pod-to-pod traffic across nodes out of it so pods see each other's real addresses.
//
// Commands run through a Runner (iproute2, bridge, iptables); unit tests pass a fake.
// Not thread-safe: one owner (the NetworkAgent's sync thread) calls it.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/cidr.h"
#include "common/command.h"
#include "common/status.h"

namespace minik8s::network {

// kNone: a single node (or routes made by someone else): no device, no routes.
enum class OverlayBackend { kVxlan, kHostGw, kNone };
Result<OverlayBackend> parseOverlayBackend(const std::string& name);  // vxlan, host-gw, none

// One other node as the overlay needs it.
struct PeerNode {
  std::string name;
  Ipv4Cidr podCidr;
  std::string underlayIp;
  bool operator==(const PeerNode&) const = default;
};

struct OverlayOptions {
  OverlayBackend backend = OverlayBackend::kVxlan;
  std::string underlayIp;                // this node's address on the underlay (its InternalIP)
  Ipv4Cidr clusterCidr{0x0af40000, 16};  // 10.244.0.0/16
  std::string vxlanDevice = "vxlan0";
  int vni = 1;
  int vxlanPort = 8472;
  int mtu = 1450;
};

using Runner = std::function<Result<CommandResult>(const std::vector<std::string>&)>;
Runner realRunner();  // runProgram

// The route protocol number that marks routes the overlay owns.
inline constexpr int kRouteProto = 107;

class Overlay {
 public:
  Overlay(OverlayOptions options, Runner runner);

  // Creates (or repairs) this node's side: the masquerade of `ownPodCidr`'s traffic leaving the
  // pod network (every backend, kNone too), the VXLAN device for `ownPodCidr`, IP forwarding and
  // the pod-to-pod masquerade exception. Idempotent.
  Status setUp(const Ipv4Cidr& ownPodCidr);
  // Makes routes, neighbours and FDB entries match `peers` exactly. Idempotent.
  Status sync(const std::vector<PeerNode>& peers);
  // Removes the device, the routes and the iptables rules and chain this code added.
  Status tearDown();

 private:
  Result<std::string> run(const std::vector<std::string>& argv);
  Status ensureVxlanDevice(const Ipv4Cidr& ownPodCidr);
  Status ensurePostroutingRule(const std::vector<std::string>& rule, bool first);
  Status ensureMasqueradeException();
  Status ensurePodMasquerade(const Ipv4Cidr& ownPodCidr);
  Result<std::set<std::string>> ownedRoutes();

  OverlayOptions options_;
  Runner runner_;
  std::optional<Ipv4Cidr> ownPodCidr_;  // set once the pod masquerade is in place
};

// The peers in a list of Node objects: every node other than `self` with a spec.podCIDR and an
// InternalIP. Nodes being deleted are left out.
std::vector<PeerNode> peersFromNodes(const std::vector<json>& nodes, const std::string& self);

}  // namespace minik8s::network
