// core/v1: the registrations of the core group's resources, in the order kubectl lists them,
// with their Table printers and their create/update strategies.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/defaulting.h"
#include "api/printers/pod_cells.h"
#include "api/printers/quota_cells.h"
#include "api/printers/storage_cells.h"
#include "api/resources/builders.h"
#include "api/strategy.h"
#include "api/validation/kinds.h"
#include "common/base64.h"
#include "common/strings.h"

namespace minik8s::api::resources {
namespace {

using printers::limitRangeCells;
using printers::persistentVolumeCells;
using printers::persistentVolumeClaimCells;
using printers::podCells;
using printers::resourceQuotaCells;

// Secret.stringData is a write-only convenience: it is merged into data (base64) and dropped.
void mergeStringData(json& secret) {
  if (!secret.contains("stringData")) return;
  const json sd = secret["stringData"];
  secret.erase("stringData");
  if (!sd.is_object()) return;
  if (!secret.contains("data") || !secret["data"].is_object()) secret["data"] = json::object();
  for (auto it = sd.begin(); it != sd.end(); ++it) {
    if (!it.value().is_string()) continue;
    secret["data"][it.key()] = base64::encode(it.value().get_ref<const std::string&>());
  }
}

// A Service update that leaves out what the server allocated keeps it (kubectl replace with a
// manifest that never had a clusterIP must not drop the service's address).
void keepAllocatedServiceFields(json& svc, const json& old) {
  json& spec = svc["spec"];
  if (!spec.is_object() || !old.contains("spec")) return;
  const json& oldSpec = old["spec"];
  for (const char* f : {"clusterIP", "clusterIPs"}) {
    if ((!spec.contains(f) || spec[f].is_null() || spec[f] == "") && oldSpec.contains(f)) {
      spec[f] = oldSpec[f];
    }
  }
  if (!spec.contains("ports") || !spec["ports"].is_array() || !oldSpec.contains("ports")) return;
  for (auto& port : spec["ports"]) {
    if (!port.is_object() || port.contains("nodePort")) continue;
    for (const auto& op : oldSpec["ports"]) {
      if (op.is_object() && op.value("port", -1) == port.value("port", -2) &&
          op.value("protocol", "TCP") == port.value("protocol", "TCP") && op.contains("nodePort")) {
        port["nodePort"] = op["nodePort"];
      }
    }
  }
}

void prepareSecretForCreate(json& obj) {
  if (obj.contains("spec")) strategy::dropNullTimestamps(obj["spec"]);
  mergeStringData(obj);
}
void prepareSecretForUpdate(json& obj, const json&) { mergeStringData(obj); }

void preparePodForCreate(json& obj) {
  if (obj.contains("spec")) strategy::dropNullTimestamps(obj["spec"]);
  obj["status"] = {{"phase", "Pending"}, {"qosClass", strategy::podQosClass(obj)}};
}

// A namespace starts Active with the "kubernetes" finalizer (the namespace controller's).
void prepareNamespaceForCreate(json& obj) {
  if (obj.contains("spec")) strategy::dropNullTimestamps(obj["spec"]);
  obj["status"] = {{"phase", "Active"}};
  if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
  obj["spec"]["finalizers"] = json::array({"kubernetes"});
}
// Only the finalize subresource changes a namespace's spec.
void prepareNamespaceForUpdate(json& obj, const json& old) {
  if (old.contains("spec")) obj["spec"] = old["spec"];
}

void prepareServiceForCreate(json& obj) {
  if (obj.contains("spec")) strategy::dropNullTimestamps(obj["spec"]);
  obj["status"] = {{"loadBalancer", json::object()}};
}
void prepareServiceForUpdate(json& obj, const json& old) { keepAllocatedServiceFields(obj, old); }

// The node agent registers its node with a status: keep it.
void prepareNodeForCreate(json& obj) {
  if (obj.contains("spec")) strategy::dropNullTimestamps(obj["spec"]);
}

std::string hostPort(const std::string& ip, int64_t port) {
  bool v6 = ip.find(':') != std::string::npos;
  return (v6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

std::string servicePorts(const json& spec) {
  std::string out;
  for (const auto& p : array(spec, "ports")) {
    std::string piece = std::to_string(integer(p, "port"));
    if (integer(p, "nodePort") > 0) piece += ":" + std::to_string(integer(p, "nodePort"));
    piece += "/" + str(p, "protocol", "TCP");
    out += (out.empty() ? "" : ",") + piece;
  }
  return out;
}

std::string serviceExternalIP(const json& spec, const json& status) {
  std::vector<std::string> external;
  for (const auto& ip : array(spec, "externalIPs")) {
    if (ip.is_string()) external.push_back(ip.get<std::string>());
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
    return out;
  };
  std::string type = str(spec, "type", "ClusterIP");
  if (type == "ClusterIP" || type == "NodePort")
    return external.empty() ? "<none>" : join(external);
  if (type == "LoadBalancer") {
    std::set<std::string> lb;  // sorted and unique, as upstream's string set
    for (const auto& in : array(object(status, "loadBalancer"), "ingress")) {
      std::string ip = str(in, "ip");
      if (!ip.empty()) {
        lb.insert(ip);
      } else if (!str(in, "hostname").empty()) {
        lb.insert(str(in, "hostname"));
      }
    }
    std::vector<std::string> all(lb.begin(), lb.end());
    all.insert(all.end(), external.begin(), external.end());
    return all.empty() ? "<pending>" : join(all);
  }
  if (type == "ExternalName") return str(spec, "externalName");
  return "<unknown>";
}

json serviceCells(const json& obj, const json& meta, TimePoint now) {
  const json& spec = object(obj, "spec");
  std::string clusterIP;
  const json& clusterIPs = array(spec, "clusterIPs");
  if (!clusterIPs.empty() && clusterIPs[0].is_string()) clusterIP = clusterIPs[0];
  if (clusterIP.empty()) clusterIP = str(spec, "clusterIP");
  return json::array({str(meta, "name"), str(spec, "type", "ClusterIP"), orNone(clusterIP),
                      serviceExternalIP(spec, object(obj, "status")), orNone(servicePorts(spec)),
                      age(meta, now), labelsString(object(spec, "selector"))});
}

json endpointsCells(const json& obj, const json& meta, TimePoint now) {
  const json& subsets = array(obj, "subsets");
  std::string endpoints;
  if (subsets.empty()) {
    endpoints = "<none>";
  } else {
    std::vector<std::string> list;
    size_t count = 0;
    for (const auto& ss : subsets) {
      const json& addresses = array(ss, "addresses");
      const json& ports = array(ss, "ports");
      if (ports.empty()) {  // headless services without ports list bare IPs
        for (const auto& a : addresses) list.push_back(str(a, "ip"));
        count += addresses.size();
        continue;
      }
      for (const auto& p : ports) {
        for (const auto& a : addresses) list.push_back(hostPort(str(a, "ip"), integer(p, "port")));
        count += addresses.size();
      }
    }
    endpoints = listWithMore(list, count, 3);
  }
  return json::array({str(meta, "name"), endpoints, age(meta, now)});
}

json nodeCells(const json& obj, const json& meta, TimePoint now) {
  const json& status = object(obj, "status");
  std::string state;
  for (const auto& c : array(status, "conditions")) {
    if (str(c, "type") == "Ready") {
      state = str(c, "status") == "True" ? "Ready" : "NotReady";
      break;
    }
  }
  if (state.empty()) state = "Unknown";
  if (boolean(object(obj, "spec"), "unschedulable")) state += ",SchedulingDisabled";

  std::set<std::string> roles;
  for (const auto& [k, v] : object(meta, "labels").items()) {
    static constexpr std::string_view kRolePrefix = "node-role.kubernetes.io/";
    if (k.starts_with(kRolePrefix) && k.size() > kRolePrefix.size()) {
      roles.insert(k.substr(kRolePrefix.size()));
    } else if (k == "kubernetes.io/role" && v.is_string() && !v.get<std::string>().empty()) {
      roles.insert(v.get<std::string>());
    }
  }
  std::string rolesCell;
  for (const auto& r : roles) rolesCell += (rolesCell.empty() ? "" : ",") + r;

  auto address = [&](std::string_view type) {
    for (const auto& a : array(status, "addresses")) {
      if (str(a, "type") == type) return str(a, "address");
    }
    return std::string("<none>");
  };
  const json& info = object(status, "nodeInfo");
  auto unknown = [](std::string s) { return s.empty() ? std::string("<unknown>") : s; };
  return json::array({str(meta, "name"), state, orNone(rolesCell), age(meta, now),
                      str(info, "kubeletVersion"), address("InternalIP"), address("ExternalIP"),
                      unknown(str(info, "osImage")), unknown(str(info, "kernelVersion")),
                      unknown(str(info, "containerRuntimeVersion"))});
}

json eventCells(const json& obj, const json& meta, TimePoint now) {
  std::string first = obj.contains("firstTimestamp") && parseTime(obj["firstTimestamp"])
                          ? since(obj["firstTimestamp"], now)
                          : since(obj.value("eventTime", json()), now);
  std::string last = obj.contains("lastTimestamp") && parseTime(obj["lastTimestamp"])
                         ? since(obj["lastTimestamp"], now)
                         : first;
  int64_t count = integer(obj, "count");
  const json& series = object(obj, "series");
  if (obj.contains("series") && obj["series"].is_object()) {
    last = since(series.value("lastObservedTime", json()), now);
    count = integer(series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the events.k8s.io API carry no count
  }
  const json& involved = object(obj, "involvedObject");
  const std::string kind = asciiLower(str(involved, "kind"));
  std::string target = str(involved, "name").empty() ? kind : kind + "/" + str(involved, "name");
  const json& source = object(obj, "source");
  std::string component = str(source, "component");
  if (component.empty()) component = str(obj, "reportingComponent");
  std::string host = str(source, "host");
  if (host.empty()) host = str(obj, "reportingInstance");
  std::string message = str(obj, "message");
  auto notSpace = [](unsigned char c) { return !std::isspace(c); };
  message.erase(message.begin(), std::find_if(message.begin(), message.end(), notSpace));
  message.erase(std::find_if(message.rbegin(), message.rend(), notSpace).base(), message.end());
  return json::array({last, str(obj, "type"), str(obj, "reason"), target,
                      str(involved, "fieldPath"),
                      host.empty() ? component : component + ", " + host, message, first, count,
                      str(meta, "name")});
}

ResourceType binding() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Binding", "bindings", "binding");
  r.verbs = {"create"};
  return t;
}

ResourceType configMap() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "ConfigMap", "configmaps", "configmap");
  r.shortNames = {"cm"};
  t.validate = validation::validateConfigMap;
  t.columns = {nameColumn(), col("Data", "Number of data entries."), ageColumn()};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    int64_t n = static_cast<int64_t>(object(obj, "data").size() + object(obj, "binaryData").size());
    return json::array({str(meta, "name"), n, age(meta, now)});
  };
  return t;
}

ResourceType endpoints() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Endpoints", "endpoints", "endpoints");
  r.shortNames = {"ep"};
  t.defaults = defaulting::endpoints;
  t.validate = validation::validateEndpoints;
  t.columns = {nameColumn(), col("Endpoints", "The addresses and ports of the service."),
               ageColumn()};
  t.cells = endpointsCells;
  return t;
}

