#include "apiserver/node_proxy.h"

#include <vector>

#include "common/json_pointer.h"
#include "common/logging.h"
#include "common/stream.h"
#include "common/strings.h"
#include "common/tls.h"

namespace minik8s::apiserver {

namespace {

const char* kDefaultContainerAnnotation = "kubectl.kubernetes.io/default-container";

std::vector<std::string> containerNames(const json& pod) {
  std::vector<std::string> names;
  for (const char* field : {"containers", "initContainers", "ephemeralContainers"}) {
    const json spec = pod.value("spec", json::object());
    if (!spec.contains(field) || !spec[field].is_array()) continue;
    for (const auto& c : spec[field]) names.push_back(c.value("name", std::string()));
  }
  return names;
}

std::string podName(const json& pod) { return valueAt(pod, "/metadata/name", std::string()); }

// Appends name=value for every value of each named parameter, in the given order.
void copyParams(std::string& target, const http::Request& req,
                std::initializer_list<const char*> names) {
  bool first = target.find('?') == std::string::npos;
  for (const char* n : names) {
    for (const auto& v : req.params(n)) {
      target += first ? '?' : '&';
      first = false;
      target += std::string(n) + "=" + http::percentEncode(v);
    }
  }
}

// The forwarded request: our target, the agent as Host, the client's headers minus the ones
// that belong to the hop (credentials stay with us; the agent closes after answering unless the
// connection is upgraded).
std::string forwardedRequest(const http::Request& req, const std::string& target,
                             const NodeEndpoint& ep) {
  const bool upgrade = !req.header("Upgrade").empty();
  std::string out = req.method + " " + target + " HTTP/1.1\r\nHost: " + ep.host + ":" +
                    std::to_string(ep.port) + "\r\n";
  for (const auto& [k, v] : req.headers) {
    const std::string lower = asciiLower(k);
    if (lower == "host" || lower == "authorization" || lower == "connection" ||
        lower == "content-length" || lower == "transfer-encoding" || lower == "keep-alive") {
      continue;
    }
    out += k + ": " + v + "\r\n";
  }
  out += upgrade ? "Connection: Upgrade\r\n" : "Connection: close\r\n";
  out += "Content-Length: " + std::to_string(req.body.size()) + "\r\n\r\n";
  out += req.body;
  return out;
}

Result<std::shared_ptr<http::TlsContext>> agentTlsContext(const NodeProxyOptions& options) {
  if (!options.agentTls) return std::shared_ptr<http::TlsContext>();
  return http::TlsContext::forClient(*options.agentTls);
}

}  // namespace

Result<NodeEndpoint> nodeAgentEndpoint(const json& node) {
  NodeEndpoint ep;
  const json status = node.value("status", json::object());
  const json addresses = status.value("addresses", json::array());
  for (const char* type : {"InternalIP", "ExternalIP", "Hostname"}) {
    for (const auto& a : addresses) {
      if (a.value("type", "") == type && !a.value("address", "").empty()) {
        ep.host = a.value("address", "");
        break;
      }
    }
    if (!ep.host.empty()) break;
  }
  if (ep.host.empty()) {
    return Status::BadRequest("node \"" + valueAt(node, "/metadata/name", std::string()) +
                              "\" has no address in status.addresses");
  }
  auto port = valueAt(status, "/daemonEndpoints/kubeletEndpoint/Port", 0);
  if (port > 0 && port < 65536) ep.port = port;
  return ep;
}

Result<NodeEndpoint> nodeAgentEndpoint(Registry& registry, const std::string& nodeName) {
  const auto* nodes = registry.scheme().byResource("", "v1", "nodes");
  if (!nodes) return Status::Internal("the scheme has no nodes resource");
  auto node = registry.get(*nodes, "", nodeName);
  if (!node.ok()) return node.status();
  return nodeAgentEndpoint(*node);
}

Result<std::string> selectContainer(const json& pod, const http::Request& req) {
  auto names = containerNames(pod);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
  auto requested = req.param("container");
  if (requested && !requested->empty()) {
    for (const auto& n : names) {
      if (n == *requested) return n;
    }
    return Status::BadRequest("container " + *requested + " is not valid for pod " + podName(pod));
  }
  std::string annotated = valueAt(pod, "/metadata/annotations", json::object())
                              .value(kDefaultContainerAnnotation, std::string());
  for (const auto& n : names) {
    if (!annotated.empty() && n == annotated) return n;
  }
  const json containers = valueAt(pod, "/spec/containers", json::array());
  if (containers.size() == 1) return containers[0].value("name", std::string());
  return Status::BadRequest("a container name must be specified for pod " + podName(pod) +
                            ", choose one of: [" + list + "]");
}

Result<std::string> agentTarget(const json& pod, const http::Request& req,
                                const std::string& subresource) {
  std::string ns = valueAt(pod, "/metadata/namespace", std::string());
  if (subresource == "portforward") {
    // The kubelet's path; the ports travel in the SPDY streams' headers (and, as kubectl also
    // sends them, in `ports` parameters).
    std::string t =
        "/portForward/" + http::percentEncode(ns) + "/" + http::percentEncode(podName(pod));
    copyParams(t, req, {"ports"});
    return t;
  }
  auto container = selectContainer(pod, req);
  if (!container.ok()) return container.status();
  std::string path = "/" + http::percentEncode(ns) + "/" + http::percentEncode(podName(pod)) + "/" +
                     http::percentEncode(*container);
  if (subresource == "log") {
    std::string t = "/containerLogs" + path;
    copyParams(t, req,
               {"follow", "previous", "timestamps", "tailLines", "sinceSeconds", "sinceTime",
                "limitBytes"});
    return t;
  }
  if (subresource == "exec" || subresource == "attach") {
    std::string t = "/" + subresource + path;
    copyParams(t, req, {"command", "stdin", "stdout", "stderr", "tty"});
    return t;
  }
  return Status::NotFoundMessage("the " + subresource + " subresource cannot be proxied");
}

void proxyToNode(Registry& registry, const http::Request& req, http::ResponseWriter& w,
                 const RequestInfo& ri, const NodeProxyOptions& options) {
  auto fail = [&](const Status& s) { w.send(http::Response::error(s)); };
  const auto* pods = registry.scheme().byResource("", "v1", "pods");
  if (!pods) return fail(Status::Internal("the scheme has no pods resource"));
  auto pod = registry.get(*pods, ri.namespaceName, ri.name);
  if (!pod.ok()) return fail(pod.status());
  std::string nodeName = valueAt(*pod, "/spec/nodeName", std::string());
  if (nodeName.empty()) {
    return fail(Status::BadRequest("pod " + ri.name + " does not have a host assigned"));
  }
  auto target = agentTarget(*pod, req, ri.subresource);
  if (!target.ok()) return fail(target.status());
  auto ep = nodeAgentEndpoint(registry, nodeName);
  if (!ep.ok()) return fail(ep.status());

  auto tls = agentTlsContext(options);
  if (!tls.ok()) return fail(tls.status());
  auto agent = http::dialStream(ep->host, ep->port, tls->get(), std::chrono::seconds(5));
  if (!agent.ok()) {
    return fail(Status::Unavailable("cannot reach the agent of node " + nodeName + " at " +
                                    ep->host + ":" + std::to_string(ep->port) + ": " +
                                    agent.status().message()));
  }
  std::string forwarded = forwardedRequest(req, *target, *ep);
  if (!(*agent)->write(forwarded).ok()) {
    return fail(Status::Unavailable("the agent of node " + nodeName + " closed the connection"));
  }
  auto client = w.takeStream();
  if (!client) return fail(Status::Internal("this server cannot hand over connections"));
  http::relay(*client, **agent);
}

Result<http::Response> requestAgent(const NodeEndpoint& endpoint, const std::string& method,
                                    const std::string& target, const NodeProxyOptions& options) {
  const std::string host =
      endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host;
  const std::string url = std::string(options.agentTls ? "https://" : "http://") + host + ":" +
                          std::to_string(endpoint.port);
  http::Client client(url, options.agentTls.value_or(http::TlsClientConfig{}));
  return client.request(method, target);
}

}  // namespace minik8s::apiserver
