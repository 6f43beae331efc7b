// RequestInfo: what a REST request addresses, parsed from its path, method and query.
//
//   /api/v1/namespaces/default/pods/web/status  -> group "", version v1, namespace default,
//                                                 resource pods, name web, subresource status
//   /apis/apps/v1/deployments?watch=1           -> verb watch, all namespaces
// Pure function of the request and the scheme; thread-safe.
#pragma once

#include <string>

#include "api/scheme.h"
#include "common/http.h"

namespace minik8s::apiserver {

struct RequestInfo {
  bool isResourceRequest = false;
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string group, version;
  std::string namespaceName;  // "" = all namespaces (or cluster-scoped)
  std::string resource;       // plural
  std::string name;
  std::string subresource;
  const api::ResourceInfo* info = nullptr;  // set when the resource is known
};

// Parses /api/... and /apis/... resource paths. Not a resource path -> isResourceRequest false.
RequestInfo parseRequestInfo(const http::Request& req, const api::Scheme& scheme);

// kube-apiserver's long-running requests: watches and the streaming subresources (log, exec,
// attach, portforward, proxy). They hold no in-flight seat (flow_control.h).
bool isLongRunning(const RequestInfo& ri);

// "true", "1", "True" are true (clients differ).
bool isTrueParam(const std::string& v);

}  // namespace minik8s::apiserver