ResourceType event() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Event", "events", "event");
  r.shortNames = {"ev"};
  t.validate = validation::validateEvent;
  t.columns = {col("Last Seen", "Time at which the most recent occurrence was recorded."),
               col("Type", "Type of this event (Normal, Warning)."),
               col("Reason", "Short, machine understandable reason for the event."),
               col("Object", "The object this event is about."),
               wide("Subobject", "The field of the object this event is about."),
               wide("Source", "The component reporting this event."),
               col("Message", "A human-readable description of the event."),
               wide("First Seen", "Time at which the event was first recorded."),
               wide("Count", "The number of times this event has occurred."),
               {"Name", "string", "name", kNameDoc, 1}};
  t.cells = eventCells;
  return t;
}

ResourceType limitRange() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "LimitRange", "limitranges", "limitrange");
  r.shortNames = {"limits"};
  t.defaults = defaulting::limitRange;
  t.validate = validation::validateLimitRange;
  t.columns = {nameColumn(), col("Created At", "Time the object was created.", "date")};
  t.cells = [](const json& obj, const json&, TimePoint) { return limitRangeCells(obj); };
  return t;
}

ResourceType namespaceResource() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Namespace", "namespaces", "namespace");
  r.namespaced = false;
  r.verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  r.shortNames = {"ns"};
  r.subresources = {SubresourceInfo{"finalize", "", "v1", "Namespace", {"update"}}, statusOf(r)};
  t.defaults = defaulting::namespaceObject;
  t.validate = validation::validateNamespace;
  t.columns = {nameColumn(), col("Status", "The status of the namespace"), ageColumn()};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    return json::array({str(meta, "name"), str(object(obj, "status"), "phase"), age(meta, now)});
  };
  t.prepareForCreate = prepareNamespaceForCreate;
  t.prepareForUpdate = prepareNamespaceForUpdate;
  return t;
}

