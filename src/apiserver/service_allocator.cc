#include "apiserver/service_allocator.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "common/logging.h"

namespace minik8s::apiserver {

using api::nameOf;

namespace {

constexpr int kMaxRandomTries = 32;

std::string typeOf(const json& svc) {
  std::string t = api::stringAt(svc, "/spec/type");
  return t.empty() ? "ClusterIP" : t;
}

// The clusterIP a Service asks for: spec.clusterIP, else spec.clusterIPs[0].
std::string requestedIP(const json& svc) {
  std::string ip = api::stringAt(svc, "/spec/clusterIP");
  if (ip.empty()) ip = api::stringAt(svc, "/spec/clusterIPs/0");
  return ip;
}

bool needsClusterIP(const json& svc) {
  return typeOf(svc) != "ExternalName" && requestedIP(svc) != "None";
}

bool needsNodePorts(const json& svc) {
  const std::string t = typeOf(svc);
  if (t == "NodePort") return true;
  return t == "LoadBalancer" && valueAt(svc, "/spec/allocateLoadBalancerNodePorts", true) != false;
}

// The clusterIP `svc` holds (not "None", not empty).
std::string heldIP(const json& svc) {
  if (typeOf(svc) == "ExternalName") return "";
  std::string ip = requestedIP(svc);
  return ip == "None" ? "" : ip;
}

std::set<int> heldNodePorts(const json& svc) {
  std::set<int> out;
  const json ports = valueAt(svc, "/spec/ports", json::array());
  if (!ports.is_array()) return out;
  for (const auto& p : ports) {
    if (p.is_object() && p.contains("nodePort") && p["nodePort"].is_number_integer() &&
        p["nodePort"].get<int>() != 0) {
      out.insert(p["nodePort"].get<int>());
    }
  }
  return out;
}

Status invalid(const json& svc, const std::string& field, const std::string& message) {
  return Status::Invalid("Service", nameOf(svc), {{"FieldValueInvalid", field, message}});
}

std::string goStringSlice(const std::string& ip) { return "[]string{\"" + ip + "\"}"; }

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

json ownerRecord(const json& svc) {
  return {{"namespace", api::stringAt(svc, "/metadata/namespace")},
          {"name", nameOf(svc)},
          {"uid", api::stringAt(svc, "/metadata/uid")},
          {"allocatedAt", nowSeconds()}};
}

}  // namespace

std::optional<uint32_t> parseIpv4(const std::string& ip) {
  in_addr a{};
  if (::inet_pton(AF_INET, ip.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string formatIpv4(uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
         std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
}

Result<Ipv4Range> Ipv4Range::parse(const std::string& cidr) {
  auto slash = cidr.find('/');
  if (slash == std::string::npos) return Status::BadRequest("not a CIDR: " + cidr);
  auto ip = parseIpv4(cidr.substr(0, slash));
  int prefix = -1;
  try {
    size_t used = 0;
    prefix = std::stoi(cidr.substr(slash + 1), &used);
    if (used != cidr.size() - slash - 1) prefix = -1;
  } catch (const std::exception&) {
    prefix = -1;
  }
  if (!ip || prefix < 0 || prefix > 32) {
    return Status::BadRequest("not an IPv4 CIDR: " + cidr +
                              " (IPv6 service ranges are not supported)");
  }
  Ipv4Range r;
  r.prefix = prefix;
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  r.base = *ip & mask;
  return r;
}

bool Ipv4Range::contains(uint32_t ip) const {
  return ip >= base && uint64_t{ip} < uint64_t{base} + size();
}

std::string Ipv4Range::at(uint64_t n) const { return formatIpv4(static_cast<uint32_t>(base + n)); }

std::string Ipv4Range::toString() const { return formatIpv4(base) + "/" + std::to_string(prefix); }

Result<std::unique_ptr<ServiceAllocator>> ServiceAllocator::create(
    storage::Store& store, ServiceAllocatorOptions options) {
  auto range = Ipv4Range::parse(options.clusterIPRange);
  if (!range.ok()) return range.status();
  if (range->size() < 16) {
    return Status::BadRequest("service cluster IP range " + options.clusterIPRange +
                              " is too small: it needs at least 16 addresses (/28)");
  }
  if (options.nodePortMin < 1 || options.nodePortMax > 65535 ||
      options.nodePortMin > options.nodePortMax) {
    return Status::BadRequest("invalid node port range");
  }
  return std::unique_ptr<ServiceAllocator>(new ServiceAllocator(store, std::move(options), *range));
}

ServiceAllocator::ServiceAllocator(storage::Store& store, ServiceAllocatorOptions options,
                                   Ipv4Range range)
    : store_(store), options_(std::move(options)), range_(range) {}

Status ServiceAllocator::take(const std::string& key, const json& svc) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto rev = store_.create(key, ownerRecord(svc).dump());
    if (rev.ok()) return Status::Ok();
    if (rev.status().code() != 409) return rev.status();
    auto kv = store_.get(key);
    if (!kv.ok()) {
      if (kv.status().code() == 404) continue;  // released meanwhile: try again
      return kv.status();
    }
    json owner = json::parse(kv->value, nullptr, false);
    const std::string uid = api::stringAt(svc, "/metadata/uid");
    if (owner.is_object() && !uid.empty() && owner.value("uid", "") == uid) return Status::Ok();
    return Status::AlreadyExists("serviceallocations", key);
  }
  return Status::AlreadyExists("serviceallocations", key);
}

void ServiceAllocator::giveBack(const std::string& key, const json& svc) {
  auto kv = store_.get(key);
  if (!kv.ok()) return;
  json owner = json::parse(kv->value, nullptr, false);
  // Only the owner gives a record back; a record of another Service is not ours to drop.
  if (!owner.is_object() || owner.value("uid", "") != api::stringAt(svc, "/metadata/uid")) {
    return;
  }
  auto del = store_.remove(key, kv->modRevision);
  if (!del.ok() && del.status().code() != 404) {
    LOG_WARN("releasing {} failed: {}", key, del.status().toString());
  }
}

Result<uint64_t> ServiceAllocator::allocateFrom(uint64_t lo, uint64_t dynamicLo, uint64_t hi,
                                                const std::string& prefix,
                                                const std::function<std::string(uint64_t)>& keyOf,
                                                const json& svc, const std::string& what) {
  std::random_device seed;
  std::mt19937_64 rng(seed());
  // Random picks in the dynamic band (explicit requests mostly use the low band, as in
  // Kubernetes): with a sparse range the first pick almost always wins.
  if (dynamicLo <= hi) {
    std::uniform_int_distribution<uint64_t> dist(dynamicLo, hi);
    for (int i = 0; i < kMaxRandomTries; ++i) {
      uint64_t v = dist(rng);
      Status s = take(prefix + keyOf(v), svc);
      if (s.ok()) return v;
      if (s.code() != 409) return s;
    }
  }
  // A crowded range: every free value, tried from a random start.
  auto records = store_.list(prefix);
  if (!records.ok()) return records.status();
  std::set<std::string> taken;
  for (const auto& kv : records->items) taken.insert(kv.key);
  std::vector<uint64_t> free;
  for (uint64_t v = lo; v <= hi; ++v) {
    if (!taken.count(prefix + keyOf(v))) free.push_back(v);
  }
  if (!free.empty()) {
    size_t start = std::uniform_int_distribution<size_t>(0, free.size() - 1)(rng);
    for (size_t i = 0; i < free.size(); ++i) {
      uint64_t v = free[(start + i) % free.size()];
      Status s = take(prefix + keyOf(v), svc);
      if (s.ok()) return v;
      if (s.code() != 409) return s;
    }
  }
  return Status::Internal("failed to allocate a " + what + ": range is full");
}

Result<std::string> ServiceAllocator::allocateIP(const json& svc) {
  // Offset 0 is the network address, the last one the broadcast address; 1 is the kubernetes
  // service and 10 cluster DNS: those two are taken only when asked for by name.
  const uint64_t hi = range_.size() - 2;
  const uint64_t band = std::min<uint64_t>(std::max<uint64_t>(16, range_.size() / 16), 256);
  auto keyOf = [this](uint64_t n) { return range_.at(n); };
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto n = allocateFrom(2, band, hi, kClusterIPPrefix, keyOf, svc, "cluster IP");
    if (!n.ok()) return n.status();
    if (*n != 10) return range_.at(*n);
    giveBack(kClusterIPPrefix + range_.at(*n), svc);
  }
  return Status::Internal("failed to allocate a cluster IP");
}

Result<int> ServiceAllocator::allocateNodePort(const json& svc) {
  const uint64_t lo = options_.nodePortMin, hi = options_.nodePortMax;
  const uint64_t band = lo + std::min<uint64_t>(std::max<uint64_t>(16, (hi - lo + 1) / 16), 128);
  auto n = allocateFrom(
      lo, band, hi, kNodePortPrefix, [](uint64_t v) { return std::to_string(v); }, svc,
      "node port");
  if (!n.ok()) return n.status();
  return static_cast<int>(*n);
}

namespace {

// Undoes the records one allocate call took unless it succeeded.
class Taken {
 public:
  explicit Taken(std::function<void(const std::string&)> giveBack)
      : giveBack_(std::move(giveBack)) {}
  ~Taken() {
    if (!committed_) {
      for (const auto& k : keys_) giveBack_(k);
    }
  }
  void add(std::string key) { keys_.push_back(std::move(key)); }
  void commit() { committed_ = true; }

