// RootCaPublisher: the ConfigMap "kube-root-ca.crt" with data {"ca.crt": <cluster CA PEM>} in
// every active namespace, recreated when deleted and repaired when its data is edited, as
// kube-controller-manager's root-ca-cert-publisher does. Pods read it through the projected
// api-access volume. Keyed by namespace; fed by the namespaces and configmaps informers.
// Thread-safe.
#pragma once

#include <string>

#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

inline constexpr const char* kRootCaConfigMapName = "kube-root-ca.crt";

class RootCaPublisher {
 public:
  // Registers handlers on both informers: construct before they start. `configMaps` may be
  // all ConfigMaps or only those named kube-root-ca.crt (fieldSelector metadata.name=...).
  RootCaPublisher(client::RestClient& rest, client::Informer& namespaces,
                  client::Informer& configMaps, std::string caPem);
  ~RootCaPublisher();

  void start(int workers = 1);
  void stop();
  Status sync(const std::string& namespaceName);

 private:
  client::RestClient& rest_;
  client::Informer& namespaces_;
  client::Informer& configMaps_;
  std::string caPem_;
  client::WorkQueue queue_;
  WorkerPool workers_;
};

}  // namespace minik8s::controllers
