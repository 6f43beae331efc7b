#include "scheduler/node_info.h"

#include <algorithm>

#include "api/object_meta.h"
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

const json& emptyArray() {
  static const json kEmpty = json::array();
  return kEmpty;
}

// obj[key] in place when it is an object (an array), else an empty one: the pod is read where
// it lies, not copied a subtree at a time.
const json& objectAt(const json& obj, const char* key) {
  const json& v = api::member(obj, key);
  return v.is_object() ? v : emptyObject();
}
const json& arrayAt(const json& obj, const char* key) {
  const json& v = api::member(obj, key);
  return v.is_array() ? v : emptyArray();
}

// A container's requests; a limit without a request counts as the request, as defaulting does.
// Says whether cpu and memory were requested that way, for the scoring defaults.
Resources containerRequests(const json& container, bool& hasCpu, bool& hasMemory) {
  const json& resources = objectAt(container, "resources");
  const json& requests = objectAt(resources, "requests");
  const json& limits = objectAt(resources, "limits");
  if (limits.empty()) {
    hasCpu = requests.contains("cpu");
    hasMemory = requests.contains("memory");
    return fromResourceList(requests);
  }
  json merged = requests;
  for (const auto& [name, v] : limits.items()) {
    if (!merged.contains(name)) merged[name] = v;
  }
  hasCpu = merged.contains("cpu");
  hasMemory = merged.contains("memory");
  return fromResourceList(merged);
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

PodInfo makePodInfo(json pod) { return makePodInfo(std::make_shared<const json>(std::move(pod))); }

PodInfo makePodInfo(std::shared_ptr<const json> podObject) {
  PodInfo info;
  const json& pod = podObject ? *podObject : emptyObject();
  const json& meta = objectAt(pod, "metadata");
  info.ns = api::stringMember(meta, "namespace");
  info.name = api::stringMember(meta, "name");
  info.uid = api::stringMember(meta, "uid");
  info.key = info.ns.empty() ? info.name : info.ns + "/" + info.name;
  for (const auto& ref : arrayAt(meta, "ownerReferences")) {
    if (ref.is_object() && ref.value("controller", false)) info.ownerUid = ref.value("uid", "");
  }
  const json& spec = objectAt(pod, "spec");
  info.nodeName = api::stringMember(spec, "nodeName");

  Resources sum, sumNonZero;
  for (const auto& c : arrayAt(spec, "containers")) {
    bool hasCpu = false, hasMemory = false;
    Resources r = containerRequests(c, hasCpu, hasMemory);
    sum.add(r);
    Resources nz = r;
    if (!hasCpu) nz.milliCpu = kDefaultMilliCpuRequest;
    if (!hasMemory) nz.memory = kDefaultMemoryRequest;
    sumNonZero.add(nz);
    for (const auto& p : arrayAt(c, "ports")) {
      if (!p.is_object()) continue;
      int32_t hostPort = p.value("hostPort", 0);
      if (hostPort <= 0) continue;
      std::string ip = p.value("hostIP", "");
      info.hostPorts.push_back({p.value("protocol", "TCP"), ip.empty() ? "0.0.0.0" : ip, hostPort});
    }
  }
  for (const auto& c : arrayAt(spec, "initContainers")) {
    bool hasCpu = false, hasMemory = false;
    Resources r = containerRequests(c, hasCpu, hasMemory);
    maxInto(sum, r);
    maxInto(sumNonZero, r);
  }
  Resources overhead = fromResourceList(objectAt(spec, "overhead"));
  sum.add(overhead);
  sumNonZero.add(overhead);
  sum.pods = sumNonZero.pods = 1;
  info.requests = std::move(sum);
  info.nonZeroRequests = std::move(sumNonZero);
  const json& anti = arrayAt(objectAt(objectAt(spec, "affinity"), "podAntiAffinity"),
                             "requiredDuringSchedulingIgnoredDuringExecution");
  info.hasRequiredAntiAffinity = !anti.empty();
  info.claimNames = api::podClaimNames(pod);
  info.pod = std::move(podObject);
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
