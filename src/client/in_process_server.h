// InProcessServer: the API server of this process as a RestClient's transport, without a socket.
//
// `minik8s server` runs its scheduler, controllers and monitoring next to the API server they
// talk to. Through an InProcessServer (ClientConfig::inProcess) their requests are http::Requests
// handed to the server's top-level http::Handler - the chain every HTTP request goes through:
// authentication, authorisation, flow control, metrics, routing - on the caller's thread, and the
// answer is captured by a ResponseWriter instead of being written to a connection. A watch is the
// same with a writer that hands each chunk to the caller as it is written: no TLS, no loopback
// socket, no server thread per watch.
//
// Identity: a request made with a PeerCertificate carries it as a verified client certificate
// over TLS (tls = true), which is exactly what x509 authentication sees for a real one; without
// one it carries neither (a bearer token header authenticates it, as over plain HTTP).
//
// A stream (watch) ends when the handler ends it, when the caller's `gone` says so (a cancelled
// watch) or at stopStreams(): the handler's write() then fails and clientGone() is true, so it
// ends at its next write or client check (the API server checks every 500 ms). A stream asked
// after stopStreams() waits (up to 10 s) for its `gone` and fails, as one to a server that
// stopped answering: the informers of a stopping process, stopped one after another, neither
// spin nor sleep in back-off meanwhile, and none waits for a handler's next client check.
// Upgrades and relays (a pod's log, exec, port-forward, proxy) cannot go in-process:
// takeStream() gives nullptr; servesInProcess() tells which requests those are.
//
// Thread-safe. setHandler() before the first request; requests before it, or after stop(), are
// Unavailable (as a server that cannot be reached).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http.h"
#include "common/status.h"

namespace minik8s::client {

class InProcessServer {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // The top-level handler of the API server (the one its http::Server serves).
  void setHandler(http::Handler handler);
  // Ends every stream in flight (their handlers see the client gone) and every later one
  // (Unavailable); requests are still served. For the server's shutdown, before its components
  // stop (they still release their Leases).
  void stopStreams();
  // stopStreams(), and requests are refused with Unavailable too.
  void stop();
  bool stopped() const { return stopped_.load(); }

  // Whether a request to `target` (path?query) can be served in-process: not a pod's log, exec,
  // attach or portforward, nor a proxy subresource, which the API server answers by handing the
  // connection over (takeStream) to the node agent or the proxied backend. A RestClient sends
  // those over its URL instead.
  static bool servesInProcess(std::string_view target);

  // One request; the whole answer (a streamed one assembled). `target` is path?query as sent
  // over HTTP (percent-encoded).
  Result<http::Response> request(const std::optional<http::PeerCertificate>& identity,
                                 const std::string& method, const std::string& target,
                                 const std::string& body, const Headers& headers) const;

  // A streamed request: each chunk of a successful (< 300) answer goes to onData as the handler
  // writes it; onData returning false, or `gone` (optional, polled) returning true, ends it as a
  // client that went away. Returns the status and headers, with the body of an answer >= 300.
  Result<http::Response> stream(const std::optional<http::PeerCertificate>& identity,
                                const std::string& method, const std::string& target,
                                const Headers& headers,
                                const std::function<bool(std::string_view)>& onData,
                                const std::function<bool()>& gone) const;

 private:
  // The handler, or nullptr when none is set or the server is stopped.
  std::shared_ptr<const http::Handler> handler() const;
  http::Request makeRequest(const std::optional<http::PeerCertificate>& identity,
                            const std::string& method, const std::string& target,
                            const std::string& body, const Headers& headers) const;

  mutable std::mutex mu_;
  std::shared_ptr<const http::Handler> handler_;
  std::atomic<bool> streamsStopped_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace minik8s::client
