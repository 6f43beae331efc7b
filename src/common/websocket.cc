#include "common/websocket.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>

#include <chrono>

#include "common/base64.h"
#include "common/strings.h"

namespace minik8s::ws {

namespace {

constexpr size_t kMaxMessage = 64 * 1024 * 1024;

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> splitComma(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    size_t c = s.find(',');
    std::string part = trim(s.substr(0, c));
    if (!part.empty()) out.push_back(part);
    if (c == std::string_view::npos) break;
    s.remove_prefix(c + 1);
  }
  return out;
}

}  // namespace

std::string acceptKey(std::string_view clientKey) {
  std::string in = std::string(clientKey) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(in.data(), in.size(), digest, &len, EVP_sha1(), nullptr);
  return base64::encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

bool isUpgradeRequest(const http::Request& req) {
  return asciiLower(req.header("Upgrade")) == "websocket" &&
         asciiLower(req.header("Connection")).find("upgrade") != std::string::npos;
}

std::string chooseProtocol(const http::Request& req, const std::vector<std::string>& supported) {
  auto offered = splitComma(req.header("Sec-WebSocket-Protocol"));
  for (const auto& s : supported) {
    for (const auto& o : offered) {
      if (o == s) return s;
    }
  }
  return "";
}

Connection::Connection(std::unique_ptr<http::Stream> stream, bool isClient, std::string alreadyRead)
    : stream_(std::move(stream)), isClient_(isClient), pending_(std::move(alreadyRead)) {}

Connection::~Connection() = default;

void Connection::shutdown() { stream_->shutdown(); }

Status Connection::readExact(char* out, size_t n) {
  while (n > 0 && pendingPos_ < pending_.size()) {
    *out++ = pending_[pendingPos_++];
    --n;
  }
  while (n > 0) {
    auto r = stream_->read(out, n);
    if (!r.ok()) return Status::Unavailable("websocket read: " + r.status().message());
    if (*r == 0) return Status::Unavailable("websocket: connection closed by peer");
    out += *r;
    n -= *r;
  }
  return Status::Ok();
}

Result<Message> Connection::read() {
  Message msg;
  bool started = false;
  for (;;) {
    unsigned char head[2];
    if (auto s = readExact(reinterpret_cast<char*>(head), 2); !s.ok()) return s;
    bool fin = head[0] & 0x80;
    auto op = static_cast<Opcode>(head[0] & 0x0f);
    bool masked = head[1] & 0x80;
    uint64_t len = head[1] & 0x7f;
    if (len == 126) {
      unsigned char ext[2];
      if (auto s = readExact(reinterpret_cast<char*>(ext), 2); !s.ok()) return s;
      len = (uint64_t{ext[0]} << 8) | ext[1];
    } else if (len == 127) {
      unsigned char ext[8];
      if (auto s = readExact(reinterpret_cast<char*>(ext), 8); !s.ok()) return s;
      len = 0;
      for (unsigned char b : ext) len = (len << 8) | b;
    }
    if (len > kMaxMessage || msg.payload.size() + len > kMaxMessage) {
      return Status::BadRequest("websocket: message too large");
    }
    unsigned char mask[4] = {0, 0, 0, 0};
    if (masked) {
      if (auto s = readExact(reinterpret_cast<char*>(mask), 4); !s.ok()) return s;
    }
    std::string payload(len, '\0');
    if (len > 0) {
      if (auto s = readExact(payload.data(), len); !s.ok()) return s;
    }
    if (masked) {
      for (size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<char>(payload[i] ^ mask[i % 4]);
    }
    if (op == Opcode::kPing) {
      if (auto s = writeFrame(Opcode::kPong, payload); !s.ok()) return s;
      continue;
    }
    if (op == Opcode::kPong) continue;
    if (op == Opcode::kClose) return Message{Opcode::kClose, std::move(payload)};
    if (op == Opcode::kContinuation) {
      if (!started) return Status::BadRequest("websocket: continuation without a first frame");
    } else {
      if (started) return Status::BadRequest("websocket: new message inside a fragmented one");
      msg.opcode = op;
      started = true;
    }
    msg.payload += payload;
    if (fin) return msg;
  }
}

Status Connection::writeFrame(Opcode op, std::string_view payload) {
  std::string frame;
  frame.reserve(payload.size() + 14);
  frame.push_back(static_cast<char>(0x80 | static_cast<uint8_t>(op)));
  const uint8_t maskBit = isClient_ ? 0x80 : 0;
  if (payload.size() < 126) {
    frame.push_back(static_cast<char>(maskBit | payload.size()));
  } else if (payload.size() <= 0xffff) {
    frame.push_back(static_cast<char>(maskBit | 126));
    frame.push_back(static_cast<char>(payload.size() >> 8));
    frame.push_back(static_cast<char>(payload.size() & 0xff));
  } else {
    frame.push_back(static_cast<char>(maskBit | 127));
    for (int i = 7; i >= 0; --i)
      frame.push_back(static_cast<char>((uint64_t{payload.size()} >> (8 * i)) & 0xff));
  }
  if (isClient_) {
    unsigned char mask[4];
    RAND_bytes(mask, 4);
    frame.append(reinterpret_cast<char*>(mask), 4);
    for (size_t i = 0; i < payload.size(); ++i)
      frame.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  } else {
    frame.append(payload);
  }
  std::lock_guard lock(writeMu_);
  if (closeSent_) return Status::Unavailable("websocket: already closed");
  if (op == Opcode::kClose) closeSent_ = true;
  if (Status s = stream_->write(frame); !s.ok()) {
    return Status::Unavailable("websocket write: " + s.message());
  }
  return Status::Ok();
}

Status Connection::writeClose(uint16_t code, std::string_view reason) {
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code & 0xff));
  payload.append(reason.substr(0, 120));
  return writeFrame(Opcode::kClose, payload);
}

