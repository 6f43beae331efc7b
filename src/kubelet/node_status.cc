#include "kubelet/node_status.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/time_util.h"

namespace minik8s::kubelet {

namespace {

std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string conditionStatus(const json& node, const std::string& type) {
  if (!node.is_object()) return "";
  for (const auto& c : valueAt(node, "/status/conditions", json::array())) {
    if (c.is_object() && c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

// The reason of the kubelet's Event for a condition now in `status`.
std::string conditionEventReason(const std::string& type, const std::string& status) {
  const bool on = status == "True";
  if (type == "MemoryPressure") return on ? "NodeHasInsufficientMemory" : "NodeHasSufficientMemory";
  if (type == "DiskPressure") return on ? "NodeHasDiskPressure" : "NodeHasNoDiskPressure";
  if (type == "PIDPressure") return on ? "NodeHasInsufficientPID" : "NodeHasSufficientPID";
  if (type == "Ready") return on ? "NodeReady" : "NodeNotReady";
  return "";
}

}  // namespace

MachineInfo collectMachineInfo() {
  MachineInfo m;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpuCores = n > 0 ? n : 1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemTotal:") {
      m.memoryBytes = kb * 1024;
      break;
    }
  }
  m.machineID = readFirstLine("/etc/machine-id");
  m.systemUUID = readFirstLine("/sys/class/dmi/id/product_uuid");
  if (m.systemUUID.empty()) m.systemUUID = m.machineID;
  m.bootID = readFirstLine("/proc/sys/kernel/random/boot_id");
  utsname u{};
  if (::uname(&u) == 0) {
    m.kernelVersion = u.release;
    std::string machine = u.machine;
    m.architecture = machine == "x86_64" ? "amd64" : machine == "aarch64" ? "arm64" : machine;
  }
  std::ifstream os("/etc/os-release");
  std::string line;
  while (std::getline(os, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      m.osImage = line.substr(12);
      if (m.osImage.size() >= 2 && m.osImage.front() == '"')
        m.osImage = m.osImage.substr(1, m.osImage.size() - 2);
    }
  }
  return m;
}

NodeStatus::NodeStatus(client::RestClient& client, NodeStatusOptions options, MachineInfo machine)
    : client_(client), options_(std::move(options)), machine_(std::move(machine)) {}

json NodeStatus::buildNode(bool ready, const std::string& message, const std::string& now) const {
  json labels = {{"kubernetes.io/hostname", options_.nodeName},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", machine_.architecture},
                 {"beta.kubernetes.io/os", "linux"},
                 {"beta.kubernetes.io/arch", machine_.architecture}};
  for (const auto& [k, v] : options_.labels) labels[k] = v;
  const std::string memKi = std::to_string(machine_.memoryBytes / 1024) + "Ki";
  json capacity = {{"cpu", std::to_string(machine_.cpuCores)},
                   {"memory", memKi},
                   {"pods", std::to_string(options_.maxPods)}};
  for (const auto& [resource, quantity] : options_.capacityOverrides) capacity[resource] = quantity;
  json addresses = json::array();
  if (!options_.hostIP.empty())
    addresses.push_back({{"type", "InternalIP"}, {"address", options_.hostIP}});
  addresses.push_back({{"type", "Hostname"}, {"address", options_.nodeName}});
  auto cond = [&](const std::string& type, bool ok, const std::string& reason,
                  const std::string& msg, const std::string& since) {
    return json{{"type", type},   {"status", ok ? "True" : "False"}, {"reason", reason},
                {"message", msg}, {"lastHeartbeatTime", now},        {"lastTransitionTime", since}};
  };
  json conditions = json::array(
      {cond("MemoryPressure", false, "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available", now),
       cond("DiskPressure", false, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now),
       cond("PIDPressure", false, "KubeletHasSufficientPID", "kubelet has sufficient PID available",
            now),
       cond("Ready", ready, ready ? "KubeletReady" : "KubeletNotReady",
            ready ? "kubelet is posting ready status" : message,
            readySince_.empty() ? now : readySince_)});
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", options_.nodeName}, {"labels", labels}}},
               {"spec", json::object()},
               {"status",
                {{"capacity", capacity},
                 {"allocatable", capacity},
                 {"addresses", addresses},
                 {"conditions", conditions},
                 {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", options_.kubeletPort}}}}},
                 {"nodeInfo",
                  {{"machineID", machine_.machineID},
                   {"systemUUID", machine_.systemUUID},
                   {"bootID", machine_.bootID},
                   {"kernelVersion", machine_.kernelVersion},
                   {"osImage", machine_.osImage},
                   {"containerRuntimeVersion", options_.containerRuntimeVersion},
                   {"kubeletVersion", options_.kubeletVersion},
                   {"kubeProxyVersion", options_.kubeletVersion},
                   {"operatingSystem", "linux"},
                   {"architecture", machine_.architecture}}}}}};
  if (!options_.registerTaints.empty()) node["spec"]["taints"] = options_.registerTaints;
  if (!options_.podCIDR.empty()) {
    node["spec"]["podCIDR"] = options_.podCIDR;
    node["spec"]["podCIDRs"] = json::array({options_.podCIDR});
  }
  return node;
}

void NodeStatus::recordNodeEvent(const std::string& reason, const std::string& message) {
  if (!options_.events) return;
  // The kubelet names its node by name in both name and uid (kubectl describe node looks for
  // both the node's uid and its name).
  const json ref = {{"kind", "Node"},
                    {"apiVersion", "v1"},
                    {"metadata", {{"name", options_.nodeName}, {"uid", options_.nodeName}}}};
  options_.events->record(ref, "Normal", reason, message);
}

void NodeStatus::recordConditionChanges(const json& before, const json& after) {
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    const std::string now = conditionStatus(after, type);
    if (now.empty() || now == conditionStatus(before, type)) continue;
    const std::string reason = conditionEventReason(type, now);
    recordNodeEvent(reason, "Node " + options_.nodeName + " status is now: " + reason);
  }
}

Status NodeStatus::registerNode() {
  std::lock_guard lock(mu_);
  const std::string now = formatRfc3339(Clock::now());
  readySince_ = now;
  lastReady_ = true;
  json node = buildNode(true, "", now);
  auto created = client_.create(client::resources::kNodes, "", node);
  if (created.ok()) {
    LOG_INFO("node {} registered", options_.nodeName);
    recordConditionChanges(nullptr, node);
    return Status::Ok();
  }
  if (created.status().reason() != "AlreadyExists") return created.status();
  // Re-registration after a restart: keep what others set, refresh what we own.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto existing = client_.get(client::resources::kNodes, "", options_.nodeName);
    if (!existing.ok()) return existing.status();
    json updated = *existing;
    for (const auto& [k, v] : node["metadata"]["labels"].items())
      updated["metadata"]["labels"][k] = v;
    if (node["spec"].contains("podCIDR") && !updated["spec"].contains("podCIDR"))
      updated["spec"]["podCIDR"] = node["spec"]["podCIDR"];
    auto r = client_.update(client::resources::kNodes, updated);
    if (!r.ok() && r.status().reason() == "Conflict") continue;
    if (!r.ok()) return r.status();
    json withStatus = *r;
    withStatus["status"] = node["status"];
    auto s = client_.update(client::resources::kNodes, withStatus, "status");
    if (!s.ok() && s.status().reason() == "Conflict") continue;
    if (!s.ok()) return s.status();
    LOG_INFO("node {} re-registered", options_.nodeName);
    recordConditionChanges(*existing, node);
    return Status::Ok();
  }
  return Status::Conflict("nodes", options_.nodeName);
}

