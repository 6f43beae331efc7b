// EndpointSliceController: keeps the discovery.k8s.io/v1 EndpointSlices of every Service with a
// selector equal to buildEndpointSlices(): slices labelled kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io, owned by the Service,
// one per set of resolved ports. Existing slices with the same ports are updated in place, new
// ones created with generateName "<service>-", stale ones deleted; slices of other managers are
// never touched. Services without a selector get none (their users write slices). Reads
// Services and pods from shared informers and the current slices from the API each sync (a
// lagging cache never makes it create twice). A failed write other than a conflict (retried) is
// also a Warning Event FailedToUpdateEndpointSlices on the Service, as in Kubernetes.
// Thread-safe; one key at a time.
#pragma once

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

class EndpointSliceController {
 public:
  // Registers handlers: construct before the informers start.
  EndpointSliceController(client::RestClient& rest, client::Informer& services,
                          client::Informer& pods, int workers = 2,
                          client::EventRecorder* events = nullptr);
  ~EndpointSliceController();

  void start();
  void stop();

  // Converges the slices of one Service ("namespace/name").
  Status sync(const std::string& key);

 private:
  client::RestClient& rest_;
  client::Informer& services_;
  client::Informer& pods_;
  int workers_;
  client::EventRecorder* events_;  // not owned; may be null
  client::WorkQueue queue_;
  WorkerPool pool_;
};

}  // namespace minik8s::controllers
