#include "monitoring/service_discovery.h"

#include <algorithm>
#include <map>

#include "api/object_meta.h"
#include "common/strings.h"

namespace minik8s::monitoring {

namespace {

constexpr std::string_view kMeta = "__meta_kubernetes_";

using Labels = std::map<std::string, std::string>;

std::string str(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& field(const json& obj, std::string_view key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string portString(const json& port) {
  return port.is_number_integer() ? std::to_string(port.get<int64_t>()) : "";
}

// __meta_kubernetes_<kind>_label_<name>, ..._labelpresent_<name>, and the same for annotations.
void addMetadataLabels(Labels& out, std::string_view kind, const json& obj) {
  const json& meta = field(obj, "metadata");
  for (const auto& [what, key] : {std::pair{"label", "labels"}, {"annotation", "annotations"}}) {
    const json& m = field(meta, key);
    if (!m.is_object()) continue;
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string name = sanitizeLabelName(it.key());
      const std::string prefix = std::string(kMeta) + std::string(kind) + "_" + what;
      out[prefix + "_" + name] = it->is_string() ? it->get<std::string>() : "";
      out[prefix + "present_" + name] = "true";
    }
  }
}

bool inNamespaces(const json& obj, const std::vector<std::string>& namespaces) {
  return namespaces.empty() ||
         std::find(namespaces.begin(), namespaces.end(), api::namespaceOf(obj)) != namespaces.end();
}

void addGroup(json& groups, const std::string& target, Labels labels) {
  json l = json::object();
  for (auto& [k, v] : labels) l[k] = std::move(v);
  groups.push_back({{"targets", json::array({target})}, {"labels", std::move(l)}});
}

// host:port, bracketing an IPv6 host.
std::string joinHostPort(const std::string& host, const std::string& port) {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port.empty() ? h : h + ":" + port;
}

// ---- node

json nodeGroups(const ClusterObjects& objects) {
  json groups = json::array();
  static const char* kAddressOrder[] = {"InternalIP",  "InternalDNS",  "ExternalIP",
                                        "ExternalDNS", "LegacyHostIP", "Hostname"};
  for (const auto& node : objects.nodes) {
    const std::string name = api::nameOf(node);
    Labels labels;
    labels[std::string(kMeta) + "node_name"] = name;
    labels[std::string(kMeta) + "node_provider_id"] = str(field(node, "spec"), "providerID");
    labels["instance"] = name;
    addMetadataLabels(labels, "node", node);
    std::map<std::string, std::string> firstOfType;
    const json& addresses = field(field(node, "status"), "addresses");
    if (addresses.is_array()) {
      for (const auto& a : addresses) {
        const std::string type = str(a, "type"), address = str(a, "address");
        if (type.empty() || address.empty()) continue;
        firstOfType.emplace(type, address);
        labels[std::string(kMeta) + "node_address_" + sanitizeLabelName(type)] = firstOfType[type];
      }
    }
    std::string host;
    for (const char* type : kAddressOrder) {
      if (auto it = firstOfType.find(type); it != firstOfType.end()) {
        host = it->second;
        break;
      }
    }
    if (host.empty()) continue;  // kubernetes_sd skips a node without an address
    const json& port =
        field(field(field(field(node, "status"), "daemonEndpoints"), "kubeletEndpoint"), "Port");
    addGroup(groups, joinHostPort(host, port.is_number_integer() ? portString(port) : "10250"),
             std::move(labels));
  }
  return groups;
}

// ---- pod

std::string podReady(const json& pod) {
  const json& conditions = field(field(pod, "status"), "conditions");
  if (conditions.is_array()) {
    for (const auto& c : conditions) {
      if (str(c, "type") != "Ready") continue;
      return asciiLower(str(c, "status"));
    }
  }
  return "unknown";
}

Labels podLabels(const json& pod) {
  Labels labels;
  const json& status = field(pod, "status");
  labels[std::string(kMeta) + "namespace"] = api::namespaceOf(pod);
  labels[std::string(kMeta) + "pod_name"] = api::nameOf(pod);
  labels[std::string(kMeta) + "pod_ip"] = str(status, "podIP");
  labels[std::string(kMeta) + "pod_ready"] = podReady(pod);
  labels[std::string(kMeta) + "pod_phase"] = str(status, "phase");
  labels[std::string(kMeta) + "pod_node_name"] = api::nodeNameOf(pod);
  labels[std::string(kMeta) + "pod_host_ip"] = str(status, "hostIP");
  labels[std::string(kMeta) + "pod_uid"] = api::uidOf(pod);
  const json& owners = field(field(pod, "metadata"), "ownerReferences");
  if (owners.is_array()) {
    for (const auto& o : owners) {
      if (!o.value("controller", false)) continue;
      labels[std::string(kMeta) + "pod_controller_kind"] = str(o, "kind");
      labels[std::string(kMeta) + "pod_controller_name"] = str(o, "name");
    }
  }
  addMetadataLabels(labels, "pod", pod);
  return labels;
}

// The runtime's id of a container, from the pod's status.
std::string containerId(const json& pod, const std::string& name, bool init) {
  const json& statuses =
      field(field(pod, "status"), init ? "initContainerStatuses" : "containerStatuses");
  if (statuses.is_array()) {
    for (const auto& s : statuses)
      if (str(s, "name") == name) return str(s, "containerID");
  }
  return "";
}

void addPodTargets(json& groups, const json& pod) {
  const std::string ip = str(field(pod, "status"), "podIP");
  if (ip.empty()) return;  // not yet scheduled or started: no address to scrape
  const Labels base = podLabels(pod);
  const json& spec = field(pod, "spec");
  for (const bool init : {false, true}) {
    const json& containers = field(spec, init ? "initContainers" : "containers");
    if (!containers.is_array()) continue;
    for (const auto& c : containers) {
      Labels labels = base;
      const std::string name = str(c, "name");
      labels[std::string(kMeta) + "pod_container_name"] = name;
      labels[std::string(kMeta) + "pod_container_image"] = str(c, "image");
      labels[std::string(kMeta) + "pod_container_init"] = init ? "true" : "false";
      labels[std::string(kMeta) + "pod_container_id"] = containerId(pod, name, init);
      const json& ports = field(c, "ports");
      if (!ports.is_array() || ports.empty()) {
        // As kubernetes_sd: one target without a port; relabelling usually adds one.
        if (!init) addGroup(groups, joinHostPort(ip, ""), std::move(labels));
        continue;
      }
      for (const auto& p : ports) {
        Labels withPort = labels;
        const std::string number = portString(field(p, "containerPort"));
        withPort[std::string(kMeta) + "pod_container_port_name"] = str(p, "name");
        withPort[std::string(kMeta) + "pod_container_port_number"] = number;
        std::string protocol = str(p, "protocol");
        withPort[std::string(kMeta) + "pod_container_port_protocol"] =
            protocol.empty() ? "TCP" : protocol;
        addGroup(groups, joinHostPort(ip, number), std::move(withPort));
      }
    }
  }
}

// ---- service

Labels serviceLabels(const json& svc) {
  Labels labels;
  const json& spec = field(svc, "spec");
  labels[std::string(kMeta) + "namespace"] = api::namespaceOf(svc);
  labels[std::string(kMeta) + "service_name"] = api::nameOf(svc);
  std::string type = str(spec, "type");
  labels[std::string(kMeta) + "service_type"] = type.empty() ? "ClusterIP" : type;
  if (type == "ExternalName") {
    labels[std::string(kMeta) + "service_external_name"] = str(spec, "externalName");
  } else {
    labels[std::string(kMeta) + "service_cluster_ip"] = str(spec, "clusterIP");
  }
  addMetadataLabels(labels, "service", svc);
  return labels;
}

json serviceGroups(const ClusterObjects& objects, const std::vector<std::string>& namespaces) {
  json groups = json::array();
  for (const auto& svc : objects.services) {
    if (!inNamespaces(svc, namespaces)) continue;
    const Labels base = serviceLabels(svc);
    const json& ports = field(field(svc, "spec"), "ports");
    if (!ports.is_array()) continue;
    const std::string host = api::nameOf(svc) + "." + api::namespaceOf(svc) + ".svc";
    for (const auto& p : ports) {
      Labels labels = base;
      const std::string number = portString(field(p, "port"));
      labels[std::string(kMeta) + "service_port_name"] = str(p, "name");
      labels[std::string(kMeta) + "service_port_number"] = number;
      std::string protocol = str(p, "protocol");
      labels[std::string(kMeta) + "service_port_protocol"] = protocol.empty() ? "TCP" : protocol;
      addGroup(groups, joinHostPort(host, number), std::move(labels));
    }
  }
  return groups;
}

// ---- endpoints

json endpointsGroups(const ClusterObjects& objects, const std::vector<std::string>& namespaces) {
  std::map<std::string, const json*> pods, services;  // "ns/name"
  for (const auto& p : objects.pods) pods[api::namespaceOf(p) + "/" + api::nameOf(p)] = &p;
  for (const auto& s : objects.services) services[api::namespaceOf(s) + "/" + api::nameOf(s)] = &s;
  json groups = json::array();
  for (const auto& ep : objects.endpoints) {
    if (!inNamespaces(ep, namespaces)) continue;
    const std::string ns = api::namespaceOf(ep);
    Labels base;
    base[std::string(kMeta) + "namespace"] = ns;
    base[std::string(kMeta) + "endpoints_name"] = api::nameOf(ep);
    addMetadataLabels(base, "endpoints", ep);
    if (auto it = services.find(ns + "/" + api::nameOf(ep)); it != services.end()) {
      for (auto& [k, v] : serviceLabels(*it->second)) base[k] = v;
    }
    const json& subsets = field(ep, "subsets");
    if (!subsets.is_array()) continue;
    for (const auto& subset : subsets) {
      const json& ports = field(subset, "ports");
      if (!ports.is_array()) continue;
      for (const bool ready : {true, false}) {
        const json& addresses = field(subset, ready ? "addresses" : "notReadyAddresses");
        if (!addresses.is_array()) continue;
        for (const auto& a : addresses) {
          Labels labels = base;
          labels[std::string(kMeta) + "endpoint_ready"] = ready ? "true" : "false";
          if (std::string h = str(a, "hostname"); !h.empty())
            labels[std::string(kMeta) + "endpoint_hostname"] = h;
          if (std::string n = str(a, "nodeName"); !n.empty())
            labels[std::string(kMeta) + "endpoint_node_name"] = n;
          const json& ref = field(a, "targetRef");
          const std::string kind = str(ref, "kind"), refName = str(ref, "name");
          if (!kind.empty()) {
            labels[std::string(kMeta) + "endpoint_address_target_kind"] = kind;
            labels[std::string(kMeta) + "endpoint_address_target_name"] = refName;
          }
          if (kind == "Pod") {
            std::string refNs = str(ref, "namespace");
            if (auto it = pods.find((refNs.empty() ? ns : refNs) + "/" + refName);
                it != pods.end()) {
              for (auto& [k, v] : podLabels(*it->second)) labels.emplace(k, v);
            }
          }
          for (const auto& p : ports) {
            Labels withPort = labels;
            const std::string number = portString(field(p, "port"));
            withPort[std::string(kMeta) + "endpoint_port_name"] = str(p, "name");
            std::string protocol = str(p, "protocol");
            withPort[std::string(kMeta) + "endpoint_port_protocol"] =
                protocol.empty() ? "TCP" : protocol;
            addGroup(groups, joinHostPort(str(a, "ip"), number), std::move(withPort));
          }
        }
      }
    }
  }
  return groups;
}

}  // namespace

Result<SdRole> parseSdRole(std::string_view role) {
  if (role == "node" || role == "nodes") return SdRole::kNode;
  if (role == "pod" || role == "pods") return SdRole::kPod;
  if (role == "service" || role == "services") return SdRole::kService;
  if (role == "endpoints") return SdRole::kEndpoints;
  return Status::NotFoundMessage("no service discovery role \"" + std::string(role) +
                                 "\": the roles are node, pod, service and endpoints");
}

std::string sanitizeLabelName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) c = '_';
  }
  return out;
}

json targetGroups(SdRole role, const ClusterObjects& objects,
                  const std::vector<std::string>& namespaces) {
  switch (role) {
    case SdRole::kNode:
      return nodeGroups(objects);
    case SdRole::kPod: {
      json groups = json::array();
      for (const auto& pod : objects.pods)
        if (inNamespaces(pod, namespaces)) addPodTargets(groups, pod);
      return groups;
    }
    case SdRole::kService:
      return serviceGroups(objects, namespaces);
    case SdRole::kEndpoints:
      return endpointsGroups(objects, namespaces);
  }
  return json::array();
}

}  // namespace minik8s::monitoring
