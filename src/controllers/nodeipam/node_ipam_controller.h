// NodeIpamController: gives every Node a spec.podCIDR (a /24 of the cluster CIDR 10.244.0.0/16
// by default), as kube-controller-manager's node IPAM does with its range allocator.
//
// The allocation state is the set of podCIDRs the Nodes carry, so it is stable across restarts
// (a node keeps its CIDR for its lifetime) and a CIDR is free again once its Node is deleted. A
// node whose config file already names a podCIDR keeps it. One worker, so two nodes joining at
// once never get the same block; blocks handed out but not yet seen in the cache stay reserved.
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "common/cidr.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

struct NodeIpamOptions {
  std::string clusterCidr = "10.244.0.0/16";
  int nodeMaskSize = 24;
};

// The first block of `maskSize` inside `range` that overlaps none of `used`.
std::optional<Ipv4Cidr> firstFreeBlock(const Ipv4Cidr& range, int maskSize,
                                       const std::vector<Ipv4Cidr>& used);

class NodeIpamController {
 public:
  // Registers handlers on `nodes`: construct before it starts.
  NodeIpamController(client::RestClient& rest, client::Informer& nodes, NodeIpamOptions options);
  ~NodeIpamController();

  void start();
  void stop();
  Status sync(const std::string& nodeName);

 private:
  client::RestClient& rest_;
  client::Informer& nodes_;
  NodeIpamOptions options_;
  Ipv4Cidr range_;
  std::mutex mu_;
  std::map<std::string, Ipv4Cidr> pending_;  // handed out, not yet in the cache
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
