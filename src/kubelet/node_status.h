// NodeStatus: the node's presence in the API, as the kubelet's node status and node lease parts.
//
// registerNode() creates the Node (or adopts the existing one, merging our labels) with its
// addresses, capacity/allocatable (cpu, memory, pods, ephemeral-storage), nodeInfo, daemon
// endpoint and conditions (Ready, MemoryPressure, DiskPressure, PIDPressure). renewLease() keeps
// kube-node-lease/<node> fresh (call it every 10 s); updateStatus() refreshes the conditions'
// heartbeat (call it about once a minute or when readiness changes). buildNode() is pure.
// With an event recorder, each condition the API shows changing is an Event on the Node, as the
// kubelet writes them ("Node X status is now: NodeHasSufficientMemory", ... NodeReady,
// NodeNotReady; involvedObject uid = the node name, as kubectl describe node expects of the
// kubelet). Thread-safe (calls serialize on an internal mutex).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "client/event_recorder.h"
#include "client/rest_client.h"

namespace minik8s::kubelet {

struct MachineInfo {
  int64_t cpuCores = 1;
  int64_t memoryBytes = 0;
  std::string machineID, systemUUID, bootID, kernelVersion, osImage, architecture = "amd64";
};
// Reads /proc, /etc and uname.
MachineInfo collectMachineInfo();

struct NodeStatusOptions {
  std::string nodeName;
  std::string hostIP;
  std::map<std::string, std::string> labels;  // from the config file
  // Taints the Node is created with (kubelet's --register-with-taints): NodeRestriction lets a
  // node set them only when it registers, not change them later.
  json registerTaints = json::array();
  std::string podCIDR;
  int maxPods = 110;
  int kubeletPort = 10250;
  // From the config file (`capacity: {cpu: "2", memory: 4Gi}`): replace what the machine reports,
  // in capacity and allocatable, e.g. to give a node a share of the machine.
  std::map<std::string, std::string> capacityOverrides;
  std::string containerRuntimeVersion = "containerd://unknown";
  std::string kubeletVersion = "v1.32.0-minik8s";
  client::EventRecorder* events = nullptr;  // not owned; null: no Events
};

class NodeStatus {
 public:
  NodeStatus(client::RestClient& client, NodeStatusOptions options, MachineInfo machine);

  Status registerNode();
  Status renewLease();
  // `ready` false reports NotReady (e.g. the runtime does not answer) with `message`.
  Status updateStatus(bool ready, const std::string& message = "");

  json buildNode(bool ready, const std::string& message, const std::string& now) const;

  // A Normal Event on this node (e.g. Starting "Starting kubelet.").
  void recordNodeEvent(const std::string& reason, const std::string& message);

 private:
  client::RestClient& client_;
  NodeStatusOptions options_;
  MachineInfo machine_;
  // Events for the conditions whose status differs between `before` (the node as the API had it,
  // or null) and `after` (what we wrote).
  void recordConditionChanges(const json& before, const json& after);

  std::mutex mu_;
  bool lastReady_ = false;
  std::string readySince_;
};

// RuntimeReadiness: whether the container runtime lets the node say Ready. As the kubelet
// (maxWaitForContainerRuntime, 30 s), the node is NotReady ("container runtime is down") only
// once the runtime has not answered for `grace`, and until it first answers: a containerd that
// dies and is restarted by its supervisor within a few seconds (its containers keep running)
// must not make the node NotReady, which taints it NoExecute and marks its pods unready.
// Not thread-safe (the node loop owns it).
class RuntimeReadiness {
 public:
  explicit RuntimeReadiness(std::chrono::steady_clock::duration grace) : grace_(grace) {}
  // Records one runtime status call (`answered`: it succeeded) at `now`; true while Ready.
  bool observe(bool answered, std::chrono::steady_clock::time_point now) {
    if (answered) lastAnswer_ = now;
    return lastAnswer_ && now - *lastAnswer_ < grace_;
  }

 private:
  std::chrono::steady_clock::duration grace_;
  std::optional<std::chrono::steady_clock::time_point> lastAnswer_;
};

}  // namespace minik8s::kubelet
