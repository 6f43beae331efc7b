// A connected byte stream (a TCP socket, plain or TLS) as the HTTP server, the HTTP client,
// WebSocket connections and the API server's node proxy see it.
//
// The server hands a Stream to a handler that takes over its connection (protocol upgrades), so
// upgraded protocols work the same over TLS. Thread-safety: one thread may read while another
// writes; shutdown() and peerClosed() may be called from any thread. A Stream owns its socket.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/http.h"
#include "common/status.h"

namespace minik8s::http {

class TlsContext;

class Stream {
 public:
  virtual ~Stream() = default;
  // Up to `n` bytes as soon as some are there; 0 at the end of the stream. Unavailable when the
  // connection broke or was shut down.
  virtual Result<size_t> read(char* out, size_t n) = 0;
  // Writes all of `data`.
  virtual Status write(std::string_view data) = 0;
  // Ends our sending side (TLS close_notify, then TCP FIN); the peer's data can still be read.
  virtual void closeWrite() = 0;
  // Wakes blocked reads and writes in any thread and makes later ones fail. The socket itself is
  // closed by the destructor.
  virtual void shutdown() = 0;
  // True when the peer ended its side or the connection broke (checked without blocking).
  virtual bool peerClosed() = 0;
  // The socket, for poll() and addresses; never read or write it directly.
  virtual int fd() const = 0;
  virtual bool isTls() const { return false; }
  // TLS: the subject of the peer's certificate when it was verified.
  virtual std::optional<PeerCertificate> peerCertificate() const { return std::nullopt; }
};

// A plain TCP stream owning `fd` (a connected, blocking socket).
std::unique_ptr<Stream> plainStream(int fd);

// Connects to host:port (a name, an IPv4 or an IPv6 address) within `timeout`; with `tls`, also
// runs the TLS handshake (the server certificate is checked against `host`).
Result<std::unique_ptr<Stream>> dialStream(
    const std::string& host, int port, const TlsContext* tls,
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Copies bytes both ways between `client` and `upstream` until the upstream closes or the client
// is gone: the client's bytes go up from a second thread, and when the client ends its side the
// upstream sees it end too and finishes. Both streams are shut down on return. Used to relay
// upgraded connections (exec, attach, port-forward) through the API server and the agent.
void relay(Stream& client, Stream& upstream);

// Whether `bytes` more can be written to `stream` at once without waiting for the peer: all
// written before has been sent, the send buffer has room for what still awaits acknowledgement
// and for `bytes`, and `bytes` is at most kImmediateWriteBytes. A thread that must not block on
// one slow client (the API server's watch delivery) writes only then.
inline constexpr size_t kImmediateWriteBytes = 16 * 1024;
bool canWriteImmediately(const Stream& stream, size_t bytes);

// "ip:port" of the peer ("[v6]:port" for IPv6); "" when unknown. Only the address with port=false.
std::string peerAddress(int fd, bool withPort = false);

}  // namespace minik8s::http
