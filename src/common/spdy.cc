#include "common/spdy.h"

#include <poll.h>
#include <zlib.h>

#include <algorithm>

#include "common/strings.h"
#include "fmt/format.h"

namespace minik8s::spdy {
namespace {

constexpr uint16_t kVersion = 3;
constexpr size_t kHeaderSize = 8;
constexpr uint32_t kMaxLength = (1u << 24) - 1;

void put32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void put24(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
uint32_t get32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}
uint32_t get24(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return (b(0) << 16) | (b(1) << 8) | b(2);
}

Status malformed(const std::string& what) { return Status::BadRequest("SPDY: " + what); }

}  // namespace

std::string Frame::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v.substr(0, v.find('\0'));
  }
  return "";
}

const std::string& headerDictionary() {
  // The SPDY/3 draft's dictionary: these words, each after its length as 4 big-endian bytes,
  // then the text below as it is.
  static const std::string kDictionary = [] {
    static const char* const kWords[] = {"options",
                                         "head",
                                         "post",
                                         "put",
                                         "delete",
                                         "trace",
                                         "accept",
                                         "accept-charset",
                                         "accept-encoding",
                                         "accept-language",
                                         "accept-ranges",
                                         "age",
                                         "allow",
                                         "authorization",
                                         "cache-control",
                                         "connection",
                                         "content-base",
                                         "content-encoding",
                                         "content-language",
                                         "content-length",
                                         "content-location",
                                         "content-md5",
                                         "content-range",
                                         "content-type",
                                         "date",
                                         "etag",
                                         "expect",
                                         "expires",
                                         "from",
                                         "host",
                                         "if-match",
                                         "if-modified-since",
                                         "if-none-match",
                                         "if-range",
                                         "if-unmodified-since",
                                         "last-modified",
                                         "location",
                                         "max-forwards",
                                         "pragma",
                                         "proxy-authenticate",
                                         "proxy-authorization",
                                         "range",
                                         "referer",
                                         "retry-after",
                                         "server",
                                         "te",
                                         "trailer",
                                         "transfer-encoding",
                                         "upgrade",
                                         "user-agent",
                                         "vary",
                                         "via",
                                         "warning",
                                         "www-authenticate",
                                         "method",
                                         "get",
                                         "status",
                                         "200 OK",
                                         "version",
                                         "HTTP/1.1",
                                         "url",
                                         "public",
                                         "set-cookie",
                                         "keep-alive",
                                         "origin"};
    std::string d;
    for (const char* w : kWords) {
      std::string_view word(w);
      put32(d, static_cast<uint32_t>(word.size()));
      d.append(word);
    }
    d.append(
        "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504"
        "505203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request"
        "401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented"
        "503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, "
        "Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
        "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
        "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.");
    return d;
  }();
  return kDictionary;
}

// ---- writing ----

struct FrameWriter::Deflater {
  z_stream z{};
  bool ok = false;
  Deflater() {
    ok = deflateInit(&z, Z_DEFAULT_COMPRESSION) == Z_OK &&
         deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(headerDictionary().data()),
                              static_cast<uInt>(headerDictionary().size())) == Z_OK;
  }
  ~Deflater() { deflateEnd(&z); }

  // The header block, compressed and flushed so the peer can decode it on its own.
  Result<std::string> compress(const Headers& headers) {
    if (!ok) return Status::Internal("SPDY: zlib deflate could not start");
    std::string plain;
    put32(plain, static_cast<uint32_t>(headers.size()));
    for (const auto& [name, value] : headers) {
      put32(plain, static_cast<uint32_t>(name.size()));
      plain += name;
      put32(plain, static_cast<uint32_t>(value.size()));
      plain += value;
    }
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(plain.data());
    z.avail_in = static_cast<uInt>(plain.size());
    char chunk[4096];
    do {
      z.next_out = reinterpret_cast<Bytef*>(chunk);
      z.avail_out = sizeof(chunk);
      int rc = deflate(&z, Z_SYNC_FLUSH);
      if (rc != Z_OK && rc != Z_BUF_ERROR) return Status::Internal("SPDY: zlib deflate failed");
      out.append(chunk, sizeof(chunk) - z.avail_out);
    } while (z.avail_out == 0);
    return out;
  }
};

FrameWriter::FrameWriter() : deflater_(std::make_unique<Deflater>()) {}
FrameWriter::~FrameWriter() = default;

