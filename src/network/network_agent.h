// NetworkAgent: the node's side of the pod network, run by `minik8s agent` in the node's network
// namespace.
//
// start() watches the Node objects, waits until this node has a spec.podCIDR (given by the node
// IPAM controller, or by the node's config file), hands it to `configureCni` (which writes the
// CNI config for the node's containerd) and sets up the overlay device. From then on a sync
// thread keeps the overlay's routes equal to the other nodes' podCIDRs and addresses: after every
// Node change (coalesced) and every 30 s. Thread-safe; start() once, stop() once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "client/informer.h"
#include "client/rest_client.h"
#include "network/overlay.h"

namespace minik8s::network {

struct NetworkAgentOptions {
  std::string nodeName;
  OverlayOptions overlay;
  std::chrono::milliseconds podCidrTimeout{std::chrono::seconds(60)};
  std::chrono::milliseconds resyncPeriod{std::chrono::seconds(30)};
  // Writes the CNI configuration for the node's podCIDR.
  std::function<Status(const Ipv4Cidr& podCidr)> configureCni;
};

class NetworkAgent {
 public:
  NetworkAgent(client::RestClient& client, NetworkAgentOptions options, Runner runner);
  ~NetworkAgent();
  NetworkAgent(const NetworkAgent&) = delete;
  NetworkAgent& operator=(const NetworkAgent&) = delete;

  Status start();
  void stop();
  Ipv4Cidr podCidr() const;
  int syncs() const { return syncs_; }  // completed syncs (for tests)

 private:
  void syncLoop();
  void markDirty();

  client::RestClient& client_;
  NetworkAgentOptions options_;
  Overlay overlay_;
  client::Informer nodes_;
  Ipv4Cidr podCidr_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = true;
  bool stopping_ = false;
  std::atomic<int> syncs_{0};
  std::thread thread_;
};

}  // namespace minik8s::network
