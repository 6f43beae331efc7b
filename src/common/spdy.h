// SPDY/3.1 framing, the protocol under `kubectl port-forward` (and the SPDY fallback of exec and
// attach): kubectl 1.32 speaks it either after an HTTP `Upgrade: SPDY/3.1` or tunnelled in the
// binary messages of a WebSocket whose subprotocol is `SPDY/3.1+portforward.k8s.io`.
//
// A frame is a control frame (SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY,
// HEADERS, WINDOW_UPDATE) or a DATA frame of a stream. Header blocks are compressed with zlib
// and the SPDY/3 dictionary, one compression context per direction for the whole connection, so
// a connection has one FrameWriter (what we send) and one FrameReader (what we receive), each
// used from one thread at a time. Hostile input is bounded: frame length (2^24-1 by the format),
// the decompressed size and the number of headers of a block.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http.h"
#include "common/status.h"
#include "common/stream.h"

namespace minik8s::spdy {

enum class FrameType : uint16_t {
  kData = 0,  // not a control frame
  kSynStream = 1,
  kSynReply = 2,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kHeaders = 8,
  kWindowUpdate = 9,
};

constexpr uint8_t kFlagFin = 0x01;
constexpr uint8_t kFlagUnidirectional = 0x02;  // SYN_STREAM

// RST_STREAM status codes.
constexpr uint32_t kProtocolError = 1;
constexpr uint32_t kInvalidStream = 2;
constexpr uint32_t kRefusedStream = 3;
constexpr uint32_t kCancel = 5;
constexpr uint32_t kInternalError = 6;

// Header names are lower case; several values of one name are joined with NUL.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Setting {
  uint8_t flags = 0;
  uint32_t id = 0;
  uint32_t value = 0;
};

struct Frame {
  FrameType type = FrameType::kData;
  uint8_t flags = 0;
  uint32_t streamId = 0;  // DATA, SYN_*, RST_STREAM, HEADERS, WINDOW_UPDATE; GOAWAY: last good
  uint32_t associatedStreamId = 0;  // SYN_STREAM
  uint8_t priority = 0;             // SYN_STREAM, 0 (highest) .. 7
  uint32_t status = 0;              // RST_STREAM, GOAWAY
  uint32_t pingId = 0;              // PING
  uint32_t deltaWindowSize = 0;     // WINDOW_UPDATE
  Headers headers;                  // SYN_STREAM, SYN_REPLY, HEADERS
  std::vector<Setting> settings;    // SETTINGS
  std::string data;                 // DATA

  bool fin() const { return (flags & kFlagFin) != 0; }
  // The first value of a header, "" when absent.
  std::string header(std::string_view name) const;
};

// The SPDY/3 header compression dictionary (1423 bytes).
const std::string& headerDictionary();

class FrameWriter {
 public:
  FrameWriter();
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  // The frame's bytes on the wire. DATA payloads longer than 2^24-1 are a BadRequest.
  Result<std::string> encode(const Frame& frame);

 private:
  struct Deflater;
  std::unique_ptr<Deflater> deflater_;
};

class FrameReader {
 public:
  FrameReader();
  ~FrameReader();
  FrameReader(const FrameReader&) = delete;
  FrameReader& operator=(const FrameReader&) = delete;

  // Bytes as they arrive, in any chunks.
  void feed(std::string_view bytes);
  // The next whole frame, nullopt until its bytes have arrived, or a BadRequest for a malformed
  // one (the connection is then unusable: its header compression state is lost).
  Result<std::optional<Frame>> next();

  static constexpr size_t kMaxHeaderBlock = 256 * 1024;  // decompressed bytes
  static constexpr uint32_t kMaxHeaders = 256;

 private:
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  std::string buffer_;
  size_t offset_ = 0;  // consumed bytes of buffer_
};

// The HTTP upgrade to SPDY/3.1 (`Upgrade: SPDY/3.1`, the subprotocol in
// `X-Stream-Protocol-Version`).
inline constexpr const char* kUpgradeProtocol = "SPDY/3.1";
inline constexpr const char* kProtocolHeader = "X-Stream-Protocol-Version";

struct UpgradedStream {
  std::unique_ptr<http::Stream> stream;
  std::string alreadyRead;  // SPDY bytes that arrived with the 101 answer
  std::string protocol;     // the subprotocol the server chose ("" when it named none)
};

// Client side: POSTs to `url` (http://host:port/path, as containerd's streaming server hands
// out) asking to upgrade to SPDY/3.1 with `protocols` offered, and checks the 101 answer. A
// non-101 answer fails with the server's status code and body.
Result<UpgradedStream> dialUpgrade(const std::string& url,
                                   const std::vector<std::string>& protocols,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

// True when `req` asks for an upgrade to SPDY/3.1.
bool isUpgradeRequest(const http::Request& req);

// Server side: answers 101 with `protocol` on a stream taken over from the HTTP server.
Status acceptUpgrade(http::Stream& stream, const std::string& protocol);

}  // namespace minik8s::spdy
