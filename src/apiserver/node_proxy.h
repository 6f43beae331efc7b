// The API server's side of pods/log, pods/exec and pods/attach: find the pod's node and relay
// the request to that node's agent (kubelet API, port 10250 by default).
//
// The relay is at the byte level: the request is forwarded with a rewritten target, then the
// client's connection is taken over (ResponseWriter::takeStream) and bytes flow both ways until
// the agent closes. So a chunked `logs -f` stream and an upgraded exec WebSocket (v4/v5 channel
// protocol) pass through unchanged, and each ends when either side ends. Either side may be TLS:
// with NodeProxyOptions::agentTls the API server dials the agent over TLS and presents its client
// certificate (Kubernetes' --kubelet-client-certificate). Errors found before relaying (pod not
// bound, node unknown, agent unreachable) are answered as Status objects.
// Functions are thread-safe; proxyToNode blocks the calling connection for the stream's life.
#pragma once

#include <optional>
#include <string>

#include "apiserver/registry.h"
#include "apiserver/request_info.h"
#include "common/http.h"
#include "common/http_client.h"

namespace minik8s::apiserver {

struct NodeEndpoint {
  std::string host;
  int port = 10250;
};

// The agent address of a Node object: status.addresses (InternalIP, then ExternalIP, then
// Hostname) and status.daemonEndpoints.kubeletEndpoint.Port (10250 when unset).
Result<NodeEndpoint> nodeAgentEndpoint(const json& node);
// Looks the node up in the registry.
Result<NodeEndpoint> nodeAgentEndpoint(Registry& registry, const std::string& nodeName);

// The container a log/exec/attach request addresses: the `container` parameter (checked against
// the pod), else the kubectl.kubernetes.io/default-container annotation, else the only
// container; BadRequest listing the choices otherwise.
Result<std::string> selectContainer(const json& pod, const http::Request& req);

// The agent's target for a pod subresource request ("log", "exec", "attach"), e.g.
// /containerLogs/ns/pod/c?follow=true&tailLines=10 or /exec/ns/pod/c?command=ls&stdin=true.
Result<std::string> agentTarget(const json& pod, const http::Request& req,
                                const std::string& subresource);

// How the API server talks to agents. Unset agentTls: plain HTTP (as before TLS). Set: HTTPS
// with this client configuration, typically {caPem: the cluster CA, certPem/keyPem:
// <data-dir>/pki/apiserver-kubelet-client.{crt,key}}; the agent's serving certificate is checked
// against the node address unless insecureSkipVerify.
struct NodeProxyOptions {
  std::optional<http::TlsClientConfig> agentTls;
};

// Serves GET pods/{name}/log and GET|POST pods/{name}/exec|attach by relaying to the agent.
void proxyToNode(Registry& registry, const http::Request& req, http::ResponseWriter& w,
                 const RequestInfo& ri, const NodeProxyOptions& options = {});

// One plain request to an agent (e.g. GET /stats/summary for the metrics API), over TLS when
// the options say so.
Result<http::Response> requestAgent(const NodeEndpoint& endpoint, const std::string& method,
                                    const std::string& target,
                                    const NodeProxyOptions& options = {});

}  // namespace minik8s::apiserver
