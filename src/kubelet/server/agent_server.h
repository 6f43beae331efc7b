// AgentServer: the node agent's HTTP API (the kubelet's port 10250), which the API server
// proxies pods/log and pods/exec to and the metrics API scrapes.
//
//   GET /healthz                                        "ok"
//   GET /containerLogs/{ns}/{pod}/{container}?follow=&tailLines=&sinceSeconds=&sinceTime=
//       &timestamps=&previous=&limitBytes=              text/plain, chunked while following
//   GET /exec/{ns}/{pod}/{container}?command=..&stdin=&stdout=&stderr=&tty=
//       WebSocket upgrade, v5.channel.k8s.io or v4.channel.k8s.io (see exec_session.h)
//   GET /attach/{ns}/{pod}/{container}?stdin=&stdout=&stderr=&tty=
//       WebSocket upgrade, v5/v4.channel.k8s.io, relayed to the runtime (see attach_session.h)
//   GET|POST /portForward/{ns}/{pod}
//       WebSocket `SPDY/3.1+portforward.k8s.io` or `Upgrade: SPDY/3.1` with
//       portforward.k8s.io, relayed to the runtime (see port_forward.h)
//   GET /stats/summary                                  JSON (see stats_summary.h)
//   GET /metrics                                        Prometheus text
//   (metrics::defaultRegistry():
//                                                       kubelet_*, workqueue_*, process_*)
//   GET /metrics/cadvisor                               Prometheus text, cAdvisor's container_*
//                                                       and machine_* (see prometheus_stats.h)
//   GET /metrics/resource                               Prometheus text, the kubelet's resource
//                                                       metrics (node_/pod_/container_ cpu, memory)
//   The three /metrics endpoints answer 405 to other methods than GET; the last two read one
//   StatsProvider::summary() per scrape and report a failed one as a scrape error gauge.
//
// It finds containers through PodLookup, runs commands through ExecBackend and reads usage from
// StatsProvider and attaches and forwards ports through StreamingRuntime (optional: without it
// those two answer 501), all borrowed (they must outlive the server). With AgentServerOptions::tls
// it serves HTTPS and authenticates callers by client certificate (cluster CA): only the users and
// groups in the options may use logs, exec, stats and metrics (others 403, no certificate 401);
// /healthz stays open. Without it, plain HTTP and no checks (as before TLS). Thread-safe: one
// thread per connection.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/http.h"
#include "kubelet/server/exec_backend.h"
#include "kubelet/server/pod_lookup.h"
#include "kubelet/server/stats_summary.h"
#include "kubelet/server/streaming_runtime.h"

namespace minik8s::kubelet::server {

struct AgentServerOptions {
  std::chrono::milliseconds logPollInterval{100};
  // Serving certificate and key of the node, and clientCaPem: the cluster CA that client
  // certificates must chain to (required). requireClientCertificate is ignored: a caller without
  // a certificate completes the handshake and gets 401, as from a kubelet.
  std::optional<http::TlsServerConfig> tls;
  // Certificate identities (CN, O) allowed to call the API when tls is set.
  std::vector<std::string> allowedUsers{"kube-apiserver-kubelet-client"};
  std::vector<std::string> allowedGroups{"system:masters"};
};

class AgentServer {
 public:
  AgentServer(PodLookup& pods, ExecBackend& exec, StatsProvider& stats,
              AgentServerOptions options = {}, StreamingRuntime* streaming = nullptr);
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Listens on "host:port" (port 0 picks a free one).
  Status start(const std::string& listenAddress);
  int port() const { return http_.port(); }
  void stop();

  void handle(const http::Request& req, http::ResponseWriter& w);

 private:
  // OK, or 401 (no verified certificate) / 403 (an identity not allowed) when TLS is on.
  Status authorize(const http::Request& req) const;
  void serveStatsMetrics(http::ResponseWriter& w, bool cadvisor);
  void serveLogs(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                 const std::string& pod, const std::string& container);
  void serveExec(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                 const std::string& pod, const std::string& container);
  void serveAttach(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                   const std::string& pod, const std::string& container);
  void servePortForward(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                        const std::string& pod);

  PodLookup& pods_;
  ExecBackend& exec_;
  StatsProvider& stats_;
  StreamingRuntime* streaming_;
  AgentServerOptions options_;
  http::Server http_;
};

}  // namespace minik8s::kubelet::server