ResourceType node() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Node", "nodes", "node");
  r.namespaced = false;
  r.shortNames = {"no"};
  r.subresources = {
      SubresourceInfo{
          "proxy", "", "v1", "NodeProxyOptions", {"create", "delete", "get", "patch", "update"}},
      statusOf(r)};
  t.defaults = defaulting::node;
  t.validate = validation::validateNode;
  t.columns = {nameColumn(),
               col("Status", "The status of the node"),
               col("Roles", "The roles of the node"),
               ageColumn(),
               col("Version", "Kubelet version reported by the node."),
               wide("Internal-IP", "Internal address of the node."),
               wide("External-IP", "External address of the node."),
               wide("OS-Image", "OS image reported by the node."),
               wide("Kernel-Version", "Kernel version reported by the node."),
               wide("Container-Runtime", "Container runtime version reported by the node.")};
  t.cells = nodeCells;
  t.prepareForCreate = prepareNodeForCreate;
  return t;
}

ResourceType persistentVolumeClaim() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
               "persistentvolumeclaim");
  r.shortNames = {"pvc"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::persistentVolumeClaim;
  t.validate = validation::validatePersistentVolumeClaim;
  t.columns = {nameColumn(),
               col("Status", "Phase of the claim."),
               col("Volume", "The volume bound to the claim."),
               col("Capacity", "Capacity of the bound volume."),
               col("Access Modes", "Access modes of the bound volume."),
               col("StorageClass", "StorageClass of the pvc"),
               col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
               ageColumn(),
               wide("VolumeMode", "Filesystem or Block.")};
  t.cells = [](const json& obj, const json&, TimePoint now) {
    return persistentVolumeClaimCells(obj, now);
  };
  return t;
}

