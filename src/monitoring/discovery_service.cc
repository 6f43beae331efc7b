#include "monitoring/discovery_service.h"

#include "common/strings.h"
#include "monitoring/service_discovery.h"

namespace minik8s::monitoring {

DiscoveryService::DiscoveryService(const client::ClientConfig& config, std::string prefix)
    : prefix_(std::move(prefix)),
      client_(config),
      nodes_(client_, client::resources::kNodes),
      pods_(client_, client::resources::kPods),
      services_(client_, client::resources::kServices),
      endpoints_(client_, client::resources::kEndpoints) {}

DiscoveryService::~DiscoveryService() { stop(); }

void DiscoveryService::start() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->start();
}

void DiscoveryService::stop() {
  for (auto* i : {&nodes_, &pods_, &services_, &endpoints_}) i->stop();
}

void DiscoveryService::serve(const http::Request& req, http::ResponseWriter& w) const {
  if (req.method != "GET" && req.method != "HEAD") {
    return w.send(http::Response::error(Status::MethodNotAllowed("service discovery: use GET")));
  }
  std::string role = req.path.substr(std::min(prefix_.size(), req.path.size()));
  while (!role.empty() && role.front() == '/') role.erase(0, 1);
  while (!role.empty() && role.back() == '/') role.pop_back();
  auto r = parseSdRole(role);
  if (!r.ok()) return w.send(http::Response::error(r.status()));
  for (const auto* i : {&nodes_, &pods_, &services_, &endpoints_}) {
    if (!i->hasSynced()) {
      return w.send(http::Response::error(
          Status::Unavailable("service discovery: the cluster's objects are still loading")));
    }
  }
  ClusterObjects objects;
  switch (*r) {
    case SdRole::kNode:
      objects.nodes = nodes_.list();
      break;
    case SdRole::kPod:
      objects.pods = pods_.list();
      break;
    case SdRole::kService:
      objects.services = services_.list();
      break;
    case SdRole::kEndpoints:
      objects.endpoints = endpoints_.list();
      objects.services = services_.list();
      objects.pods = pods_.list();
      break;
  }
  // kubernetes_sd's namespaces.names, as repeated or comma-separated parameters.
  std::vector<std::string> namespaces;
  for (const auto& v : req.params("namespace")) {
    for (auto& ns : splitNonEmpty(v, ',')) namespaces.push_back(std::move(ns));
  }
  w.send(http::Response::json(200, targetGroups(*r, objects, namespaces)));
}

}  // namespace minik8s::monitoring
