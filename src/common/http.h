// HTTP request/response values and a small synchronous HTTP/1.1 server on Boost.Beast.
//
// The server runs one thread per connection (keep-alive supported), which keeps long-lived
// streams (watch, logs -f) simple: a handler writes chunks from its own thread and a slow client
// only ever blocks itself. Hostile clients are bounded by ServerLimits: body and header size
// (413/431 with a Status), open connections (429 beyond the bound), and read/write deadlines so a
// slow or silent client cannot hold a thread; a running handler itself (a watch) has no deadline.
// HttpServer is thread-safe; a ResponseWriter belongs to one request and is used from the
// handler's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"

namespace minik8s::http {

class Stream;  // common/stream.h

struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

// The subject of a client certificate the server verified against its client CA.
struct PeerCertificate {
  std::string commonName;
  std::vector<std::string> organizations;
  // False when the client sent a certificate the client CA did not sign (or an expired one):
  // servers with optional client certificates complete the handshake and answer 401, as
  // kube-apiserver does.
  bool verified = true;
};

struct Request {
  std::string method;                             // "GET", "POST", ...
  std::string target;                             // raw request target: path?query
  std::string path;                               // percent-decoded path
  std::multimap<std::string, std::string> query;  // decoded query parameters
  std::map<std::string, std::string, CaseInsensitiveLess> headers;
  std::string body;
  std::string remoteAddress;
  bool tls = false;                                  // arrived over TLS
  std::optional<PeerCertificate> clientCertificate;  // TLS with a verified client certificate

  std::string header(const std::string& name) const;
  std::optional<std::string> param(const std::string& name) const;
  std::vector<std::string> params(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static Response json(int status, const minik8s::json& body);
  static Response text(int status, std::string body);
  static Response error(const Status& s);  // the Status object as JSON with its HTTP code
};

// How a handler answers: either one complete response, or a chunked stream.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  virtual void send(Response response) = 0;
  // Starts a chunked response; then write() chunks and finally end().
  virtual bool beginStream(int status,
                           std::vector<std::pair<std::string, std::string>> headers) = 0;
  virtual bool write(std::string_view chunk) = 0;  // false once the client is gone
  // Writes the chunk only if that cannot wait for the client (http::canWriteImmediately): true
  // when written; false when it was not (or the client is gone), and the caller then writes it
  // with write(). For a thread that serves many streams and must not block on one of them; the
  // caller keeps it from overlapping the handler's own writes. Writers without a socket say false.
  virtual bool writeIfReady(std::string_view chunk);
  // False when writeIfReady() always declines (a writer without a socket).
  virtual bool writesIfReady() const { return false; }
  virtual void end() = 0;
  // True when the peer closed its side (checked without blocking).
  virtual bool clientGone() = 0;
  // Hands the connection over (for protocol upgrades such as WebSocket, plain or TLS); the
  // server forgets the connection afterwards. nullptr when this writer cannot.
  virtual std::unique_ptr<Stream> takeStream();
};

using Handler = std::function<void(const Request&, ResponseWriter&)>;

// Defaults follow kube-apiserver (3 MiB bodies, 1 MiB headers, 32 s to send the headers, 90 s
// idle keep-alive).
struct ServerLimits {
  size_t maxBodyBytes = 3 * 1024 * 1024;            // larger: 413 RequestEntityTooLarge
  size_t maxHeaderBytes = 1024 * 1024;              // larger: 431
  size_t maxConnections = 1024;                     // beyond: 429 TooManyRequests and close
  std::chrono::milliseconds headerTimeout{32'000};  // from the first byte (or the accept)
  std::chrono::milliseconds bodyTimeout{60'000};    // to receive the whole body
  std::chrono::milliseconds idleTimeout{90'000};    // between requests on a keep-alive connection
  std::chrono::milliseconds writeTimeout{60'000};   // per response write or stream chunk
};

// Serving TLS (TLS 1.2 and 1.3; ALPN offers only http/1.1 so HTTP/2 clients such as kubectl
// fall back to HTTP/1.1). The handshake runs in the connection's thread under headerTimeout, and
// a TLS connection counts against maxConnections like any other.
struct TlsServerConfig {
  std::string certPem;      // serving certificate (chain) ...
  std::string keyPem;       // ... and its key
  std::string clientCaPem;  // set: client certificates are verified against it (optional ones)
  bool requireClientCertificate = false;  // refuse handshakes without a valid one
};

class Server {
 public:
  explicit Server(Handler handler, ServerLimits limits = {});
  // Serves TLS instead of plain HTTP; call before start(). InvalidArgument for a bad key/cert.
  Status enableTls(const TlsServerConfig& config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds "host:port" (port 0 picks a free one) and starts accepting in the background.
  Status start(const std::string& listenAddress);
  int port() const { return port_; }
  // Stops accepting, closes every open connection and waits for their threads.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

// Splits "a=b&c=d" with percent-decoding ('+' is a space).
std::multimap<std::string, std::string> parseQuery(std::string_view query);
std::string percentDecode(std::string_view s, bool plusIsSpace);
std::string percentEncode(std::string_view s);

}  // namespace minik8s::http
