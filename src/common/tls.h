// TLS for streams: a TlsContext holds one side's settings (certificate, key, trusted CAs, ALPN)
// and runs handshakes on connected sockets, giving Streams (common/stream.h).
//
// Servers offer TLS 1.2 and 1.3 and only the ALPN protocol "http/1.1" (HTTP/2 clients such as
// kubectl fall back to it); client certificates are checked against the configured CA. Clients
// verify the server certificate against the host they dialled (DNS name or IP SAN) unless told
// to skip it. A TlsContext is safe to share between threads and immutable after creation, except
// for a certificate given by file (below).
//
// Certificate rotation: a certificate and key given as "file:<path>" (certPem and keyPem of
// TlsServerConfig or TlsClientConfig, both or neither) are read from those files, and read again
// at the next handshake after either changes on disk (inode, size or mtime): a renewed
// certificate reaches new connections without a restart while established streams (watches,
// exec) keep theirs. A changed pair that does not load or match (one file renamed into place, the
// other not yet) is logged and the last good pair kept; the first load must succeed.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/http.h"
#include "common/http_client.h"
#include "common/status.h"
#include "common/stream.h"

namespace minik8s::http {

inline constexpr char kFileReference[] = "file:";

class TlsContext {
 public:
  // InvalidArgument-style BadRequest for an unreadable certificate, key or CA.
  static Result<std::shared_ptr<TlsContext>> forServer(const TlsServerConfig& config);
  static Result<std::shared_ptr<TlsContext>> forClient(const TlsClientConfig& config);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Server handshake on `fd`, which the result owns (on failure the caller still owns and closes
  // it). Without a deadline of its own: the caller bounds it (the HTTP server's watchdog shuts
  // the socket down).
  Result<std::unique_ptr<Stream>> accept(int fd) const;
  // Client handshake on `fd` for `host` within `timeout`; ownership as for accept().
  Result<std::unique_ptr<Stream>> connect(int fd, const std::string& host,
                                          std::chrono::milliseconds timeout) const;

 private:
  struct Impl;
  explicit TlsContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace minik8s::http
