// The event wiring the Endpoints and EndpointSlice controllers share: a Service change queues
// the Service; a pod change queues every Service of its namespace whose selector matches the
// pod's old or new labels. Keys are "namespace/name" of Services. Thread-safe as the informers
// and the queue are.
#pragma once

#include "client/informer.h"
#include "client/work_queue.h"

namespace minik8s::controllers {

// Registers the handlers and the "namespace" index on both informers: call before they start.
void queueServicesOnChanges(client::Informer& services, client::Informer& pods,
                            client::WorkQueue& queue);

// The pods of `svc`'s namespace its selector matches, from the pod informer (which carries the
// "namespace" index): copies of those only, not of the whole namespace.
std::vector<json> podsSelectedBy(client::Informer& pods, const json& svc);

}  // namespace minik8s::controllers
