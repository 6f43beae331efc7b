#include "scheduler/node_info.h"

#include <algorithm>

#include "api/persistent_volumes.h"
#include "api/quantity.h"
#include "common/json_pointer.h"

namespace minik8s::scheduler {

namespace {

const json& emptyObject() {
  static const json kEmpty = json::object();
  return kEmpty;
}

int64_t quantityMilli(const json& v) {
  auto q = api::Quantity::fromJson(v);
  return q.ok() ? q->milliValue() : 0;
}

int64_t quantityValue(const json& v) {
  auto q = api::Quantity::fromJson(v);
  return q.ok() ? q->value() : 0;
}

// A resource list ({"cpu": "500m", "memory": "1Gi", ...}) as Resources.
Resources fromResourceList(const json& list) {
  Resources r;
  if (!list.is_object()) return r;
  for (const auto& [name, v] : list.items()) {
    if (name == "cpu") {
      r.milliCpu = quantityMilli(v);
    } else if (name == "memory") {
      r.memory = quantityValue(v);
    } else if (name == "ephemeral-storage") {
      r.ephemeralStorage = quantityValue(v);
    } else if (name == "pods") {
      r.pods = quantityValue(v);
    } else {
      r.scalar[name] = quantityValue(v);
    }
  }
  return r;
}

// A container's requests; a limit without a request counts as the request, as defaulting does.
json containerRequests(const json& container) {
  json requests = valueAt(container, "/resources/requests", json::object());
  const json limits = valueAt(container, "/resources/limits", json::object());
  if (!requests.is_object()) requests = json::object();
  if (limits.is_object()) {
    for (const auto& [name, v] : limits.items()) {
      if (!requests.contains(name)) requests[name] = v;
    }
  }
  return requests;
}

void maxInto(Resources& into, const Resources& r) {
  into.milliCpu = std::max(into.milliCpu, r.milliCpu);
  into.memory = std::max(into.memory, r.memory);
  into.ephemeralStorage = std::max(into.ephemeralStorage, r.ephemeralStorage);
  for (const auto& [k, v] : r.scalar) into.scalar[k] = std::max(into.scalar[k], v);
}

}  // namespace

void Resources::add(const Resources& other) {
  milliCpu += other.milliCpu;
  memory += other.memory;
  ephemeralStorage += other.ephemeralStorage;
  pods += other.pods;
  for (const auto& [k, v] : other.scalar) scalar[k] += v;
}

void Resources::subtract(const Resources& other) {
  milliCpu -= other.milliCpu;
  memory -= other.memory;
  ephemeralStorage -= other.ephemeralStorage;
  pods -= other.pods;
  for (const auto& [k, v] : other.scalar) scalar[k] -= v;
}

const json& PodInfo::labels() const {
  if (!pod) return emptyObject();
  auto it = pod->find("metadata");
  if (it == pod->end()) return emptyObject();
  auto l = it->find("labels");
  return l != it->end() && l->is_object() ? *l : emptyObject();
}

PodInfo makePodInfo(json pod) {
  PodInfo info;
  const json& meta = pod.value("metadata", emptyObject());
  info.ns = meta.value("namespace", "");
  info.name = meta.value("name", "");
  info.uid = meta.value("uid", "");
  info.key = info.ns.empty() ? info.name : info.ns + "/" + info.name;
  for (const auto& ref : meta.value("ownerReferences", json::array())) {
    if (ref.is_object() && ref.value("controller", false)) info.ownerUid = ref.value("uid", "");
  }
  const json& spec = pod.value("spec", emptyObject());
  info.nodeName = spec.value("nodeName", "");

  Resources sum, sumNonZero;
  for (const auto& c : spec.value("containers", json::array())) {
    Resources r = fromResourceList(containerRequests(c));
    sum.add(r);
    Resources nz = r;
    const json req = containerRequests(c);
    if (!req.contains("cpu")) nz.milliCpu = kDefaultMilliCpuRequest;
    if (!req.contains("memory")) nz.memory = kDefaultMemoryRequest;
    sumNonZero.add(nz);
    for (const auto& p : c.value("ports", json::array())) {
      int32_t hostPort = p.value("hostPort", 0);
      if (hostPort <= 0) continue;
      std::string ip = p.value("hostIP", "");
      info.hostPorts.push_back({p.value("protocol", "TCP"), ip.empty() ? "0.0.0.0" : ip, hostPort});
    }
  }
  for (const auto& c : spec.value("initContainers", json::array())) {
    Resources r = fromResourceList(containerRequests(c));
    maxInto(sum, r);
    maxInto(sumNonZero, r);
  }
  Resources overhead = fromResourceList(spec.value("overhead", json::object()));
  sum.add(overhead);
  sumNonZero.add(overhead);
  sum.pods = sumNonZero.pods = 1;
  info.requests = std::move(sum);
  info.nonZeroRequests = std::move(sumNonZero);
  const json anti = pod.value(
      "/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution"_json_pointer,
      json::array());
  info.hasRequiredAntiAffinity = anti.is_array() && !anti.empty();
  info.claimNames = api::podClaimNames(pod);
  info.pod = std::make_shared<const json>(std::move(pod));
  return info;
}

Resources allocatableOf(const json& node) {
  const json status = node.value("status", json::object());
  Resources capacity = fromResourceList(status.value("capacity", json::object()));
  Resources alloc = fromResourceList(status.value("allocatable", json::object()));
  const json allocList = status.value("allocatable", json::object());
  const json capList = status.value("capacity", json::object());
  auto missing = [&](const char* name) {
    return !(allocList.is_object() && allocList.contains(name)) && capList.is_object() &&
           capList.contains(name);
  };
  if (missing("cpu")) alloc.milliCpu = capacity.milliCpu;
  if (missing("memory")) alloc.memory = capacity.memory;
  if (missing("ephemeral-storage")) alloc.ephemeralStorage = capacity.ephemeralStorage;
  if (missing("pods")) alloc.pods = capacity.pods;
  for (const auto& [k, v] : capacity.scalar) alloc.scalar.try_emplace(k, v);
  return alloc;
}

NodeInfo::NodeInfo(json node) { setNode(std::move(node)); }

void NodeInfo::setNode(json node) {
  name_ = valueAt(node, "/metadata/name", std::string());
  allocatable_ = allocatableOf(node);
  ready_ = false;
  const json* conditions = &emptyObject();
  if (auto st = node.find("status"); st != node.end() && st->is_object()) {
    if (auto c = st->find("conditions"); c != st->end()) conditions = &*c;
  }
  if (conditions->is_array()) {
    for (const auto& c : *conditions) {
      if (c.is_object() && c.value("type", "") == "Ready") ready_ = c.value("status", "") == "True";
    }
  }
  node_ = std::make_shared<const json>(std::move(node));
}

int NodeInfo::podsOfOwner(const std::string& ownerUid) const {
  auto it = ownerCounts_.find(ownerUid);
  return it == ownerCounts_.end() ? 0 : it->second;
}

void NodeInfo::addPod(const PodInfo& pod) {
  removePod(pod.key);
  requested_.add(pod.requests);
  nonZeroRequested_.add(pod.nonZeroRequests);
  for (const auto& p : pod.hostPorts) usedPorts_.insert(p);
  if (!pod.ownerUid.empty()) ++ownerCounts_[pod.ownerUid];
  if (pod.hasRequiredAntiAffinity) antiAffinityPods_.insert(pod.key);
  pods_[pod.key] = pod;
}

bool NodeInfo::removePod(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return false;
  const PodInfo& pod = it->second;
  requested_.subtract(pod.requests);
  nonZeroRequested_.subtract(pod.nonZeroRequests);
  for (const auto& p : pod.hostPorts) {
    auto u = usedPorts_.find(p);
    if (u != usedPorts_.end()) usedPorts_.erase(u);
  }
  if (!pod.ownerUid.empty() && --ownerCounts_[pod.ownerUid] <= 0) ownerCounts_.erase(pod.ownerUid);
  antiAffinityPods_.erase(key);
  pods_.erase(it);
  return true;
}

}  // namespace minik8s::scheduler