Status NodeStatus::updateStatus(bool ready, const std::string& message) {
  std::lock_guard lock(mu_);
  const std::string now = formatRfc3339(Clock::now());
  const bool readyChanged = ready != lastReady_;
  if (readyChanged) {
    readySince_ = now;
    lastReady_ = ready;
  }
  json node = buildNode(ready, message, now);
  // What the API shows now (the node lifecycle controller may have set Unknown): Events for what
  // this write changes. Without it (an error), only our own readiness change is told.
  json before = nullptr;
  if (options_.events) {
    auto current = client_.get(client::resources::kNodes, "", options_.nodeName);
    if (current.ok()) before = *current;
  }
  auto r = client_.patch(client::resources::kNodes, "", options_.nodeName,
                         {{"status",
                           {{"conditions", node["status"]["conditions"]},
                            {"nodeInfo", node["status"]["nodeInfo"]},
                            {"addresses", node["status"]["addresses"]}}}},
                         "strategic", "status");
  if (!r.ok()) return r.status();
  if (options_.events && !before.is_null()) {
    recordConditionChanges(before, node);
  } else if (options_.events && readyChanged) {
    const std::string reason = ready ? "NodeReady" : "NodeNotReady";
    recordNodeEvent(reason, "Node " + options_.nodeName + " status is now: " + reason);
  }
  return Status::Ok();
}

Status NodeStatus::renewLease() {
  std::lock_guard lock(mu_);
  const std::string now = formatRfc3339Micro(Clock::now());
  auto existing = client_.get(client::resources::kLeases, "kube-node-lease", options_.nodeName);
  if (!existing.ok() && existing.status().code() != 404) return existing.status();
  if (!existing.ok()) {
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options_.nodeName}, {"namespace", "kube-node-lease"}}},
                  {"spec",
                   {{"holderIdentity", options_.nodeName},
                    {"leaseDurationSeconds", 40},
                    {"renewTime", now}}}};
    auto r = client_.create(client::resources::kLeases, "kube-node-lease", lease);
    if (!r.ok() && r.status().code() == 404) {
      // The namespace does not exist yet (a fresh cluster): create it, then the lease.
      client_.create(client::resources::kNamespaces, "",
                     {{"apiVersion", "v1"},
                      {"kind", "Namespace"},
                      {"metadata", {{"name", "kube-node-lease"}}}});
      r = client_.create(client::resources::kLeases, "kube-node-lease", lease);
    }
    return r.ok() ? Status::Ok() : r.status();
  }
  json lease = *existing;
  lease["spec"]["holderIdentity"] = options_.nodeName;
  lease["spec"]["leaseDurationSeconds"] = 40;
  lease["spec"]["renewTime"] = now;
  auto r = client_.update(client::resources::kLeases, lease);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace minik8s::kubelet
