// SidecarProxy: the mesh's sidecar (what `minik8s mesh-proxy` runs in every meshed pod).
//
//   :15001 outbound  connections the pod's iptables redirected (mesh-init). The original
//                    destination comes from getsockopt(SO_ORIGINAL_DST). A Service's
//                    clusterIP:port with an HTTP port is parsed as HTTP/1.1 (Beast) and each
//                    request is routed by the service's VirtualService routes (match, weighted
//                    subsets, timeout, retries) to one endpoint (round robin); keep-alive and
//                    chunked bodies work; an upgrade (WebSocket) answered 101 continues as TCP
//                    to that endpoint. Anything else is relayed as plain TCP to the original
//                    destination.
//   :15006 inbound   relayed as plain TCP to 127.0.0.1:<original port> (the application), or to
//                    the original destination when nothing listens on loopback. What it accepts
//                    follows the pod's PeerAuthentication: a ClientHello offering ALPN
//                    "istio-peer-exchange" is mutual TLS from another sidecar (terminated here;
//                    the client's certificate must chain to the trust bundle and name a SPIFFE
//                    identity); anything else is plain text, closed with a reset under STRICT.
//   :15090 metrics   GET /metrics (Prometheus text), GET /registry (the MeshConfig this proxy
//                    routes with, as JSON: read-only), GET /certs (the workload certificate's
//                    SPIFFE ID and validity), GET /healthz.
//
// Mutual TLS on the way out: toward an endpoint pod that has a sidecar and whose policy is not
// DISABLE, once setCredentials() gave this proxy a certificate, the connection is TLS with this
// workload's certificate, and the server's certificate must name the endpoint pod's service
// account (spiffe://cluster.local/ns/NS/sa/SA). Other destinations get plain text.
//
// One thread runs all connections on one io_context (C++20 coroutines), so the proxy stays
// small. The proxy's own sockets belong to UID 1337, which the pod's rules leave alone.
// setConfig() may be called from any thread; requests read the config current when they start.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"
#include "mesh/identity.h"
#include "mesh/mesh_config.h"

namespace minik8s::mesh {

struct ProxyOptions {
  std::string bindAddress = "0.0.0.0";
  int outboundPort = 15001;  // 0 = any free port (tests)
  int inboundPort = 15006;
  int metricsPort = 15090;
  // Where a redirected connection was going ("ip", port); the default reads SO_ORIGINAL_DST.
  // Tests fake it, since they connect to the proxy directly.
  std::function<std::optional<std::pair<std::string, int>>(int fd)> originalDestination;
  std::string inboundTarget = "127.0.0.1";
  // The pod this sidecar serves: its PeerAuthentication (by namespace and the labels the
  // registry has for it) decides what the inbound listener accepts.
  std::string podNamespace, podName;
  // Plain text from these addresses passes even under STRICT: the node's own address on the pod
  // network (the pod's default gateway), where the kubelet's probes come from. Istio rewrites
  // probes through its agent instead; mesh-proxy fills this from /proc/net/route.
  std::vector<std::string> probeSources;
  uint64_t seed = 0;                      // 0 = random
  metrics::Registry* registry = nullptr;  // null = metrics::defaultRegistry()
};

// SO_ORIGINAL_DST of an accepted IPv4 socket; nullopt when it was not redirected.
std::optional<std::pair<std::string, int>> originalDestinationOf(int fd);

class SidecarProxy {
 public:
  explicit SidecarProxy(ProxyOptions options);
  ~SidecarProxy();
  SidecarProxy(const SidecarProxy&) = delete;
  SidecarProxy& operator=(const SidecarProxy&) = delete;

  Status start();  // binds the three listeners, starts the thread
  void stop();

  void setConfig(std::shared_ptr<const MeshConfig> config);
  // The workload certificate, its key and the trust bundle for mutual TLS; again at each
  // rotation: new connections use the new certificate, established ones keep theirs.
  // BadRequest when they do not load or do not match.
  Status setCredentials(const WorkloadCredentials& credentials);
  std::shared_ptr<const MeshConfig> config() const;

  // The ports bound (after start(); differ from the options when those were 0).
  int outboundPort() const { return outboundPort_; }
  int inboundPort() const { return inboundPort_; }
  int metricsPort() const { return metricsPort_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int outboundPort_ = 0, inboundPort_ = 0, metricsPort_ = 0;
};

}  // namespace minik8s::mesh