Result<std::unique_ptr<Connection>> acceptUpgrade(std::unique_ptr<http::Stream> stream,
                                                  const http::Request& req,
                                                  const std::string& protocol) {
  std::string key = req.header("Sec-WebSocket-Key");
  if (key.empty()) return Status::BadRequest("websocket: missing Sec-WebSocket-Key");
  std::string resp =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Accept: " +
      acceptKey(key) + "\r\n";
  if (!protocol.empty()) resp += "Sec-WebSocket-Protocol: " + protocol + "\r\n";
  resp += "\r\n";
  if (Status s = stream->write(resp); !s.ok()) return s;
  auto c = std::make_unique<Connection>(std::move(stream), false);
  c->setProtocol(protocol);
  return c;
}

Result<std::unique_ptr<Connection>> dial(
    const std::string& host, int port, const std::string& target,
    const std::vector<std::string>& protocols, const http::TlsContext* tls,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  auto connected = http::dialStream(host, port, tls);
  if (!connected.ok()) return Status::Unavailable("websocket: " + connected.status().message());
  std::unique_ptr<http::Stream> stream = std::move(connected).value();
  const std::string portStr = std::to_string(port);
  unsigned char nonce[16];
  RAND_bytes(nonce, sizeof(nonce));
  std::string key =
      base64::encode(std::string_view(reinterpret_cast<const char*>(nonce), sizeof(nonce)));
  const std::string hostHeader =
      host.find(':') != std::string::npos ? "[" + host + "]:" + portStr : host + ":" + portStr;
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: " + hostHeader +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Key: " +
                    key + "\r\n";
  if (!protocols.empty()) {
    std::string joined;
    for (const auto& p : protocols) joined += (joined.empty() ? "" : ", ") + p;
    req += "Sec-WebSocket-Protocol: " + joined + "\r\n";
  }
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "\r\n";
  if (Status s = stream->write(req); !s.ok()) return s;
  // Read the response head (and whatever follows it).
  std::string buf;
  size_t headEnd;
  while ((headEnd = buf.find("\r\n\r\n")) == std::string::npos) {
    char tmp[4096];
    auto n = stream->read(tmp, sizeof(tmp));
    if (!n.ok() || *n == 0 || buf.size() > 1024 * 1024) {
      return Status::Unavailable("websocket: connection closed during the handshake");
    }
    buf.append(tmp, *n);
  }
  std::string head = buf.substr(0, headEnd);
  std::string rest = buf.substr(headEnd + 4);
  int code = 0;
  if (head.size() > 12) code = std::atoi(head.c_str() + 9);
  if (code != 101) {
    // Collect the (short) body for the message: up to Content-Length, or until the server
    // closes, waiting at most a second.
    std::string body = rest;
    size_t want = std::string::npos;
    std::string lh = asciiLower(head);
    if (size_t cl = lh.find("content-length:"); cl != std::string::npos) {
      want = static_cast<size_t>(std::atoll(lh.c_str() + cl + 15));
    }
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    char tmp[4096];
    while (body.size() < std::min<size_t>(want, 65536) &&
           std::chrono::steady_clock::now() < giveUp) {
      pollfd p{stream->fd(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      auto n = stream->read(tmp, sizeof(tmp));
      if (!n.ok() || *n == 0) break;
      body.append(tmp, *n);
    }
    json status = json::parse(body, nullptr, false);
    if (status.is_object() && status.contains("message")) {  // a meta/v1 Status
      return Status(code ? code : 502, status.value("reason", "UpgradeFailed"),
                    status.value("message", ""));
    }
    return Status(code ? code : 502, "UpgradeFailed", body.empty() ? head : body);
  }
  std::string lowerHead = asciiLower(head);
  if (lowerHead.find("sec-websocket-accept: " + asciiLower(acceptKey(key))) == std::string::npos) {
    return Status::BadRequest("websocket: bad Sec-WebSocket-Accept in the answer");
  }
  auto c = std::make_unique<Connection>(std::move(stream), true, std::move(rest));
  size_t p = lowerHead.find("sec-websocket-protocol:");
  if (p != std::string::npos) {
    size_t eol = head.find("\r\n", p);
    c->setProtocol(
        trim(head.substr(p + 23, eol == std::string::npos ? std::string::npos : eol - p - 23)));
  }
  return c;
}

}  // namespace minik8s::ws
