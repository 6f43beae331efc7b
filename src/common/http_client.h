// A synchronous HTTP/1.1 client on Boost.Beast with one keep-alive connection.
//
// One HttpClient is one connection to one server ("http://host:port", or "https://host:port"
// with TLS settings: the server certificate is checked against the CA and the host); it
// reconnects when the server closed it. Not thread-safe: give each thread its own client. stream() reads a chunked
// response (a watch, logs -f) and hands each piece of body to a callback as it arrives.
#pragma once

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

class Client {
 public:
  // "http://127.0.0.1:6443" or "https://..." (then `tls` applies; a TLS configuration that
  // cannot be loaded fails every request with its reason).
  explicit Client(const std::string& baseUrl, TlsClientConfig tls = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Result<Response> request(const std::string& method, const std::string& target,
                           const std::string& body = "",
                           const std::vector<std::pair<std::string, std::string>>& headers = {});
  Result<Response> get(const std::string& target) { return request("GET", target); }

  // Sends a request and delivers the response body as it arrives; `onData` returns false to stop.
  // Returns the response status line and headers (empty body).
  Result<Response> stream(const std::string& method, const std::string& target,
                          const std::function<bool(std::string_view)>& onData,
                          const std::vector<std::pair<std::string, std::string>>& headers = {});

  // Closes the connection (also wakes a stream() blocked in another thread).
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace minik8s::http
