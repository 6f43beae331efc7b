// A small RFC 6455 WebSocket endpoint over a connected byte stream (plain or TLS).
//
// Used for the Kubernetes streaming protocols (exec/attach over v4/v5.channel.k8s.io): the HTTP
// server hands over the connection (ResponseWriter::takeStream), acceptUpgrade() answers the
// handshake, and a Connection then exchanges whole messages. dial() is the client side (tests,
// tools). A Connection owns its stream. Thread-safety: one thread may read while others
// write; writes are serialized internally; close()/shutdown() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/http.h"
#include "common/status.h"
#include "common/stream.h"
#include "common/tls.h"

namespace minik8s::ws {

enum class Opcode : uint8_t {
  kContinuation = 0,
  kText = 1,
  kBinary = 2,
  kClose = 8,
  kPing = 9,
  kPong = 10
};

struct Message {
  Opcode opcode = Opcode::kBinary;  // kText, kBinary or kClose (pings are answered internally)
  std::string payload;              // for kClose: 2-byte code + reason, possibly empty
};

// The Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key.
std::string acceptKey(std::string_view clientKey);

// True when the request asks for a WebSocket upgrade.
bool isUpgradeRequest(const http::Request& req);

// Picks the first of `supported` (in our order of preference) that the client offered in
// Sec-WebSocket-Protocol; "" when none matches.
std::string chooseProtocol(const http::Request& req, const std::vector<std::string>& supported);

class Connection {
 public:
  // A client connection masks what it sends, as RFC 6455 requires. `alreadyRead`: bytes of the
  // stream read before the first frame.
  Connection(std::unique_ptr<http::Stream> stream, bool isClient, std::string alreadyRead = "");
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Blocks for the next data or close message. Fails when the connection is broken.
  Result<Message> read();
  Status writeBinary(std::string_view payload) { return writeFrame(Opcode::kBinary, payload); }
  Status writeText(std::string_view payload) { return writeFrame(Opcode::kText, payload); }
  // Sends a close frame (at most once).
  Status writeClose(uint16_t code = 1000, std::string_view reason = "");
  // Wakes a blocked read() and makes later I/O fail; the socket is closed by the destructor.
  void shutdown();
  const std::string& protocol() const { return protocol_; }
  void setProtocol(std::string p) { protocol_ = std::move(p); }

 private:
  Status writeFrame(Opcode op, std::string_view payload);
  Status readExact(char* out, size_t n);

  std::unique_ptr<http::Stream> stream_;
  bool isClient_;
  std::string pending_;  // bytes read before the first frame (after a client handshake)
  size_t pendingPos_ = 0;
  std::mutex writeMu_;
  bool closeSent_ = false;
  std::string protocol_;
};

// Server side: writes the 101 answer for `req` on `stream` with the chosen subprotocol (may be
// "") and returns the Connection owning it. On failure the stream is closed.
Result<std::unique_ptr<Connection>> acceptUpgrade(std::unique_ptr<http::Stream> stream,
                                                  const http::Request& req,
                                                  const std::string& protocol);

// Client side: connects to host:port (over TLS with `tls`), sends the upgrade for `target`
// offering `protocols` plus `headers`, and checks the 101 answer. The chosen protocol is in
// Connection::protocol(). A non-101 answer fails with the server's status code and body as
// message.
Result<std::unique_ptr<Connection>> dial(
    const std::string& host, int port, const std::string& target,
    const std::vector<std::string>& protocols, const http::TlsContext* tls = nullptr,
    const std::vector<std::pair<std::string, std::string>>& headers = {});

}  // namespace minik8s::ws
