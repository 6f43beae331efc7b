#include "kubelet/csi_node_registration.h"

#include <algorithm>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "csi/csi_client.h"

namespace minik8s::kubelet {

const client::Resource kCsiNodes{"storage.k8s.io", "v1", "csinodes", false};

Status registerCsiNode(client::RestClient& client, const std::string& nodeName,
                       const std::map<std::string, std::string>& drivers,
                       std::chrono::milliseconds timeout) {
  json entries = json::array();
  for (const auto& [name, endpoint] : drivers) {
    csi::CsiClient csi(endpoint, timeout);
    auto info = csi.nodeInfo();
    if (!info.ok()) {
      LOG_WARN("CSI driver {} at {} does not answer NodeGetInfo: {}", name, endpoint,
               info.status().message());
      continue;
    }
    json keys = json::array();
    for (const auto& [key, value] : info->accessible_topology().segments()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    json entry = {{"name", name}, {"nodeID", info->node_id()}, {"topologyKeys", keys}};
    if (info->max_volumes_per_node() > 0) {
      entry["allocatable"] = {{"count", info->max_volumes_per_node()}};
    }
    entries.push_back(entry);
  }
  json csiNode = {{"apiVersion", "storage.k8s.io/v1"},
                  {"kind", "CSINode"},
                  {"metadata", {{"name", nodeName}}},
                  {"spec", {{"drivers", entries}}}};
  if (auto node = client.get(client::resources::kNodes, "", nodeName); node.ok()) {
    csiNode["metadata"]["ownerReferences"] =
        json::array({{{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"name", nodeName},
                      {"uid", valueAt(*node, "/metadata/uid", std::string())}}});
  }
  auto existing = client.get(kCsiNodes, "", nodeName);
  if (existing.ok()) {
    json updated = *existing;
    updated["spec"] = csiNode["spec"];
    if (csiNode["metadata"].contains("ownerReferences")) {
      updated["metadata"]["ownerReferences"] = csiNode["metadata"]["ownerReferences"];
    }
    if (updated == *existing) return Status::Ok();
    auto r = client.update(kCsiNodes, updated);
    return r.ok() ? Status::Ok() : r.status();
  }
  if (existing.status().code() != 404) return existing.status();
  auto r = client.create(kCsiNodes, "", csiNode);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace minik8s::kubelet
