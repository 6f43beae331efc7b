#include "apiserver/node_proxy.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"

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

std::string podName(const json& pod) {
  return pod.value("/metadata/name"_json_pointer, std::string());
}

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

int connectTo(const NodeEndpoint& ep, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(ep.port);
  if (int rc = getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &res); rc != 0 || !res) {
    error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    error = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

bool sendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
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
    std::string lower = k;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

// Copies bytes both ways until the agent closes (or both sides are done).
void relay(int client, int agent) {
  bool clientOpen = true, agentOpen = true;
  char buf[32 * 1024];
  while (agentOpen) {
    pollfd p[2] = {{agent, POLLIN, 0}, {client, static_cast<short>(clientOpen ? POLLIN : 0), 0}};
    int r = ::poll(p, 2, 1000);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::recv(agent, buf, sizeof(buf), 0);
      if (n <= 0) {
        agentOpen = false;
      } else if (!sendAll(client, buf, static_cast<size_t>(n))) {
        break;  // the client is gone
      }
    }
    if (clientOpen && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::recv(client, buf, sizeof(buf), 0);
      if (n <= 0) {
        clientOpen = false;
        ::shutdown(agent, SHUT_WR);  // the agent sees the client leave and ends its stream
      } else if (!sendAll(agent, buf, static_cast<size_t>(n))) {
        break;
      }
    }
  }
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
    return Status::BadRequest("node \"" + node.value("/metadata/name"_json_pointer, std::string()) +
                              "\" has no address in status.addresses");
  }
  auto port = status.value("/daemonEndpoints/kubeletEndpoint/Port"_json_pointer, 0);
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
  std::string annotated = pod.value("/metadata/annotations"_json_pointer, json::object())
                              .value(kDefaultContainerAnnotation, std::string());
  for (const auto& n : names) {
    if (!annotated.empty() && n == annotated) return n;
  }
  const json containers = pod.value("/spec/containers"_json_pointer, json::array());
  if (containers.size() == 1) return containers[0].value("name", std::string());
  return Status::BadRequest("a container name must be specified for pod " + podName(pod) +
                            ", choose one of: [" + list + "]");
}

Result<std::string> agentTarget(const json& pod, const http::Request& req,
                                const std::string& subresource) {
  auto container = selectContainer(pod, req);
  if (!container.ok()) return container.status();
  std::string ns = pod.value("/metadata/namespace"_json_pointer, std::string());
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
                 const RequestInfo& ri) {
  auto fail = [&](const Status& s) { w.send(http::Response::error(s)); };
  const auto* pods = registry.scheme().byResource("", "v1", "pods");
  if (!pods) return fail(Status::Internal("the scheme has no pods resource"));
  auto pod = registry.get(*pods, ri.namespaceName, ri.name);
  if (!pod.ok()) return fail(pod.status());
  std::string nodeName = pod->value("/spec/nodeName"_json_pointer, std::string());
  if (nodeName.empty()) {
    return fail(Status::BadRequest("pod " + ri.name + " does not have a host assigned"));
  }
  auto target = agentTarget(*pod, req, ri.subresource);
  if (!target.ok()) return fail(target.status());
  auto ep = nodeAgentEndpoint(registry, nodeName);
  if (!ep.ok()) return fail(ep.status());

  std::string error;
  int agent = connectTo(*ep, error);
  if (agent < 0) {
    return fail(Status::Unavailable("cannot reach the agent of node " + nodeName + " at " +
                                    ep->host + ":" + std::to_string(ep->port) + ": " + error));
  }
  std::string forwarded = forwardedRequest(req, *target, *ep);
  if (!sendAll(agent, forwarded.data(), forwarded.size())) {
    ::close(agent);
    return fail(Status::Unavailable("the agent of node " + nodeName + " closed the connection"));
  }
  int client = w.takeSocket();
  if (client < 0) {
    ::close(agent);
    return fail(Status::Internal("this server cannot hand over connections"));
  }
  relay(client, agent);
  ::close(agent);
  ::shutdown(client, SHUT_RDWR);
  ::close(client);
}

}  // namespace minik8s::apiserver
