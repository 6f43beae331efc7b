#include "controllers/endpoints/endpointslice_controller.h"

#include "common/json_pointer.h"
#include "controllers/endpoints/endpoint_builder.h"
#include "controllers/endpoints/service_events.h"

namespace minik8s::controllers {

namespace {

const client::Resource& kSlices = client::resources::kEndpointSlices;

// The fields a slice's content is compared on.
bool sameContent(const json& have, const json& want) {
  for (const char* f : {"addressType", "ports", "endpoints"}) {
    json a = have.value(f, json::array()), b = want.value(f, json::array());
    if (a.is_null()) a = json::array();
    if (a != b) return false;
  }
  return valueAt(have, "/metadata/labels", json()) == want["metadata"]["labels"] &&
         valueAt(have, "/metadata/ownerReferences", json()) == want["metadata"]["ownerReferences"];
}

}  // namespace

EndpointSliceController::EndpointSliceController(client::RestClient& rest,
                                                 client::Informer& services, client::Informer& pods,
                                                 int workers, client::EventRecorder* events)
    : rest_(rest),
      services_(services),
      pods_(pods),
      workers_(workers),
      events_(events),
      pool_(
          queue_, [this](const std::string& k) { return sync(k); }, "endpointslice") {
  queueServicesOnChanges(services_, pods_, queue_);
}

EndpointSliceController::~EndpointSliceController() { stop(); }

void EndpointSliceController::start() { pool_.start(workers_); }
void EndpointSliceController::stop() { pool_.stop(); }

Status EndpointSliceController::sync(const std::string& key) {
  auto [ns, name] = client::splitObjectKey(key);
  client::ListParams params;
  params.labelSelector = std::string(kServiceNameLabel) + "=" + name + "," + kManagedByLabel + "=" +
                         kEndpointSliceControllerName;
  auto list = rest_.list(kSlices, ns, params);
  if (!list.ok()) return list.status();
  std::vector<json> existing;
  for (const auto& s : list->value("items", json::array())) existing.push_back(s);

  auto svc = services_.get(key);
  std::vector<json> desired;
  if (svc && hasSelector(*svc)) desired = buildEndpointSlices(*svc, podsSelectedBy(pods_, *svc));

  std::vector<bool> used(existing.size(), false);
  Status result;
  // Conflicts are retried by the next sync; other failures are also told on the Service.
  bool worthEvent = false;
  auto keep = [&](const Result<json>& r) {
    if (r.ok() || r.status().code() == 404) return;
    if (r.status().code() != 409) worthEvent = true;
    if (result.ok() || (result.code() == 409 && r.status().code() != 409)) result = r.status();
  };
  std::vector<json> toCreate;
  for (auto& want : desired) {
    // Reuse a slice with the same ports: endpoints move in place, names stay stable.
    size_t match = existing.size();
    for (size_t i = 0; i < existing.size(); ++i) {
      if (!used[i] && existing[i].value("ports", json::array()) == want["ports"]) {
        match = i;
        break;
      }
    }
    if (match == existing.size()) {
      toCreate.push_back(std::move(want));
      continue;
    }
    used[match] = true;
    const json& have = existing[match];
    if (sameContent(have, want)) continue;
    json updated = want;
    updated["metadata"]["name"] = have["metadata"]["name"];
    updated["metadata"]["resourceVersion"] = have["metadata"]["resourceVersion"];
    keep(rest_.update(kSlices, updated));
  }
  // Slices with other ports are recycled before new ones are created.
  for (size_t i = 0; i < existing.size() && !toCreate.empty(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    json updated = std::move(toCreate.back());
    toCreate.pop_back();
    updated["metadata"]["name"] = existing[i]["metadata"]["name"];
    updated["metadata"]["resourceVersion"] = existing[i]["metadata"]["resourceVersion"];
    keep(rest_.update(kSlices, updated));
  }
  for (auto& want : toCreate) {
    want["metadata"]["generateName"] = name + "-";
    keep(rest_.create(kSlices, ns, want));
  }
  for (size_t i = 0; i < existing.size(); ++i) {
    if (used[i]) continue;
    keep(rest_.remove(kSlices, ns, existing[i]["metadata"].value("name", "")));
  }
  if (worthEvent && events_ && svc) {
    json service = *svc;
    if (!service.contains("kind")) service["kind"] = "Service";
    events_->record(service, "Warning", "FailedToUpdateEndpointSlices",
                    "Error updating Endpoint Slices for Service " + key + ": " + result.message());
  }
  return result;
}

}  // namespace minik8s::controllers
