// NamespaceController: empties terminating namespaces, as kube-controller-manager's namespace
// controller does, then lets the API server delete them.
//
// A deleted namespace is marked Terminating by the API server and keeps the "kubernetes"
// finalizer in spec.finalizers. For such a namespace sync() deletes every object of every
// namespaced resource the server's discovery lists with the list and delete verbs (built-in and
// custom resources alike, read again on each pass since CRDs come and go); a pod bound to a node
// that does not exist is deleted with grace period 0, as nobody would confirm its end. While
// objects remain (finalizers, pods shutting down gracefully) the namespace is looked at again
// after `recheck`; once none is left the "kubernetes" finalizer is removed through the
// namespace's finalize subresource and the server deletes the namespace. It only talks to the
// API server, so a restart just converges again. Thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

inline constexpr char kNamespaceFinalizer[] = "kubernetes";

struct NamespaceControllerOptions {
  std::chrono::milliseconds recheck{1000};  // while a terminating namespace still has objects
};

// The namespaced resources of a discovery resource list (an APIResourceList of group/version)
// that can be listed and deleted, subresources left out.
std::vector<client::Resource> deletableNamespacedResources(const json& resourceList,
                                                           const std::string& group,
                                                           const std::string& version);

class NamespaceController {
 public:
  // Registers handlers on `namespaces`: construct before it starts.
  NamespaceController(client::RestClient& rest, client::Informer& namespaces,
                      NamespaceControllerOptions options = {});
  ~NamespaceController();
  NamespaceController(const NamespaceController&) = delete;
  NamespaceController& operator=(const NamespaceController&) = delete;

  void start(int workers = 1);
  void stop();

  // One pass over the namespace `name` (see above).
  Status sync(const std::string& name);

 private:
  // Every namespaced resource the server serves, from discovery (the preferred version of each
  // group, as kube-controller-manager deletes through).
  Result<std::vector<client::Resource>> discoverResources();
  // Deletes what `r` holds in `ns`; the number of objects still there.
  Result<size_t> deleteContent(const client::Resource& r, const std::string& ns);

  client::RestClient& rest_;
  client::Informer& namespaces_;
  NamespaceControllerOptions options_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
