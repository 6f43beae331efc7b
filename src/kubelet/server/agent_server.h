// AgentServer: the node agent's HTTP API (the kubelet's port 10250), which the API server
// proxies pods/log and pods/exec to and the metrics API scrapes.
//
//   GET /healthz                                        "ok"
//   GET /containerLogs/{ns}/{pod}/{container}?follow=&tailLines=&sinceSeconds=&sinceTime=
//       &timestamps=&previous=&limitBytes=              text/plain, chunked while following
//   GET /exec/{ns}/{pod}/{container}?command=..&stdin=&stdout=&stderr=&tty=
//       WebSocket upgrade, v5.channel.k8s.io or v4.channel.k8s.io (see exec_session.h)
//   GET /stats/summary                                  JSON (see stats_summary.h)
//
// It finds containers through PodLookup, runs commands through ExecBackend and reads usage from
// StatsProvider, all borrowed (they must outlive the server). Plain HTTP for now. Thread-safe:
// one thread per connection.
#pragma once

#include <chrono>
#include <string>

#include "common/http.h"
#include "kubelet/server/exec_backend.h"
#include "kubelet/server/pod_lookup.h"
#include "kubelet/server/stats_summary.h"

namespace minik8s::kubelet::server {

struct AgentServerOptions {
  std::chrono::milliseconds logPollInterval{100};
};

class AgentServer {
 public:
  AgentServer(PodLookup& pods, ExecBackend& exec, StatsProvider& stats,
              AgentServerOptions options = {});
  ~AgentServer();
  AgentServer(const AgentServer&) = delete;
  AgentServer& operator=(const AgentServer&) = delete;

  // Listens on "host:port" (port 0 picks a free one).
  Status start(const std::string& listenAddress);
  int port() const { return http_.port(); }
  void stop();

  void handle(const http::Request& req, http::ResponseWriter& w);

 private:
  void serveLogs(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                 const std::string& pod, const std::string& container);
  void serveExec(const http::Request& req, http::ResponseWriter& w, const std::string& ns,
                 const std::string& pod, const std::string& container);

  PodLookup& pods_;
  ExecBackend& exec_;
  StatsProvider& stats_;
  AgentServerOptions options_;
  http::Server http_;
};

}  // namespace minik8s::kubelet::server