Result<std::string> FrameWriter::encode(const Frame& f) {
  std::string payload;
  const uint32_t stream = f.streamId & 0x7fffffff;
  switch (f.type) {
    case FrameType::kData: {
      if (f.data.size() > kMaxLength) return malformed("DATA frame longer than 2^24-1 bytes");
      std::string out;
      put32(out, stream);
      out.push_back(static_cast<char>(f.flags));
      put24(out, static_cast<uint32_t>(f.data.size()));
      return out + f.data;
    }
    case FrameType::kSynStream: {
      put32(payload, stream);
      put32(payload, f.associatedStreamId & 0x7fffffff);
      payload.push_back(static_cast<char>((f.priority & 0x7) << 5));
      payload.push_back(0);  // credential slot
      auto block = deflater_->compress(f.headers);
      if (!block.ok()) return block.status();
      payload += *block;
      break;
    }
    case FrameType::kSynReply:
    case FrameType::kHeaders: {
      put32(payload, stream);
      auto block = deflater_->compress(f.headers);
      if (!block.ok()) return block.status();
      payload += *block;
      break;
    }
    case FrameType::kRstStream:
      put32(payload, stream);
      put32(payload, f.status);
      break;
    case FrameType::kSettings:
      put32(payload, static_cast<uint32_t>(f.settings.size()));
      for (const auto& s : f.settings) {
        payload.push_back(static_cast<char>(s.flags));
        put24(payload, s.id);
        put32(payload, s.value);
      }
      break;
    case FrameType::kPing:
      put32(payload, f.pingId);
      break;
    case FrameType::kGoAway:
      put32(payload, stream);
      put32(payload, f.status);
      break;
    case FrameType::kWindowUpdate:
      put32(payload, stream);
      put32(payload, f.deltaWindowSize & 0x7fffffff);
      break;
  }
  if (payload.size() > kMaxLength) return malformed("control frame longer than 2^24-1 bytes");
  std::string out;
  out.push_back(static_cast<char>(0x80 | (kVersion >> 8)));
  out.push_back(static_cast<char>(kVersion & 0xff));
  out.push_back(static_cast<char>(static_cast<uint16_t>(f.type) >> 8));
  out.push_back(static_cast<char>(static_cast<uint16_t>(f.type) & 0xff));
  out.push_back(static_cast<char>(f.flags));
  put24(out, static_cast<uint32_t>(payload.size()));
  return out + payload;
}

// ---- reading ----

struct FrameReader::Inflater {
  z_stream z{};
  bool ok = false;
  Inflater() { ok = inflateInit(&z) == Z_OK; }
  ~Inflater() { inflateEnd(&z); }

  Result<Headers> decompress(std::string_view block) {
    if (!ok) return Status::Internal("SPDY: zlib inflate could not start");
    std::string plain;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
    z.avail_in = static_cast<uInt>(block.size());
    char chunk[4096];
    // Until the block is consumed and zlib has nothing more to give (a full chunk may hide more).
    for (;;) {
      z.next_out = reinterpret_cast<Bytef*>(chunk);
      z.avail_out = sizeof(chunk);
      int rc = inflate(&z, Z_SYNC_FLUSH);
      if (rc == Z_NEED_DICT) {
        rc = inflateSetDictionary(&z, reinterpret_cast<const Bytef*>(headerDictionary().data()),
                                  static_cast<uInt>(headerDictionary().size()));
        if (rc != Z_OK) return malformed("header block uses another dictionary");
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) return malformed("corrupt header block");
      plain.append(chunk, sizeof(chunk) - z.avail_out);
      if (plain.size() > kMaxHeaderBlock) return malformed("header block too large");
      if (z.avail_out != 0 && (z.avail_in == 0 || rc == Z_BUF_ERROR)) break;
    }
    std::string_view p(plain);
    if (p.size() < 4) return malformed("header block without a count");
    const uint32_t count = get32(p, 0);
    if (count > kMaxHeaders) return malformed(fmt::format("{} headers in one block", count));
    size_t at = 4;
    Headers headers;
    auto field = [&](std::string& out) -> bool {
      if (p.size() - at < 4) return false;
      const uint32_t len = get32(p, at);
      at += 4;
      if (p.size() - at < len) return false;
      out.assign(p.substr(at, len));
      at += len;
      return true;
    };
    for (uint32_t i = 0; i < count; ++i) {
      std::string name, value;
      if (!field(name) || !field(value)) return malformed("truncated header block");
      headers.emplace_back(std::move(name), std::move(value));
    }
    return headers;
  }
};

FrameReader::FrameReader() : inflater_(std::make_unique<Inflater>()) {}
FrameReader::~FrameReader() = default;