 private:
  std::function<void(const std::string&)> giveBack_;
  std::vector<std::string> keys_;
  bool committed_ = false;
};

}  // namespace

Status ServiceAllocator::allocate(json& svc) { return allocateForUpdate(svc, json()); }

Status ServiceAllocator::allocateForUpdate(json& svc, const json& old) {
  if (!svc.is_object() || !svc.contains("spec") || !svc["spec"].is_object()) return Status::Ok();
  json& spec = svc["spec"];
  const bool isUpdate = old.is_object();
  Taken taken([this, &svc](const std::string& k) { giveBack(k, svc); });

  if (needsClusterIP(svc)) {
    const std::string oldIP = isUpdate ? heldIP(old) : std::string();
    std::string ip = requestedIP(svc);
    if (ip.empty() && !oldIP.empty()) ip = oldIP;
    if (ip.empty()) {
      auto got = allocateIP(svc);
      if (!got.ok()) return got.status();
      ip = *got;
      taken.add(kClusterIPPrefix + ip);
    } else if (ip != oldIP) {
      auto parsed = parseIpv4(ip);
      const uint64_t off = parsed ? uint64_t{*parsed} - range_.base : 0;
      if (!parsed || !range_.contains(*parsed) || off == 0 || off == range_.size() - 1) {
        return invalid(svc, "spec.clusterIPs",
                       "Invalid value: " + goStringSlice(ip) + ": failed to allocate IP " + ip +
                           ": the provided IP (" + ip +
                           ") is not in the valid range. The range of valid IPs is " +
                           range_.toString());
      }
      Status s = take(kClusterIPPrefix + ip, svc);
      if (s.code() == 409) {
        return invalid(svc, "spec.clusterIPs",
                       "Invalid value: " + goStringSlice(ip) + ": failed to allocate IP " + ip +
                           ": provided IP is already allocated");
      }
      if (!s.ok()) return s;
      taken.add(kClusterIPPrefix + ip);
    }
    spec["clusterIP"] = ip;
    spec["clusterIPs"] = json::array({ip});
  } else if (requestedIP(svc) == "None") {
    spec["clusterIP"] = "None";
    spec["clusterIPs"] = json::array({"None"});
  }

  if (spec.contains("ports") && spec["ports"].is_array()) {
    const std::set<int> oldPorts = isUpdate ? heldNodePorts(old) : std::set<int>();
    const bool wants = needsNodePorts(svc);
    json& ports = spec["ports"];
    for (size_t i = 0; i < ports.size(); ++i) {
      json& p = ports[i];
      if (!p.is_object()) continue;
      int nodePort = p.contains("nodePort") && p["nodePort"].is_number_integer()
                         ? p["nodePort"].get<int>()
                         : 0;
      if (!wants) {
        // A type changed to ClusterIP no longer holds node ports (Kubernetes drops them).
        if (isUpdate && nodePort != 0 && typeOf(svc) == "ClusterIP") p.erase("nodePort");
        continue;
      }
      if (nodePort == 0) {
        auto got = allocateNodePort(svc);
        if (!got.ok()) return got.status();
        p["nodePort"] = *got;
        taken.add(kNodePortPrefix + std::to_string(*got));
        continue;
      }
      if (oldPorts.count(nodePort)) continue;
      const std::string field = "spec.ports[" + std::to_string(i) + "].nodePort";
      if (nodePort < options_.nodePortMin || nodePort > options_.nodePortMax) {
        return invalid(svc, field,
                       "Invalid value: " + std::to_string(nodePort) +
                           ": provided port is not in the valid range. The range of valid ports "
                           "is " +
                           std::to_string(options_.nodePortMin) + "-" +
                           std::to_string(options_.nodePortMax));
      }
      Status s = take(kNodePortPrefix + std::to_string(nodePort), svc);
      if (s.code() == 409) {
        return invalid(
            svc, field,
            "Invalid value: " + std::to_string(nodePort) + ": provided port is already allocated");
      }
      if (!s.ok()) return s;
      taken.add(kNodePortPrefix + std::to_string(nodePort));
    }
  }
  taken.commit();
  return Status::Ok();
}

void ServiceAllocator::releaseNotIn(const json& svc, const json* keep) {
  const std::string ip = heldIP(svc);
  if (!ip.empty() && (!keep || heldIP(*keep) != ip)) giveBack(kClusterIPPrefix + ip, svc);
  const std::set<int> kept = keep ? heldNodePorts(*keep) : std::set<int>();
  for (int port : heldNodePorts(svc)) {
    if (!kept.count(port)) giveBack(kNodePortPrefix + std::to_string(port), svc);
  }
}

Status ServiceAllocator::repair(const std::vector<json>& services, int64_t now) {
  std::map<std::string, const json*> wanted;  // record key -> owning Service
  for (const auto& svc : services) {
    const std::string ip = heldIP(svc);
    if (!ip.empty()) wanted[kClusterIPPrefix + ip] = &svc;
    for (int port : heldNodePorts(svc)) wanted[kNodePortPrefix + std::to_string(port)] = &svc;
  }
  for (const char* prefix : {kClusterIPPrefix, kNodePortPrefix}) {
    auto records = store_.list(prefix);
    if (!records.ok()) return records.status();
    for (const auto& kv : records->items) {
      json owner = json::parse(kv.value, nullptr, false);
      auto it = wanted.find(kv.key);
      const bool ownedByIt = it != wanted.end() && owner.is_object() &&
                             owner.value("uid", "") == api::stringAt(*it->second, "/metadata/uid");
      if (ownedByIt) continue;
      if (it != wanted.end()) {
        // The Service holding this value is the truth: the record follows it.
        auto up = store_.update(kv.key, ownerRecord(*it->second).dump(), kv.modRevision);
        if (!up.ok()) LOG_WARN("repairing {} failed: {}", kv.key, up.status().toString());
        continue;
      }
      const int64_t at = owner.is_object() ? owner.value("allocatedAt", int64_t{0}) : 0;
      if (now - at < options_.repairGrace.count()) continue;
      LOG_INFO("releasing leaked service allocation {}", kv.key);
      auto del = store_.remove(kv.key, kv.modRevision);
      if (!del.ok() && del.status().code() != 404) {
        LOG_WARN("releasing {} failed: {}", kv.key, del.status().toString());
      }
    }
  }
  for (const auto& [key, svc] : wanted) {
    auto got = store_.get(key);
    if (got.ok()) continue;
    if (got.status().code() != 404) return got.status();
    LOG_WARN("service {}/{} holds {} without a record: recording it",
             api::stringAt(*svc, "/metadata/namespace"), nameOf(*svc), key);
    Status s = take(key, *svc);
    if (!s.ok()) LOG_WARN("recording {} failed: {}", key, s.toString());
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver
