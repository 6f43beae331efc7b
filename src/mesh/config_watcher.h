// ConfigWatcher: keeps a MeshConfig current from the API server (informers on Services,
// Endpoints, Pods, VirtualServices, DestinationRules and PeerAuthentications in all namespaces) and
// hands every new version to a callback, within ~50 ms of a change (changes arriving together are
// built once).
//
// What a sidecar runs with its pod's service account (which the mesh controller's ClusterRole
// `minik8s:mesh-proxy` lets read these kinds), and what `minik8s mesh services` reads once.
// The callback runs on the watcher's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "mesh/mesh_config.h"

namespace minik8s::mesh {

extern const client::Resource kVirtualServices;        // networking.istio.io/v1 virtualservices
extern const client::Resource kDestinationRules;       // networking.istio.io/v1 destinationrules
extern const client::Resource kPeerAuthentications;    // security.istio.io/v1 peerauthentications
extern const client::Resource kAuthorizationPolicies;  // security.istio.io/v1

class ConfigWatcher {
 public:
  using Callback = std::function<void(std::shared_ptr<const MeshConfig>)>;
  ConfigWatcher(client::RestClient& rest, Callback onConfig);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

  void start();
  void stop();
  // True once Services, Endpoints and Pods were listed (the rules may come later: their CRDs
  // may not be installed yet).
  bool waitForSync(std::chrono::milliseconds timeout);

 private:
  void run();
  void changed();

  Callback onConfig_;
  std::vector<std::unique_ptr<client::Informer>>
      informers_;  // services, endpoints, pods, vs, dr, pa
  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = true;
  bool stopping_ = false;
  int64_t version_ = 0;
  std::thread thread_;
};

}  // namespace minik8s::mesh
