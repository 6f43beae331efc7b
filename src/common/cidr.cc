#include "common/cidr.h"

#include <arpa/inet.h>

#include <fmt/format.h>

namespace minik8s {

namespace {
uint32_t maskOf(int prefix) { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }
}  // namespace

bool Ipv4Cidr::contains(uint32_t ip) const { return (ip & maskOf(prefix)) == base; }

bool Ipv4Cidr::overlaps(const Ipv4Cidr& other) const {
  const int p = std::min(prefix, other.prefix);
  return (base & maskOf(p)) == (other.base & maskOf(p));
}

std::string Ipv4Cidr::toString() const { return formatIpv4(base) + "/" + std::to_string(prefix); }

std::optional<uint32_t> parseIpv4(const std::string& text) {
  in_addr addr{};
  if (::inet_pton(AF_INET, text.c_str(), &addr) != 1) return std::nullopt;
  return ntohl(addr.s_addr);
}

std::string formatIpv4(uint32_t ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

std::optional<Ipv4Cidr> parseCidr(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto ip = parseIpv4(text.substr(0, slash));
  if (!ip) return std::nullopt;
  const std::string p = text.substr(slash + 1);
  if (p.empty() || p.size() > 2 || p.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int prefix = std::stoi(p);
  if (prefix > 32) return std::nullopt;
  if ((*ip & ~maskOf(prefix)) != 0) return std::nullopt;
  return Ipv4Cidr{*ip, prefix};
}

uint64_t subnetCount(const Ipv4Cidr& range, int prefix) {
  if (prefix < range.prefix || prefix > 32) return 0;
  return uint64_t{1} << (prefix - range.prefix);
}

std::optional<Ipv4Cidr> nthSubnet(const Ipv4Cidr& range, int prefix, uint64_t index) {
  if (index >= subnetCount(range, prefix)) return std::nullopt;
  return Ipv4Cidr{range.base + static_cast<uint32_t>(index << (32 - prefix)), prefix};
}

std::string vtepMacFor(const Ipv4Cidr& podCidr) {
  const uint32_t b = podCidr.base;
  return fmt::format("0e:6b:{:02x}:{:02x}:{:02x}:{:02x}", b >> 24, (b >> 16) & 0xff,
                     (b >> 8) & 0xff, b & 0xff);
}

}  // namespace minik8s
