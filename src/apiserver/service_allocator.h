// ServiceAllocator: ClusterIPs from the service CIDR and nodePorts from the node port range,
// with one allocation record per IP and per port in the store.
//
// A record is a key ("/minik8s/serviceallocations/clusterips/10.96.0.12",
// ".../nodeports/30080") whose value names the owning Service (namespace, name, uid). It is
// taken with the store's create-if-absent, so two creates racing for one address (threads of one
// server or several servers on one etcd) cannot both win, and it outlives restarts. Records live
// outside /registry/ so the watch cache never sees them. A crash between taking a record and
// storing the Service leaks the record; repair() gives back records no Service uses (after a
// grace period covering creates still in flight) and re-takes records for Services that lost
// theirs. The Registry calls allocate*/release* around its writes of Services.
// Thread-safe (state is in the store; the options are immutable).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/store.h"

namespace minik8s::apiserver {

struct ServiceAllocatorOptions {
  std::string clusterIPRange = "10.96.0.0/16";  // IPv4 CIDR
  int nodePortMin = 30000;
  int nodePortMax = 32767;
  // Orphan records younger than this are left alone by repair(): their create may be in flight.
  std::chrono::seconds repairGrace{60};
};

// One IPv4 CIDR, e.g. 10.96.0.0/16.
struct Ipv4Range {
  uint32_t base = 0;  // network address, host order
  int prefix = 0;
  static Result<Ipv4Range> parse(const std::string& cidr);
  uint64_t size() const { return uint64_t{1} << (32 - prefix); }
  bool contains(uint32_t ip) const;
  // The n-th address of the range (n = 1 is the kubernetes service).
  std::string at(uint64_t n) const;
  std::string toString() const;
};

std::optional<uint32_t> parseIpv4(const std::string& ip);
std::string formatIpv4(uint32_t ip);

class ServiceAllocator {
 public:
  // Fails on a malformed or IPv6 range, or a range too small to hold the kubernetes and DNS
  // addresses.
  static Result<std::unique_ptr<ServiceAllocator>> create(storage::Store& store,
                                                          ServiceAllocatorOptions options);

  // A Service about to be created (defaulted and validated, uid set): takes its requested
  // clusterIP and nodePorts or allocates free ones and writes them into `svc`. 422 Invalid when
  // a requested one is taken or out of range; nothing stays taken on failure.
  Status allocate(json& svc);
  // An update from `old` to `svc`: nodePorts for ports or types that now need them (a type
  // changed to ClusterIP drops its nodePorts), a clusterIP for a former ExternalName. Takes only
  // what `old` did not hold. On a failed write call releaseNotIn(svc, old); on success
  // releaseNotIn(old, svc).
  Status allocateForUpdate(json& svc, const json& old);
  // Gives back what `svc` holds and `keep` does not (everything when `keep` is null).
  void releaseNotIn(const json& svc, const json* keep);
  void release(const json& svc) { releaseNotIn(svc, nullptr); }

  // Makes the records match `services` (every stored Service): takes missing records, removes
  // orphans older than the grace period. `now` is wall-clock seconds since the epoch.
  Status repair(const std::vector<json>& services, int64_t nowSeconds);

  const Ipv4Range& range() const { return range_; }
  const ServiceAllocatorOptions& options() const { return options_; }

  static constexpr const char* kClusterIPPrefix = "/minik8s/serviceallocations/clusterips/";
  static constexpr const char* kNodePortPrefix = "/minik8s/serviceallocations/nodeports/";

 private:
  ServiceAllocator(storage::Store& store, ServiceAllocatorOptions options, Ipv4Range range);

  // Takes `key` for `svc`. OK when taken now or already held by the same uid; AlreadyExists when
  // held by someone else.
  Status take(const std::string& key, const json& svc);
  void giveBack(const std::string& key, const json& svc);
  Result<std::string> allocateIP(const json& svc);
  Result<int> allocateNodePort(const json& svc);
  // A free value from [lo, hi], preferring [dynamicLo, hi]; `tryTake` returns AlreadyExists when
  // taken.
  Result<uint64_t> allocateFrom(uint64_t lo, uint64_t dynamicLo, uint64_t hi,
                                const std::string& prefix,
                                const std::function<std::string(uint64_t)>& keyOf, const json& svc,
                                const std::string& what);

  storage::Store& store_;
  ServiceAllocatorOptions options_;
  Ipv4Range range_;
};

}  // namespace minik8s::apiserver
