#include "controllers/endpoints/endpoint_builder.h"

#include <algorithm>
#include <map>

#include "api/object_meta.h"
#include "common/json_pointer.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

namespace {

json servicePorts(const json& svc) {
  json ports = valueAt(svc, "/spec/ports", json::array());
  return ports.is_array() ? ports : json::array();
}

json targetRef(const json& pod) {
  return {{"kind", "Pod"},
          {"namespace", api::stringAt(pod, "/metadata/namespace")},
          {"name", api::stringAt(pod, "/metadata/name")},
          {"uid", api::stringAt(pod, "/metadata/uid")}};
}

// The endpoint ports of one pod: one per Service port that resolves, sorted by name then port.
// The pod is no endpoint (nullopt) when the Service has ports and none resolves.
std::optional<json> podPorts(const json& svc, const json& pod) {
  const json ports = servicePorts(svc);
  json out = json::array();
  for (const auto& sp : ports) {
    if (!sp.is_object()) continue;
    auto target = resolveTargetPort(sp, pod);
    if (!target) continue;
    json p = {{"name", sp.value("name", "")},
              {"port", *target},
              {"protocol", sp.value("protocol", "TCP")}};
    if (sp.contains("appProtocol")) p["appProtocol"] = sp["appProtocol"];
    out.push_back(std::move(p));
  }
  if (out.empty() && !ports.empty()) return std::nullopt;
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::make_tuple(a["name"].get<std::string>(), a["port"].get<int>()) <
           std::make_tuple(b["name"].get<std::string>(), b["port"].get<int>());
  });
  return out;
}

// The pod's hostname in the Service's DNS when it names the Service as its subdomain.
std::string hostnameFor(const json& svc, const json& pod) {
  const std::string hostname = api::stringAt(pod, "/spec/hostname");
  if (hostname.empty()) return "";
  return api::stringAt(pod, "/spec/subdomain") == api::stringAt(svc, "/metadata/name") ? hostname
                                                                                       : "";
}

std::vector<json> candidatePods(const json& svc, const std::vector<json>& pods) {
  std::vector<json> out;
  for (const auto& pod : pods) {
    if (selectsPod(svc, pod) && podHasEndpoint(pod)) out.push_back(pod);
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return std::make_tuple(api::stringAt(a, "/status/podIP"), api::stringAt(a, "/metadata/name")) <
           std::make_tuple(api::stringAt(b, "/status/podIP"), api::stringAt(b, "/metadata/name"));
  });
  return out;
}

}  // namespace

bool hasSelector(const json& svc) {
  const json sel = valueAt(svc, "/spec/selector", json());
  return sel.is_object() && !sel.empty();
}

bool isHeadless(const json& svc) { return api::stringAt(svc, "/spec/clusterIP") == "None"; }

bool selectsPod(const json& svc, const json& pod) {
  if (!hasSelector(svc)) return false;
  if (api::stringAt(svc, "/metadata/namespace") != api::stringAt(pod, "/metadata/namespace")) {
    return false;
  }
  const json labels = labelsOf(pod);
  for (const auto& [k, v] : svc["spec"]["selector"].items()) {
    if (!labels.contains(k) || labels[k] != v) return false;
  }
  return true;
}

std::optional<int> resolveTargetPort(const json& servicePort, const json& pod) {
  json target = servicePort.value("targetPort", json());
  if (target.is_null() || target == 0 || target == "") target = servicePort.value("port", json());
  if (target.is_number_integer()) return target.get<int>();
  if (!target.is_string()) return std::nullopt;
  const std::string name = target.get<std::string>();
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) return std::stoi(name);
  const std::string protocol = servicePort.value("protocol", "TCP");
  for (const char* list : {"containers", "initContainers"}) {
    const json containers = valueAt(pod, "/spec", json::object()).value(list, json());
    if (!containers.is_array()) continue;
    for (const auto& c : containers) {
      const json ports = c.value("ports", json::array());
      if (!ports.is_array()) continue;
      for (const auto& p : ports) {
        if (p.value("name", "") == name && p.value("protocol", "TCP") == protocol &&
            p.contains("containerPort") && p["containerPort"].is_number_integer()) {
          return p["containerPort"].get<int>();
        }
      }
    }
  }
  return std::nullopt;
}

bool podHasEndpoint(const json& pod) {
  if (api::stringAt(pod, "/status/podIP").empty()) return false;
  const std::string phase = api::stringAt(pod, "/status/phase");
  return phase != "Succeeded" && phase != "Failed";
}

