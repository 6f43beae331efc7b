// A synchronous HTTP/1.1 client on Boost.Beast with one keep-alive connection.
//
// One HttpClient is one connection to one server ("http://host:port", or "https://host:port"
// with TLS settings: the server certificate is checked against the CA and the host); it
// reconnects when the server closed it. Not thread-safe: give each thread its own client, except
// close(), which may be called from any thread. stream() reads a chunked response (a watch,
// logs -f) and hands each piece of body to a callback as it arrives.
//
// Nothing waits forever (ClientTimeouts): connecting (TCP and TLS handshake) is bounded, every
// wait while sending an ordinary request or reading its answer is bounded, and TCP keepalive
// with a user timeout notices a peer that vanished (host gone, network cut) on an idle
// connection or a stream, whose body itself has no deadline: a quiet but healthy watch lives on.
//
// A request is sent twice only when that cannot apply it twice: again on a fresh connection
// when a reused keep-alive connection broke before the request was sent entirely, or before
// any answer came for a GET, HEAD or OPTIONS.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/http.h"

namespace minik8s::http {

// How a client speaks TLS to an "https://" server.
struct TlsClientConfig {
  std::string caPem;    // trusted CA(s) for the server certificate; "" = the system's store
  std::string certPem;  // client certificate and key (optional)
  std::string keyPem;
  bool insecureSkipVerify = false;  // accept any server certificate (debugging only)
  std::string serverName;           // name to verify and send as SNI; "" = the URL's host
};

// Bounds on waiting for a server. Defaults follow client-go's transport (10 s TLS handshake,
// 30 s keepalive) and kube-apiserver's 60 s limit on ordinary requests.
struct ClientTimeouts {
  // TCP connect plus TLS handshake; a failure is Unavailable "cannot connect ..." or
  // "TLS handshake failed ...".
  std::chrono::milliseconds connect{10'000};
  // Longest wait for progress while sending an ordinary request or reading its answer (and the
  // response headers of a stream); past it the request fails with Timeout (504). A slow upload
  // or download that keeps moving is not cut. 0 = no limit.
  std::chrono::milliseconds request{60'000};
  // A peer that stops answering at the TCP level is given up after about this long: keepalive
  // probes start after half of it on an idle connection (3 probes), and data left unacknowledged
  // that long breaks the connection (TCP_USER_TIMEOUT). Whole seconds; 0 = the kernel's
  // defaults (hours).
  std::chrono::milliseconds deadPeer{30'000};
};

class Client {
 public:
  // "http://127.0.0.1:6443" or "https://..." (then `tls` applies; a TLS configuration that
  // cannot be loaded fails every request with its reason).
  explicit Client(const std::string& baseUrl, TlsClientConfig tls = {},
                  ClientTimeouts timeouts = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Failures: Unavailable (no connection, or it broke), Timeout (no progress within
  // ClientTimeouts::request). HTTP error statuses are answers, not failures.
  Result<Response> request(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           const std::vector<std::pair<std::string, std::string>>& headers = {});
  Result<Response> get(const std::string& target) { return request("GET", target); }

  // Sends a request and delivers the response body as it arrives; `onData` returns false to stop.
  // Returns the response status line and headers (empty body); Unavailable when the body broke
  // off before its end (server gone, dead peer, close()). The request and the response headers
  // are bounded by ClientTimeouts::request, the body only by ClientTimeouts::deadPeer.
  Result<Response> stream(const std::string& method, const std::string& target,
                          const std::function<bool(std::string_view)>& onData,
                          const std::vector<std::pair<std::string, std::string>>& headers = {});

  // Closes the connection (also wakes a request or stream() blocked in another thread).
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when `failure` (from Client::request or stream) means the server cannot have acted on
// the request: no connection could be made, or the request was never sent entirely. Such a
// request may be sent to another server whatever its method.
bool neverReachedServer(const Status& failure);

}  // namespace minik8s::http
