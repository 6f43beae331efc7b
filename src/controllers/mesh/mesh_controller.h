// MeshController: the sidecars' read access, per meshed namespace. A namespace labelled
// istio-injection=enabled gets the ClusterRoleBinding minik8s:mesh-proxy:<namespace>, which binds
// the ClusterRole minik8s:mesh-proxy (read services, endpoints, pods and the mesh's rules; see
// mesh/mesh_resources.h) to the group system:serviceaccounts:<namespace>, so its pods' sidecars
// can build the registry; other namespaces' service accounts get nothing. With `allNamespaces`
// (the server's --mesh, where every application pod is meshed) every namespace gets it except
// kube-system, kube-public, kube-node-lease and those labelled istio-injection=disabled. The
// binding goes when the label or the namespace does. sync(name) is level-triggered. Thread-safe.
#pragma once

#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

class MeshController {
 public:
  // Registers handlers on the informer: construct before it starts.
  MeshController(client::RestClient& rest, client::Informer& namespaces,
                 const client::Clock& clock = client::RealClock::instance(),
                 bool allNamespaces = false);
  ~MeshController();
  void start();
  void stop();

  Status sync(const std::string& namespaceName);

 private:
  client::RestClient& rest_;
  client::Informer& namespaces_;
  client::WorkQueue queue_;
  WorkerPool workers_;
  bool allNamespaces_ = false;
};

// Whether the sidecars of namespace `ns` (its object) may read the registry. Pure; for tests.
bool namespaceIsMeshed(const json& ns, bool allNamespaces);

// The ClusterRoleBinding of one meshed namespace. Pure; for tests.
json meshProxyBinding(const std::string& namespaceName);

}  // namespace minik8s::controllers
