#include "controllers/endpoints/endpoints_controller.h"

#include "common/json_pointer.h"
#include "controllers/endpoints/endpoint_builder.h"
#include "controllers/endpoints/service_events.h"

namespace minik8s::controllers {

namespace {

using client::resources::kEndpoints;

// Conflicts and lost create races are retried by the next sync: not worth a Warning.
bool retried(const Status& s) { return s.code() == 409; }

}  // namespace

EndpointsController::EndpointsController(client::RestClient& rest, client::Informer& services,
                                         client::Informer& pods, int workers,
                                         client::EventRecorder* events)
    : rest_(rest),
      services_(services),
      pods_(pods),
      workers_(workers),
      events_(events),
      pool_(
          queue_, [this](const std::string& k) { return sync(k); }, "endpoints") {
  queueServicesOnChanges(services_, pods_, queue_);
}

EndpointsController::~EndpointsController() { stop(); }

void EndpointsController::start() { pool_.start(workers_); }
void EndpointsController::stop() { pool_.stop(); }

Status EndpointsController::sync(const std::string& key) {
  auto [ns, name] = client::splitObjectKey(key);
  auto svc = services_.get(key);
  if (!svc) {
    auto del = rest_.remove(kEndpoints, ns, name);
    return del.ok() || del.status().code() == 404 ? Status::Ok() : del.status();
  }
  if (!hasSelector(*svc)) return Status::Ok();  // user-managed Endpoints

  const json subsets = buildEndpointSubsets(*svc, podsSelectedBy(pods_, *svc));
  const json labels = endpointLabels(*svc);
  auto current = rest_.get(kEndpoints, ns, name);
  if (!current.ok() && current.status().code() != 404) return current.status();
  if (!current.ok()) {
    json ep = {{"apiVersion", "v1"},
               {"kind", "Endpoints"},
               {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
               {"subsets", subsets}};
    auto created = rest_.create(kEndpoints, ns, ep);
    // AlreadyExists: someone was quicker; the next sync compares.
    if (created.ok()) return Status::Ok();
    if (events_ && !retried(created.status())) {
      events_->record(
          ep, "Warning", "FailedToCreateEndpoint",
          "Failed to create endpoint for service " + key + ": " + created.status().message());
    }
    return created.status();
  }
  json have = current->value("subsets", json::array());
  if (have.is_null()) have = json::array();
  const json haveLabels = valueAt(*current, "/metadata/labels", json::object());
  if (have == subsets && haveLabels == labels) return Status::Ok();
  json ep = *current;
  ep["subsets"] = subsets;
  ep["metadata"]["labels"] = labels;
  auto updated = rest_.update(kEndpoints, ep);  // resourceVersion set: Conflict retries later
  if (updated.ok()) return Status::Ok();
  if (events_ && !retried(updated.status())) {
    if (!ep.contains("kind")) ep["kind"] = "Endpoints";
    events_->record(ep, "Warning", "FailedToUpdateEndpoint",
                    "Failed to update endpoint " + key + ": " + updated.status().message());
  }
  return updated.status();
}

}  // namespace minik8s::controllers
