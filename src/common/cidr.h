// IPv4 addresses and CIDR blocks (pod network, node IPAM, service ranges): parsing, the n-th subnet of a
// cluster range (node IPAM), the gateway and network addresses of a node's podCIDR, and the
// VXLAN device MAC derived from it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace minik8s {

struct Ipv4Cidr {
  uint32_t base = 0;  // network address, host byte order, host bits cleared
  int prefix = 0;

  uint64_t size() const { return uint64_t{1} << (32 - prefix); }
  bool contains(uint32_t ip) const;
  bool overlaps(const Ipv4Cidr& other) const;
  std::string toString() const;  // "10.244.1.0/24"
  bool operator==(const Ipv4Cidr&) const = default;
};

std::optional<uint32_t> parseIpv4(const std::string& text);
std::string formatIpv4(uint32_t ip);
// "10.244.0.0/16" (host bits must be clear); nullopt when malformed.
std::optional<Ipv4Cidr> parseCidr(const std::string& text);

// The index-th subnet of length `prefix` inside `range` (nullopt when out of range).
std::optional<Ipv4Cidr> nthSubnet(const Ipv4Cidr& range, int prefix, uint64_t index);
// How many subnets of length `prefix` fit in `range` (0 if prefix is shorter than the range's).
uint64_t subnetCount(const Ipv4Cidr& range, int prefix);

// The MAC of a node's VXLAN device: locally administered, unicast, derived from the network
// address of its podCIDR (0e:6b:a:b:c:d), so peers compute it from the Node object alone.
std::string vtepMacFor(const Ipv4Cidr& podCidr);

}  // namespace minik8s