ResourceType persistentVolume() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "PersistentVolume", "persistentvolumes", "persistentvolume");
  r.namespaced = false;
  r.shortNames = {"pv"};
  r.subresources = {statusOf(r)};
  t.defaults = defaulting::persistentVolume;
  t.validate = validation::validatePersistentVolume;
  t.columns = {nameColumn(),
               col("Capacity", "Capacity of the volume (storage)."),
               col("Access Modes", "Ways the volume can be mounted."),
               col("Reclaim Policy", "What happens to the volume when released from its claim."),
               col("Status", "Phase of the volume."),
               col("Claim", "The claim bound to the volume (namespace/name)."),
               col("StorageClass", "StorageClass of the pv"),
               col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
               col("Reason", "Brief reason of the volume's phase."),
               ageColumn(),
               wide("VolumeMode", "Filesystem or Block.")};
  t.cells = [](const json& obj, const json&, TimePoint now) {
    return persistentVolumeCells(obj, now);
  };
  return t;
}

ResourceType pod() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Pod", "pods", "pod");
  r.shortNames = {"po"};
  r.categories = {"all"};
  r.subresources = {
      SubresourceInfo{"attach", "", "v1", "PodAttachOptions", {"create", "get"}},
      SubresourceInfo{"binding", "", "v1", "Binding", {"create"}},
      SubresourceInfo{"ephemeralcontainers", "", "v1", "Pod", kStatusVerbs},
      SubresourceInfo{"eviction", "policy", "v1", "Eviction", {"create"}},
      SubresourceInfo{"exec", "", "v1", "PodExecOptions", {"create", "get"}},
      SubresourceInfo{"log", "", "v1", "Pod", {"get"}},
      SubresourceInfo{"portforward", "", "v1", "PodPortForwardOptions", {"create", "get"}},
      statusOf(r)};
  t.defaults = defaulting::pod;
  t.validate = validation::validatePod;
  t.columns = {nameColumn(),
               col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
               col("Status", "The aggregate status of the containers in this pod."),
               col("Restarts",
                   "The number of times the containers in this pod have been restarted and when "
                   "the last container in this pod has restarted."),
               ageColumn(),
               wide("IP", "IP address allocated to the pod."),
               wide("Node", "The node the pod is bound to."),
               wide("Nominated Node", "The node the scheduler nominated for preemption."),
               wide("Readiness Gates", "Pod conditions evaluated for readiness.")};
  t.cells = [](const json& obj, const json&, TimePoint now) { return podCells(obj, now); };
  t.prepareForCreate = preparePodForCreate;
  return t;
}