json endpointLabels(const json& svc) {
  json labels = valueAt(svc, "/metadata/labels", json::object());
  if (!labels.is_object()) labels = json::object();
  if (isHeadless(svc)) labels[kHeadlessLabel] = "";
  return labels;
}

json buildEndpointSubsets(const json& svc, const std::vector<json>& pods) {
  const bool publishNotReady = valueAt(svc, "/spec/publishNotReadyAddresses", false);
  const bool noPorts = servicePorts(svc).empty();
  if (noPorts && !isHeadless(svc)) return json::array();
  std::map<std::string, json> subsets;  // ports (dumped) -> subset
  for (const auto& pod : candidatePods(svc, pods)) {
    if (isTerminating(pod) && !publishNotReady) continue;
    auto ports = podPorts(svc, pod);
    if (!ports) continue;
    json address = {{"ip", api::stringAt(pod, "/status/podIP")}};
    if (auto host = hostnameFor(svc, pod); !host.empty()) address["hostname"] = host;
    if (auto node = api::stringAt(pod, "/spec/nodeName"); !node.empty()) {
      address["nodeName"] = node;
    }
    address["targetRef"] = targetRef(pod);
    json& subset = subsets[ports->dump()];
    if (subset.is_null()) {
      json endpointPorts = json::array();
      for (auto p : *ports) {
        if (p["name"] == "") p.erase("name");
        endpointPorts.push_back(std::move(p));
      }
      subset = json::object();
      if (!endpointPorts.empty()) subset["ports"] = std::move(endpointPorts);
    }
    const char* list = (publishNotReady || isPodReady(pod)) ? "addresses" : "notReadyAddresses";
    subset[list].push_back(std::move(address));
  }
  json out = json::array();
  for (auto& [key, subset] : subsets) out.push_back(std::move(subset));
  return out;
}

std::vector<json> buildEndpointSlices(const json& svc, const std::vector<json>& pods) {
  const bool publishNotReady = valueAt(svc, "/spec/publishNotReadyAddresses", false);
  const std::string name = api::stringAt(svc, "/metadata/name");
  json labels = endpointLabels(svc);
  labels[kServiceNameLabel] = name;
  labels[kManagedByLabel] = kEndpointSliceControllerName;
  json owner = {{"apiVersion", "v1"}, {"kind", "Service"},
                {"name", name},       {"uid", api::stringAt(svc, "/metadata/uid")},
                {"controller", true}, {"blockOwnerDeletion", true}};
  std::map<std::string, std::pair<json, json>> groups;  // ports (dumped) -> (ports, endpoints)
  for (const auto& pod : candidatePods(svc, pods)) {
    auto ports = podPorts(svc, pod);
    if (!ports) continue;
    const bool terminating = isTerminating(pod);
    const bool ready = isPodReady(pod);
    json ep = {{"addresses", json::array({api::stringAt(pod, "/status/podIP")})},
               {"conditions",
                {{"ready", publishNotReady || (ready && !terminating)},
                 {"serving", ready},
                 {"terminating", terminating}}},
               {"targetRef", targetRef(pod)}};
    if (auto host = hostnameFor(svc, pod); !host.empty()) ep["hostname"] = host;
    if (auto node = api::stringAt(pod, "/spec/nodeName"); !node.empty()) ep["nodeName"] = node;
    auto& group = groups[ports->dump()];
    group.first = *ports;
    if (group.second.is_null()) group.second = json::array();
    group.second.push_back(std::move(ep));
  }
  std::vector<json> out;
  auto slice = [&](const json& ports, json endpoints) {
    return json{{"apiVersion", "discovery.k8s.io/v1"},
                {"kind", "EndpointSlice"},
                {"metadata",
                 {{"namespace", api::stringAt(svc, "/metadata/namespace")},
                  {"labels", labels},
                  {"ownerReferences", json::array({owner})}}},
                {"addressType", "IPv4"},
                {"ports", ports},
                {"endpoints", std::move(endpoints)}};
  };
  for (auto& [key, group] : groups) {
    const json& endpoints = group.second;
    for (size_t i = 0; i < endpoints.size(); i += kMaxEndpointsPerSlice) {
      json chunk = json::array();
      for (size_t j = i; j < std::min(endpoints.size(), i + kMaxEndpointsPerSlice); ++j) {
        chunk.push_back(endpoints[j]);
      }
      out.push_back(slice(group.first, std::move(chunk)));
    }
  }
  // A Service without endpoints keeps one empty placeholder slice, as in Kubernetes.
  if (out.empty()) out.push_back(slice(json::array(), json::array()));
  return out;
}

}  // namespace minik8s::controllers