void FrameReader::feed(std::string_view bytes) {
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<Frame>> FrameReader::next() {
  for (;;) {
    std::string_view b(buffer_);
    b.remove_prefix(offset_);
    if (b.size() < kHeaderSize) return std::optional<Frame>();
    const uint32_t length = get24(b, 5);
    if (b.size() < kHeaderSize + length) return std::optional<Frame>();
    std::string_view payload = b.substr(kHeaderSize, length);
    offset_ += kHeaderSize + length;
    if (offset_ > 64 * 1024 && offset_ * 2 > buffer_.size()) {  // drop what was consumed
      buffer_.erase(0, offset_);
      offset_ = 0;
    }
    Frame f;
    f.flags = static_cast<uint8_t>(b[4]);
    const bool control = (static_cast<unsigned char>(b[0]) & 0x80) != 0;
    if (!control) {
      f.type = FrameType::kData;
      f.streamId = get32(b, 0) & 0x7fffffff;
      if (f.streamId == 0) return malformed("DATA frame on stream 0");
      f.data.assign(payload);
      return std::optional<Frame>(std::move(f));
    }
    const uint16_t version = static_cast<uint16_t>(((b[0] & 0x7f) << 8) | (b[1] & 0xff));
    if (version != kVersion)
      return malformed(fmt::format("version {} (only 3 is spoken)", version));
    const uint16_t type = static_cast<uint16_t>(((b[2] & 0xff) << 8) | (b[3] & 0xff));
    auto need = [&](size_t n) { return payload.size() >= n; };
    switch (type) {
      case 1: {  // SYN_STREAM
        if (!need(10)) return malformed("short SYN_STREAM");
        f.type = FrameType::kSynStream;
        f.streamId = get32(payload, 0) & 0x7fffffff;
        f.associatedStreamId = get32(payload, 4) & 0x7fffffff;
        f.priority = static_cast<uint8_t>((static_cast<unsigned char>(payload[8]) >> 5) & 0x7);
        auto h = inflater_->decompress(payload.substr(10));
        if (!h.ok()) return h.status();
        f.headers = std::move(*h);
        break;
      }
      case 2:    // SYN_REPLY
      case 8: {  // HEADERS
        if (!need(4)) return malformed("short SYN_REPLY/HEADERS");
        f.type = type == 2 ? FrameType::kSynReply : FrameType::kHeaders;
        f.streamId = get32(payload, 0) & 0x7fffffff;
        auto h = inflater_->decompress(payload.substr(4));
        if (!h.ok()) return h.status();
        f.headers = std::move(*h);
        break;
      }
      case 3:  // RST_STREAM
        if (!need(8)) return malformed("short RST_STREAM");
        f.type = FrameType::kRstStream;
        f.streamId = get32(payload, 0) & 0x7fffffff;
        f.status = get32(payload, 4);
        break;
      case 4: {  // SETTINGS
        if (!need(4)) return malformed("short SETTINGS");
        f.type = FrameType::kSettings;
        const uint32_t n = get32(payload, 0);
        if (payload.size() != 4 + static_cast<size_t>(n) * 8) {
          return malformed("SETTINGS length does not match its entries");
        }
        for (uint32_t i = 0; i < n; ++i) {
          const size_t at = 4 + i * 8;
          f.settings.push_back(
              {static_cast<uint8_t>(payload[at]), get24(payload, at + 1), get32(payload, at + 4)});
        }
        break;
      }
      case 6:  // PING
        if (!need(4)) return malformed("short PING");
        f.type = FrameType::kPing;
        f.pingId = get32(payload, 0);
        break;
      case 7:  // GOAWAY
        if (!need(4)) return malformed("short GOAWAY");
        f.type = FrameType::kGoAway;
        f.streamId = get32(payload, 0) & 0x7fffffff;
        f.status = need(8) ? get32(payload, 4) : 0;
        break;
      case 9:  // WINDOW_UPDATE
        if (!need(8)) return malformed("short WINDOW_UPDATE");
        f.type = FrameType::kWindowUpdate;
        f.streamId = get32(payload, 0) & 0x7fffffff;
        f.deltaWindowSize = get32(payload, 4) & 0x7fffffff;
        break;
      default:
        continue;  // unknown control frames are ignored, as the draft says
    }
    return std::optional<Frame>(std::move(f));
  }
}

namespace {

// Splits http://host:port/path; SPDY upgrades here only go to plain HTTP servers.
Status splitUrl(const std::string& url, std::string& host, int& port, std::string& path) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    return Status::BadRequest("SPDY: only http:// streaming URLs are supported, not " + url);
  }
  size_t slash = url.find('/', scheme.size());
  std::string authority = url.substr(
      scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
  path = slash == std::string::npos ? "/" : url.substr(slash);
  size_t colon = authority.rfind(':');
  if (colon == std::string::npos || authority.back() == ']') {
    host = authority;
    port = 80;
  } else {
    host = authority.substr(0, colon);
    port = std::atoi(authority.c_str() + colon + 1);
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || port <= 0 || port > 65535) return Status::BadRequest("SPDY: bad URL " + url);
  return Status::Ok();
}

std::string headerValue(const std::string& head, const std::string& lowerName) {
  std::string lower = asciiLower(head);
  size_t p = lower.find("\r\n" + lowerName + ":");
  if (p == std::string::npos) return "";
  p += 2 + lowerName.size() + 1;
  size_t eol = head.find("\r\n", p);
  std::string v = head.substr(p, eol == std::string::npos ? std::string::npos : eol - p);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(v.begin());
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
  return v;
}

}  // namespace

