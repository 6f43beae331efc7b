// EndpointsController: keeps the core/v1 Endpoints of every Service with a selector equal to
// what its pods say (see buildEndpointSubsets): ready pods as addresses, not-ready ones as
// notReadyAddresses, named targetPorts resolved per pod. Services without a selector are left to
// their users; the Endpoints of a deleted Service are deleted. Reads Services and pods from
// shared informers; reads and writes Endpoints through the RestClient (a fresh read each sync, so
// a lagging cache never makes it create twice). Thread-safe; sync runs on worker threads, one
// key at a time. A failed write other than a conflict (retried) is also a Warning Event on the
// Endpoints, as Kubernetes' endpoint-controller writes it: FailedToCreateEndpoint or
// FailedToUpdateEndpoint.
#pragma once

#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/work_queue.h"
#include "controllers/common/controller_utils.h"

namespace minik8s::controllers {

class EndpointsController {
 public:
  // Registers handlers: construct before the informers start.
  EndpointsController(client::RestClient& rest, client::Informer& services, client::Informer& pods,
                      int workers = 2, client::EventRecorder* events = nullptr);
  ~EndpointsController();

  void start();
  void stop();

  // Converges the Endpoints of one Service ("namespace/name").
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