ResourceType resourceQuota() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "ResourceQuota", "resourcequotas", "resourcequota");
  r.shortNames = {"quota"};
  r.subresources = {statusOf(r)};
  t.validate = validation::validateResourceQuota;
  t.columns = {nameColumn(), ageColumn(), col("Request", "Requested resources and their use."),
               col("Limit", "Resource limits and their use.")};
  t.cells = [](const json& obj, const json&, TimePoint now) {
    return resourceQuotaCells(obj, now);
  };
  return t;
}

ResourceType secret() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Secret", "secrets", "secret");
  t.defaults = defaulting::secret;
  t.validate = validation::validateSecret;
  t.columns = {nameColumn(),
               col("Type", "Used to facilitate programmatic handling of secret data."),
               col("Data", "Number of data entries."), ageColumn()};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    std::set<std::string> keys;  // stringData merges into data on write
    for (const auto& [k, v] : object(obj, "data").items()) keys.insert(k);
    for (const auto& [k, v] : object(obj, "stringData").items()) keys.insert(k);
    return json::array({str(meta, "name"), str(obj, "type", "Opaque"),
                        static_cast<int64_t>(keys.size()), age(meta, now)});
  };
  t.prepareForCreate = prepareSecretForCreate;
  t.prepareForUpdate = prepareSecretForUpdate;
  return t;
}

ResourceType serviceAccount() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount");
  r.shortNames = {"sa"};
  r.subresources = {
      SubresourceInfo{"token", "authentication.k8s.io", "v1", "TokenRequest", {"create"}}};
  t.columns = {nameColumn(), col("Secrets", "Secrets of the service account."), ageColumn()};
  t.cells = [](const json& obj, const json& meta, TimePoint now) {
    return json::array(
        {str(meta, "name"), static_cast<int64_t>(array(obj, "secrets").size()), age(meta, now)});
  };
  return t;
}

ResourceType service() {
  ResourceType t;
  ResourceInfo& r = t.info;
  r = resource("", "v1", "Service", "services", "service");
  r.shortNames = {"svc"};
  r.categories = {"all"};
  r.subresources = {
      SubresourceInfo{
          "proxy", "", "v1", "ServiceProxyOptions", {"create", "delete", "get", "patch", "update"}},
      statusOf(r)};
  t.defaults = defaulting::service;
  t.validate = validation::validateService;
  t.columns = {nameColumn(),
               col("Type", "How the service is exposed."),
               col("Cluster-IP", "The virtual IP of the service."),
               col("External-IP", "External addresses of the service."),
               col("Port(s)", "The ports exposed by the service."),
               ageColumn(),
               wide("Selector", "Route traffic to pods with labels matching this selector.")};
  t.cells = serviceCells;
  t.prepareForCreate = prepareServiceForCreate;
  t.prepareForUpdate = prepareServiceForUpdate;
  return t;
}

}  // namespace

void addCoreResources(std::vector<ResourceType>& out) {
  out.push_back(binding());
  out.push_back(configMap());
  out.push_back(endpoints());
  out.push_back(event());
  out.push_back(limitRange());
  out.push_back(namespaceResource());
  out.push_back(node());
  out.push_back(persistentVolumeClaim());
  out.push_back(persistentVolume());
  out.push_back(pod());
  out.push_back(resourceQuota());
  out.push_back(secret());
  out.push_back(serviceAccount());
  out.push_back(service());
}

}  // namespace minik8s::api::resources