Result<UpgradedStream> dialUpgrade(const std::string& url,
                                   const std::vector<std::string>& protocols,
                                   std::chrono::milliseconds timeout) {
  std::string host, path;
  int port = 0;
  if (Status s = splitUrl(url, host, port, path); !s.ok()) return s;
  auto connected = http::dialStream(host, port, nullptr, timeout);
  if (!connected.ok()) return connected.status();
  UpgradedStream out;
  out.stream = std::move(connected).value();
  const std::string hostHeader = host.find(':') != std::string::npos
                                     ? "[" + host + "]:" + std::to_string(port)
                                     : host + ":" + std::to_string(port);
  std::string req = "POST " + path + " HTTP/1.1\r\nHost: " + hostHeader +
                    "\r\nConnection: Upgrade\r\nUpgrade: " + kUpgradeProtocol + "\r\n";
  for (const auto& p : protocols) req += std::string(kProtocolHeader) + ": " + p + "\r\n";
  req += "Content-Length: 0\r\n\r\n";
  if (Status s = out.stream->write(req); !s.ok()) return s;
  std::string buf;
  size_t headEnd;
  while ((headEnd = buf.find("\r\n\r\n")) == std::string::npos) {
    char tmp[4096];
    auto n = out.stream->read(tmp, sizeof(tmp));
    if (!n.ok() || *n == 0 || buf.size() > 64 * 1024) {
      return Status::Unavailable("SPDY: " + url + " closed the connection during the upgrade");
    }
    buf.append(tmp, *n);
  }
  std::string head = buf.substr(0, headEnd);
  out.alreadyRead = buf.substr(headEnd + 4);
  int code = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
  if (code != 101) {
    // The (short) error body: up to Content-Length, or what comes within a second.
    std::string body = out.alreadyRead;
    std::string length = headerValue(head, "content-length");
    const size_t want = std::min<size_t>(
        length.empty() ? 4096 : static_cast<size_t>(std::atoll(length.c_str())), 64 * 1024);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (body.size() < want && std::chrono::steady_clock::now() < giveUp) {
      pollfd p{out.stream->fd(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char tmp[4096];
      auto n = out.stream->read(tmp, sizeof(tmp));
      if (!n.ok() || *n == 0) break;
      body.append(tmp, *n);
    }
    if (json status = json::parse(body, nullptr, false);
        status.is_object() && status.contains("message")) {  // a meta/v1 Status
      return Status(code ? code : 502, status.value("reason", "UpgradeFailed"),
                    status.value("message", ""));
    }
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    return Status(code ? code : 502, "UpgradeFailed",
                  "SPDY upgrade refused by " + url + ": " + (body.empty() ? head : body));
  }
  out.protocol = headerValue(head, asciiLower(kProtocolHeader));
  if (!protocols.empty() && out.protocol.empty()) {
    return Status(502, "UpgradeFailed", "SPDY: " + url + " chose none of the offered protocols");
  }
  return out;
}

bool isUpgradeRequest(const http::Request& req) {
  return asciiLower(req.header("Upgrade")) == asciiLower(kUpgradeProtocol);
}

Status acceptUpgrade(http::Stream& stream, const std::string& protocol) {
  std::string answer = std::string("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n") +
                       "Upgrade: " + kUpgradeProtocol + "\r\n";
  if (!protocol.empty()) answer += std::string(kProtocolHeader) + ": " + protocol + "\r\n";
  answer += "\r\n";
  return stream.write(answer);
}

}  // namespace minik8s::spdy
