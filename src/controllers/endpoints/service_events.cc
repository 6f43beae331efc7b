#include "controllers/endpoints/service_events.h"

#include "common/json_pointer.h"
#include "controllers/endpoints/endpoint_builder.h"
#include "controllers/replicaset/replicaset_controller.h"

namespace minik8s::controllers {

namespace {

void queueSelecting(client::Informer& services, client::WorkQueue& queue, const json& pod) {
  const std::string ns = valueAt(pod, "/metadata/namespace", std::string());
  for (const auto& svc : services.byIndexShared("namespace", ns)) {
    if (selectsPod(*svc, pod)) queue.add(client::objectKey(*svc));
  }
}

}  // namespace

void queueServicesOnChanges(client::Informer& services, client::Informer& pods,
                            client::WorkQueue& queue) {
  addNamespaceIndex(services);
  addNamespaceIndex(pods);
  services.addHandlers({[&queue](const json& s) { queue.add(client::objectKey(s)); },
                        [&queue](const json&, const json& s) { queue.add(client::objectKey(s)); },
                        [&queue](const json& s) { queue.add(client::objectKey(s)); }});
  pods.addHandlers({[&](const json& p) { queueSelecting(services, queue, p); },
                    [&](const json& oldPod, const json& p) {
                      // Services that selected the old labels lose the pod.
                      if (valueAt(oldPod, "/metadata/labels", json()) !=
                          valueAt(p, "/metadata/labels", json())) {
                        queueSelecting(services, queue, oldPod);
                      }
                      queueSelecting(services, queue, p);
                    },
                    [&](const json& p) { queueSelecting(services, queue, p); }});
}

std::vector<json> podsSelectedBy(client::Informer& pods, const json& svc) {
  std::vector<json> out;
  const std::string ns = valueAt(svc, "/metadata/namespace", std::string());
  for (const auto& pod : pods.byIndexShared("namespace", ns)) {
    if (selectsPod(svc, *pod)) out.push_back(*pod);
  }
  return out;
}

}  // namespace minik8s::controllers
