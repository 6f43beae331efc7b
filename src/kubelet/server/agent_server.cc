#include "kubelet/server/agent_server.h"

#include <unistd.h>

#include "common/logging.h"
#include "common/metrics.h"
#include "common/spdy.h"
#include "common/websocket.h"
#include "kubelet/server/attach_session.h"
#include "kubelet/server/container_log.h"
#include "kubelet/server/exec_session.h"
#include "kubelet/server/port_forward.h"
#include "kubelet/server/prometheus_stats.h"

namespace minik8s::kubelet::server {

namespace {

std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

bool flag(const http::Request& req, const std::string& name, bool dflt) {
  auto v = req.param(name);
  if (!v) return dflt;
  return *v == "true" || *v == "1" || *v == "True";
}

// The channel protocol (v5, else v4) of an exec or attach WebSocket upgrade, or the error to
// answer.
Result<std::string> channelProtocol(const http::Request& req, const std::string& what) {
  if (!ws::isUpgradeRequest(req)) {
    return Status::BadRequest(what +
                              " needs a WebSocket upgrade with protocol v5.channel.k8s.io or "
                              "v4.channel.k8s.io");
  }
  std::string protocol = ws::chooseProtocol(req, {kChannelV5, kChannelV4});
  if (protocol.empty()) {
    return Status::BadRequest("unsupported streaming protocol \"" +
                              req.header("Sec-WebSocket-Protocol") +
                              "\": supported are v5.channel.k8s.io, v4.channel.k8s.io");
  }
  return protocol;
}

// stdin/stdout/stderr/tty as exec and attach read them (a terminal merges stderr into stdout).
template <typename Spec>
void readStreamFlags(const http::Request& req, Spec& spec) {
  spec.tty = flag(req, "tty", false);
  spec.stdin = flag(req, "stdin", false);
  spec.stdout = flag(req, "stdout", true);
  spec.stderr = flag(req, "stderr", !spec.tty) && !spec.tty;
}

}  // namespace

AgentServer::AgentServer(PodLookup& pods, ExecBackend& exec, StatsProvider& stats,
                         AgentServerOptions options, StreamingRuntime* streaming)
    : pods_(pods),
      exec_(exec),
      stats_(stats),
      streaming_(streaming),
      options_(options),
      http_([this](const http::Request& req, http::ResponseWriter& w) { handle(req, w); }) {}

AgentServer::~AgentServer() { stop(); }

Status AgentServer::start(const std::string& listenAddress) {
  if (options_.tls) {
    if (options_.tls->clientCaPem.empty()) {
      return Status::BadRequest("the agent's TLS configuration needs the cluster CA (clientCaPem)");
    }
    http::TlsServerConfig tls = *options_.tls;
    tls.requireClientCertificate = false;  // answered with 401 instead of a failed handshake
    if (Status s = http_.enableTls(tls); !s.ok()) return s;
  }
  return http_.start(listenAddress);
}

Status AgentServer::authorize(const http::Request& req) const {
  if (!options_.tls) return Status::Ok();
  if (!req.clientCertificate || !req.clientCertificate->verified)
    return Status::Unauthorized("Unauthorized");
  const http::PeerCertificate& who = *req.clientCertificate;
  for (const auto& user : options_.allowedUsers) {
    if (who.commonName == user) return Status::Ok();
  }
  for (const auto& group : options_.allowedGroups) {
    for (const auto& org : who.organizations) {
      if (org == group) return Status::Ok();
    }
  }
  // The kubelet's wording for a denied caller.
  return Status::Forbidden("Forbidden (user=" + who.commonName +
                           ", verb=" + (req.method == "GET" ? "get" : "create") +
                           ", resource=nodes, subresource=proxy)");
}

void AgentServer::stop() { http_.stop(); }

void AgentServer::handle(const http::Request& req, http::ResponseWriter& w) {
  auto parts = splitPath(req.path);
  if (req.path == "/healthz") return w.send(http::Response::text(200, "ok"));
  if (Status s = authorize(req); !s.ok()) return w.send(http::Response::error(s));
  if (req.path == "/metrics") {
    if (req.method != "GET")
      return w.send(http::Response::error(Status::MethodNotAllowed("use GET")));
    return w.send(metrics::metricsResponse(metrics::defaultRegistry()));
  }
  if (req.path == "/metrics/cadvisor" || req.path == "/metrics/resource") {
    if (req.method != "GET")
      return w.send(http::Response::error(Status::MethodNotAllowed("use GET")));
    return serveStatsMetrics(w, req.path == "/metrics/cadvisor");
  }
  if (req.path == "/stats/summary" || req.path == "/stats/summary/") {
    auto s = stats_.summary();
    if (!s.ok()) return w.send(http::Response::error(s.status()));
    return w.send(http::Response::json(200, summaryToJson(*s)));
  }
  if (parts.size() == 4 && parts[0] == "containerLogs") {
    if (req.method != "GET")
      return w.send(http::Response::error(Status::MethodNotAllowed("use GET")));
    return serveLogs(req, w, parts[1], parts[2], parts[3]);
  }
  if (parts.size() == 4 && parts[0] == "exec") {
    return serveExec(req, w, parts[1], parts[2], parts[3]);
  }
  if (parts.size() == 4 && parts[0] == "attach") {
    return serveAttach(req, w, parts[1], parts[2], parts[3]);
  }
  if (parts.size() == 3 && parts[0] == "portForward") {
    return servePortForward(req, w, parts[1], parts[2]);
  }
  w.send(http::Response::error(Status::NotFoundMessage("404 page not found: " + req.path)));
}

void AgentServer::serveStatsMetrics(http::ResponseWriter& w, bool cadvisor) {
  // A failed summary is a scrape error inside a 200 answer, as the kubelet reports it.
  auto summary = stats_.summary();
  if (!summary.ok())
    LOG_WARN("stats for {}: {}", cadvisor ? "cadvisor" : "resource metrics",
             summary.status().toString());
  http::Response r;
  r.headers = {{"Content-Type", metrics::kExpositionContentType}};
  r.body = cadvisor ? renderCadvisorMetrics(summary) : renderResourceMetrics(summary);
  w.send(std::move(r));
}

void AgentServer::serveLogs(const http::Request& req, http::ResponseWriter& w,
                            const std::string& ns, const std::string& pod,
                            const std::string& container) {
  auto opts = parseLogOptions(req, Clock::now());
  if (!opts.ok()) return w.send(http::Response::error(opts.status()));
  auto loc = pods_.findContainer(ns, pod, container, opts->previous);
  if (!loc.ok()) return w.send(http::Response::error(loc.status()));
  if (::access(loc->logPath.c_str(), R_OK) != 0) {
    return w.send(http::Response::error(Status::NotFoundMessage(
        "no logs yet for container \"" + container + "\" in pod \"" + pod + "\"")));
  }
  if (!w.beginStream(200, {{"Content-Type", "text/plain"}})) return;
  const std::string id = loc->containerId;
  // Following ends when the client leaves or the container instance stopped (after the rest of
  // its file was printed).
  auto keepFollowing = [&] {
    if (w.clientGone()) return false;
    auto now = pods_.findContainer(ns, pod, container, false);
    return now.ok() && now->containerId == id && now->running;
  };
  auto sink = [&](std::string_view chunk) { return w.write(chunk); };
  Status s = streamContainerLog(loc->logPath, *opts, sink, keepFollowing, options_.logPollInterval);
  if (!s.ok()) LOG_WARN("logs of {}/{}/{}: {}", ns, pod, container, s.toString());
  w.end();
}

void AgentServer::serveExec(const http::Request& req, http::ResponseWriter& w,
                            const std::string& ns, const std::string& pod,
                            const std::string& container) {
  auto chosen = channelProtocol(req, "exec");
  if (!chosen.ok()) return w.send(http::Response::error(chosen.status()));
  const std::string protocol = *chosen;
  ExecSpec spec;
  spec.command = req.params("command");
  readStreamFlags(req, spec);
  if (spec.command.empty()) {
    return w.send(http::Response::error(
        Status::BadRequest("you must specify at least one command for the container")));
  }
  auto loc = pods_.findContainer(ns, pod, container, false);
  if (!loc.ok()) return w.send(http::Response::error(loc.status()));
  if (!loc->running) {
    return w.send(http::Response::error(
        Status::BadRequest("container " + container + " is not running in pod " + pod)));
  }
  spec.containerId = loc->containerId;
  auto stream = w.takeStream();
  if (!stream) {
    return w.send(http::Response::error(Status::Internal("cannot take over the connection")));
  }
  auto conn = ws::acceptUpgrade(std::move(stream), req, protocol);
  if (!conn.ok()) return;
  auto process = exec_.start(spec);
  if (!process.ok()) {
    failExecSession(**conn, process.status());
    return;
  }
  [[maybe_unused]] int code = runExecSession(**conn, **process);
  LOG_DEBUG("exec in {}/{}/{} ended with {}", ns, pod, container, code);
}

void AgentServer::serveAttach(const http::Request& req, http::ResponseWriter& w,
                              const std::string& ns, const std::string& pod,
                              const std::string& container) {
  if (!streaming_) {
    return w.send(http::Response::error(
        Status(501, "NotImplemented", "attach is not supported by this agent")));
  }
  auto chosen = channelProtocol(req, "attach");
  if (!chosen.ok()) return w.send(http::Response::error(chosen.status()));
  const std::string protocol = *chosen;
  AttachSpec spec;
  readStreamFlags(req, spec);
  if (!spec.stdin && !spec.stdout && !spec.stderr) {
    return w.send(http::Response::error(
        Status::BadRequest("you must specify at least one of stdin, stdout, stderr")));
  }
  auto loc = pods_.findContainer(ns, pod, container, false);
  if (!loc.ok()) return w.send(http::Response::error(loc.status()));
  if (!loc->running) {
    return w.send(http::Response::error(
        Status::BadRequest("container " + container + " is not running in pod " + pod)));
  }
  spec.containerId = loc->containerId;
  auto url = streaming_->attachUrl(spec);
  if (!url.ok()) return w.send(http::Response::error(url.status()));
  auto upstream = spdy::dialUpgrade(*url, {kRemoteCommandV4});
  if (!upstream.ok()) return w.send(http::Response::error(upstream.status()));
  auto stream = w.takeStream();
  if (!stream) {
    return w.send(http::Response::error(Status::Internal("cannot take over the connection")));
  }
  auto conn = ws::acceptUpgrade(std::move(stream), req, protocol);
  if (!conn.ok()) return;
  runAttachSession(**conn, std::move(upstream).value(), spec);
}

void AgentServer::servePortForward(const http::Request& req, http::ResponseWriter& w,
                                   const std::string& ns, const std::string& pod) {
  if (!streaming_) {
    return w.send(http::Response::error(
        Status(501, "NotImplemented", "port forwarding is not supported by this agent")));
  }
  const bool websocket = ws::isUpgradeRequest(req);
  std::string wsProtocol;
  if (websocket) {
    wsProtocol = ws::chooseProtocol(req, {kPortForwardTunnelProtocol});
    if (wsProtocol.empty()) {
      return w.send(http::Response::error(Status::BadRequest(
          "unsupported port-forward protocol \"" + req.header("Sec-WebSocket-Protocol") +
          "\": supported is " + kPortForwardTunnelProtocol)));
    }
  } else if (!spdy::isUpgradeRequest(req)) {
    return w.send(http::Response::error(Status::BadRequest(
        "port forwarding needs an upgrade to SPDY/3.1 (portforward.k8s.io) or a WebSocket with "
        "protocol SPDY/3.1+portforward.k8s.io")));
  } else {
    // One offer per header line (the last one here) or a comma-separated list.
    bool offered = false;
    std::string offers = req.header(spdy::kProtocolHeader) + ",";
    for (size_t start = 0, comma; (comma = offers.find(',', start)) != std::string::npos;
         start = comma + 1) {
      std::string p = offers.substr(start, comma - start);
      p.erase(0, p.find_first_not_of(' '));
      p.erase(p.find_last_not_of(' ') + 1);
      offered |= p == kPortForwardProtocol;
    }
    if (!offered) {
      return w.send(http::Response::error(
          Status::Forbidden("unable to upgrade: no common protocol: the agent supports " +
                            std::string(kPortForwardProtocol))));
    }
  }
  auto url = streaming_->portForwardUrl(ns, pod);
  if (!url.ok()) return w.send(http::Response::error(url.status()));
  auto upstream = spdy::dialUpgrade(*url, {kPortForwardProtocol});
  if (!upstream.ok()) return w.send(http::Response::error(upstream.status()));
  auto stream = w.takeStream();
  if (!stream) {
    return w.send(http::Response::error(Status::Internal("cannot take over the connection")));
  }
  if (websocket) {
    auto conn = ws::acceptUpgrade(std::move(stream), req, wsProtocol);
    if (!conn.ok()) return;
    return relayTunnel(**conn, *upstream->stream, upstream->alreadyRead);
  }
  if (!spdy::acceptUpgrade(*stream, kPortForwardProtocol).ok()) return;
  if (!upstream->alreadyRead.empty() && !stream->write(upstream->alreadyRead).ok()) return;
  http::relay(*stream, *upstream->stream);
}

}  // namespace minik8s::kubelet::server
