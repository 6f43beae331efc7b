// NodeNamespaces: the "machines" of a cluster on one host. Each node is a network namespace
// joined to an underlay bridge in the host namespace by a veth pair, exactly like separate
// machines on one switch: the host side of the bridge holds the gateway address (where the
// server and the registry listen), each node gets the next addresses of the underlay subnet.
//
// Network safety (ARCHITECTURE.md section 6): node namespaces get no default route (only the
// underlay subnet and the service range through their underlay link), so pod traffic cannot
// leave the machine; the host gets blackhole routes for the pod and service ranges and a FORWARD
// rule that drops anything from the underlay bridge towards another interface. All of it is
// removed by tearDown. Commands run through a Runner. Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/cidr.h"
#include "network/overlay.h"

namespace minik8s::network {

struct UnderlayOptions {
  std::string prefix = "mk8s";          // names: bridge "<prefix>0", netns/veth "<prefix>-<node>"
  Ipv4Cidr subnet{0xac1d0000, 24};      // 172.29.0.0/24; .1 is the host (gateway)
  std::string podCidr = "10.244.0.0/16";
  std::string serviceCidr = "10.96.0.0/12";
};

class NodeNamespaces {
 public:
  NodeNamespaces(UnderlayOptions options, Runner runner);

  std::string bridgeName() const { return options_.prefix + "0"; }
  std::string netnsName(const std::string& node) const { return options_.prefix + "-" + node; }
  std::string netnsPath(const std::string& node) const { return "/var/run/netns/" + netnsName(node); }
  std::string gatewayIp() const;               // the host's address on the underlay
  std::string nodeIp(int index) const;         // index 1.. -> gateway + index

  // The bridge, its address and the host's safety rules. Idempotent.
  Status setUpUnderlay();
  // A namespace for `node` with address `ip` on the underlay. Idempotent.
  Status addNode(const std::string& node, const std::string& ip);
  // Deletes the namespace (and with it the veth pair and everything inside).
  Status removeNode(const std::string& node);
  // Removes the bridge and the host rules (nodes must be gone first).
  Status tearDownUnderlay();
  // Names of existing namespaces that belong to this prefix ("<prefix>-*").
  std::vector<std::string> existingNodeNamespaces() const;

 private:
  Result<std::string> run(const std::vector<std::string>& argv) const;
  bool succeeded(const std::vector<std::string>& argv) const;
  std::vector<std::string> forwardRule() const;

  UnderlayOptions options_;
  Runner runner_;
};

}  // namespace minik8s::network
