#include "apiserver/request_info.h"

#include <sstream>
#include <vector>

namespace minik8s::apiserver {

namespace {
std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) parts.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) parts.push_back(std::move(cur));
  return parts;
}
}  // namespace

bool isLongRunning(const RequestInfo& ri) {
  const std::string& sub = ri.subresource;
  return ri.verb == "watch" || sub == "log" || sub == "exec" || sub == "attach" ||
         sub == "portforward" || sub == "proxy";
}

bool isTrueParam(const std::string& v) { return v == "true" || v == "1" || v == "True"; }

RequestInfo parseRequestInfo(const http::Request& req, const api::Scheme& scheme) {
  RequestInfo info;
  auto parts = splitPath(req.path);
  size_t i = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    info.version = parts[1];
    i = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    info.group = parts[1];
    info.version = parts[2];
    i = 3;
  } else {
    return info;
  }
  if (i >= parts.size()) return info;  // discovery of a group/version
  // namespaces/{ns}/{resource}... unless it is the namespace object itself.
  if (parts[i] == "namespaces" && i + 2 < parts.size() &&
      scheme.byResource(info.group, info.version, parts[i + 2]) != nullptr) {
    info.namespaceName = parts[i + 1];
    i += 2;
  } else if (parts[i] == "namespaces" && i + 2 < parts.size() && info.group.empty()) {
    // /api/v1/namespaces/{name}/{status|finalize}: the namespace's own subresource.
    const auto* nsInfo = scheme.byResource("", info.version, "namespaces");
    if (i + 3 == parts.size() && nsInfo && nsInfo->subresource(parts[i + 2])) {
      info.resource = "namespaces";
      info.name = parts[i + 1];
      info.subresource = parts[i + 2];
      i = parts.size();
    } else {
      info.namespaceName = parts[i + 1];
      i += 2;
    }
  }
  if (i < parts.size()) info.resource = parts[i++];
  if (i < parts.size()) info.name = parts[i++];
  if (i < parts.size()) info.subresource = parts[i++];
  // Deeper paths are not resources we serve, except what follows a proxy subresource
  // (nodes/{name}/proxy/metrics): the path the request is relayed to.
  if (i < parts.size() && info.subresource != "proxy") return info;
  info.isResourceRequest = !info.resource.empty();
  info.info = scheme.byResource(info.group, info.version, info.resource);
  if (info.info && !info.info->namespaced && info.resource != "namespaces") {
    info.namespaceName.clear();
  }
  // Namespaces are named by the URL itself: /api/v1/namespaces/foo.
  if (info.resource == "namespaces") info.namespaceName.clear();

  const std::string& m = req.method;
  bool watch = isTrueParam(req.param("watch").value_or(""));
  if (m == "GET" || m == "HEAD") {
    info.verb = watch ? "watch" : (info.name.empty() ? "list" : "get");
  } else if (m == "POST") {
    info.verb = "create";
  } else if (m == "PUT") {
    info.verb = "update";
  } else if (m == "PATCH") {
    info.verb = "patch";
  } else if (m == "DELETE") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  } else {
    info.verb = m;
  }
  return info;
}

}  // namespace minik8s::apiserver
