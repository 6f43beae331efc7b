#include "monitoring/discovery_service.h"

#include "common/strings.h"
#include "monitoring/service_discovery.h"

namespace minik8s::monitoring {

void DiscoveryService::serve(const http::Request& req, http::ResponseWriter& w) const {
  if (req.method != "GET" && req.method != "HEAD") {
    return w.send(http::Response::error(Status::MethodNotAllowed("service discovery: use GET")));
  }
  std::string role = req.path.substr(std::min(prefix_.size(), req.path.size()));
  while (!role.empty() && role.front() == '/') role.erase(0, 1);
  while (!role.empty() && role.back() == '/') role.pop_back();
  auto r = parseSdRole(role);
  if (!r.ok()) return w.send(http::Response::error(r.status()));
  if (!cache_->ensureSynced(std::chrono::seconds(5))) {
    return w.send(http::Response::error(
        Status::Unavailable("service discovery: the cluster's objects are still loading")));
  }
  ClusterObjects objects;
  switch (*r) {
    case SdRole::kNode:
      objects.nodes = cache_->nodes();
      break;
    case SdRole::kPod:
      objects.pods = cache_->pods();
      break;
    case SdRole::kService:
      objects.services = cache_->services();
      break;
    case SdRole::kEndpoints:
      objects.endpoints = cache_->endpoints();
      objects.services = cache_->services();
      objects.pods = cache_->pods();
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
