// CSINode registration, as the kubelet's CSI plugin manager does it when a driver registers:
// storage.k8s.io/v1 CSINode <node> lists every CSI driver this node serves, each with the node id
// and topology keys its NodeGetInfo reports, and is owned by the Node (the garbage collector
// removes it with the node). `kubectl get csinode` then says which node serves which driver.
// A driver that does not answer is left out (and logged); the object is rewritten whole (this
// agent owns all its drivers). Thread-compatible: one call at a time.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "client/rest_client.h"
#include "common/status.h"

namespace minik8s::kubelet {

extern const client::Resource kCsiNodes;  // storage.k8s.io/v1 csinodes

// `drivers`: driver name -> endpoint of its Node service ("unix:///path").
Status registerCsiNode(client::RestClient& client, const std::string& nodeName,
                       const std::map<std::string, std::string>& drivers,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace minik8s::kubelet
