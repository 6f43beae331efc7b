// clang-format off
#include "common/http.h"  // first: Boost 1.74 Asio needs <utility> included before it
// clang-format on

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <condition_variable>
#include <limits>
#include <sstream>
#include <utility>

#include "common/beast_stream.h"
#include "common/logging.h"
#include "common/stream.h"
#include "common/tls.h"

namespace minik8s::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) <
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string Request::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::optional<std::string> Request::param(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Request::params(const std::string& name) const {
  std::vector<std::string> out;
  auto [b, e] = query.equal_range(name);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

Response Response::json(int status, const minik8s::json& body) {
  Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = body.dump(-1, ' ', false, minik8s::json::error_handler_t::replace);
  return r;
}

Response Response::text(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  r.body = std::move(body);
  return r;
}

std::unique_ptr<Stream> ResponseWriter::takeStream() { return nullptr; }
bool ResponseWriter::writeIfReady(std::string_view) { return false; }

Response Response::error(const Status& s) { return json(s.code() ? s.code() : 500, s.toJson()); }

std::string percentDecode(std::string_view s, bool plusIsSpace) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      auto hex = [](char h) -> int {
        if (h >= '0' && h <= '9') return h - '0';
        if (h >= 'a' && h <= 'f') return h - 'a' + 10;
        if (h >= 'A' && h <= 'F') return h - 'A' + 10;
        return -1;
      };
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plusIsSpace && c == '+' ? ' ' : c);
  }
  return out;
}

std::string percentEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::multimap<std::string, std::string> parseQuery(std::string_view query) {
  std::multimap<std::string, std::string> out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string k = percentDecode(part.substr(0, eq), true);
      std::string v = eq == std::string_view::npos ? "" : percentDecode(part.substr(eq + 1), true);
      out.emplace(std::move(k), std::move(v));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

// One accepted connection. Blocking reads and writes have no timeout of their own, so each
// blocking step arms a deadline and the server's watchdog shuts the socket down once it passes:
// the blocked call then fails and the connection's thread ends. The socket descriptor belongs to
// the Connection until the serving thread wraps it in `stream` (plain, or TLS after the
// handshake), and to the handler after takeStream().
struct Connection {
  explicit Connection(int socketFd) : fd(socketFd) {}
  ~Connection() {
    if (!stream && fd >= 0) ::close(fd);
  }
  int fd;  // -1 once handed over to a handler
  std::unique_ptr<Stream> stream;
  std::atomic<int64_t> deadline{kNoDeadline};  // steady_clock ticks

  void arm(std::chrono::milliseconds d) {
    deadline = (Clock::now() + d).time_since_epoch().count();
  }
  void disarm() { deadline = kNoDeadline; }
};

// Arms a connection's deadline for one blocking step.
class DeadlineScope {
 public:
  DeadlineScope(Connection& c, std::chrono::milliseconds d) : c_(c) { c_.arm(d); }
  ~DeadlineScope() { c_.disarm(); }
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

 private:
  Connection& c_;
};

// One connection's writer: either a whole response or a chunked stream.
class ConnectionWriter : public ResponseWriter {
 public:
  ConnectionWriter(Connection& conn, unsigned version, bool keepAlive,
                   std::chrono::milliseconds writeTimeout)
      : conn_(conn),
        socket_(*conn.stream),
        version_(version),
        keepAlive_(keepAlive),
        writeTimeout_(writeTimeout) {}

  void send(Response response) override {
    if (done_) return;
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status), version_};
    for (auto& [k, v] : response.headers) {
      // One Warning header per warning (kubectl prints each); other names replace.
      if (beast::iequals(k, "Warning")) {
        res.insert(k, v);
      } else {
        res.set(k, v);
      }
    }
    res.body() = std::move(response.body);
    res.keep_alive(keepAlive_);
    res.prepare_payload();
    beast::error_code ec;
    {
      DeadlineScope deadline(conn_, writeTimeout_);
      bhttp::write(socket_, res, ec);
    }
    if (ec) keepAlive_ = false;
    done_ = true;
  }

  bool beginStream(int status, std::vector<std::pair<std::string, std::string>> headers) override {
    if (done_) return false;
    bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(status), version_};
    for (auto& [k, v] : headers) res.set(k, v);
    res.chunked(true);
    res.keep_alive(keepAlive_);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    beast::error_code ec;
    {
      DeadlineScope deadline(conn_, writeTimeout_);
      bhttp::write_header(socket_, sr, ec);
    }
    streaming_ = true;
    done_ = true;
    if (ec) broken_ = true;
    return !broken_;
  }

  bool write(std::string_view chunk) override {
    if (!streaming_ || broken_) return false;
    if (chunk.empty()) return true;
    beast::error_code ec;
    {
      DeadlineScope deadline(conn_, writeTimeout_);
      asio::write(socket_, bhttp::make_chunk(asio::buffer(chunk.data(), chunk.size())), ec);
    }
    if (ec) broken_ = true;
    return !broken_;
  }

  // The chunk's framing (size line and CRLF) rides in the same write: 16 bytes at most.
  bool writeIfReady(std::string_view chunk) override {
    if (!streaming_ || broken_ || chunk.empty()) return false;
    if (!canWriteImmediately(*conn_.stream, chunk.size() + 16)) return false;
    return write(chunk);
  }
  bool writesIfReady() const override { return true; }

  void end() override {
    if (!streaming_ || broken_) return;
    beast::error_code ec;
    {
      DeadlineScope deadline(conn_, writeTimeout_);
      asio::write(socket_, bhttp::make_chunk_last(), ec);
    }
    if (ec) broken_ = true;
    streaming_ = false;
  }

  bool clientGone() override { return broken_ || conn_.stream->peerClosed(); }

  std::unique_ptr<Stream> takeStream() override {
    if (taken_) return nullptr;
    taken_ = true;
    done_ = true;
    return std::move(conn_.stream);
  }

  bool done() const { return done_; }
  bool reusable() const { return keepAlive_ && !broken_ && !streaming_ && !taken_; }
  bool taken() const { return taken_; }

 private:
  Connection& conn_;
  BeastStream socket_;
  unsigned version_;
  bool keepAlive_;
  std::chrono::milliseconds writeTimeout_;
  bool done_ = false;
  bool streaming_ = false;
  bool broken_ = false;
  bool taken_ = false;
};

// The Status a request that broke a limit or the HTTP syntax gets; OK for a plain disconnect or
// a timeout (nobody is listening for an answer then).
Status requestReadFailure(const beast::error_code& ec, const ServerLimits& limits) {
  if (ec == bhttp::error::body_limit) {
    return Status(413, "RequestEntityTooLarge",
                  "Request entity too large: limit is " + std::to_string(limits.maxBodyBytes));
  }
  if (ec == bhttp::error::header_limit) {
    return Status(
        431, "RequestHeaderFieldsTooLarge",
        "Request header fields too large: limit is " + std::to_string(limits.maxHeaderBytes));
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
    return Status::BadRequest("malformed HTTP request: " + ec.message());
  }
  return Status::Ok();
}

// A complete "Connection: close" response with a Status body, for answers written outside a
// handler (limits).
std::string rawErrorResponse(const Status& s) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(s.code()), 11};
  res.set(bhttp::field::content_type, "application/json");
  if (s.code() == 429) res.set(bhttp::field::retry_after, "1");
  res.body() = s.toJson().dump();
  res.keep_alive(false);
  res.prepare_payload();
  std::ostringstream out;
  out << res;
  return out.str();
}

}  // namespace

struct Server::Impl {
  Handler handler;
  ServerLimits limits;
  std::shared_ptr<TlsContext> tls;  // set: every connection speaks TLS
  asio::io_context io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread acceptThread;
  std::thread watchdogThread;
  std::mutex mu;
  std::condition_variable cv;          // an active connection ended
  std::condition_variable watchdogCv;  // stopping
  std::set<std::shared_ptr<Connection>> connections;
  // Refused or failed connections kept a moment after their answer, so that closing them with
  // unread input does not reset the answer away; the watchdog drains and closes them.
  std::vector<std::pair<std::shared_ptr<Connection>, Clock::time_point>> lingering;
  int active = 0;
  std::atomic<bool> stopping{false};

  // Answers a request that cannot be served and closes the connection gracefully: the peer may
  // still be sending a body we will not read.
  void refuse(Connection& conn, const Status& s) {
    const std::string raw = rawErrorResponse(s);
    {
      DeadlineScope deadline(conn, limits.writeTimeout);
      if (!conn.stream->write(raw).ok()) return;
    }
    conn.stream->closeWrite();
    // Drain what the client still sends, bounded in bytes and time.
    DeadlineScope deadline(conn, std::min(limits.bodyTimeout, std::chrono::milliseconds(5000)));
    std::vector<char> sink(64 * 1024);
    size_t drained = 0;
    while (drained < limits.maxBodyBytes * 4 + sink.size()) {
      auto n = conn.stream->read(sink.data(), sink.size());
      if (!n.ok() || *n == 0) break;
      drained += *n;
    }
  }

  // Waits for the next request on a keep-alive connection; false when idle for too long or closed.
  bool awaitNextRequest(Connection& conn) {
    pollfd p{conn.fd, POLLIN, 0};
    for (;;) {
      int r = ::poll(&p, 1, static_cast<int>(limits.idleTimeout.count()));
      if (r < 0 && errno == EINTR) continue;
      return r > 0 && !stopping;
    }
  }

  // Wraps the accepted socket in a Stream: TLS runs its handshake here, in the connection's own
  // thread and under the header deadline, so a client that never completes it only holds its
  // own thread until then.
  bool openStream(Connection& conn) {
    if (!tls) {
      conn.stream = plainStream(conn.fd);
      return true;
    }
    DeadlineScope deadline(conn, limits.headerTimeout);
    auto stream = tls->accept(conn.fd);
    if (!stream.ok()) {
      LOG_DEBUG("TLS handshake with {} failed: {}", peerAddress(conn.fd),
                stream.status().message());
      return false;
    }
    conn.stream = std::move(stream).value();
    return true;
  }

  void serve(std::shared_ptr<Connection> conn) {
    beast::flat_buffer buffer;
    bool released = false;
    if (openStream(*conn)) {
      BeastStream socket(*conn->stream);
      const std::string remoteAddress = peerAddress(conn->fd);
      const bool overTls = conn->stream->isTls();
      const std::optional<PeerCertificate> peer = conn->stream->peerCertificate();
      for (bool first = true;; first = false) {
        if (!first && buffer.size() == 0 && !awaitNextRequest(*conn)) break;
        bhttp::request_parser<bhttp::string_body> parser;
        parser.body_limit(limits.maxBodyBytes);
        parser.header_limit(static_cast<std::uint32_t>(limits.maxHeaderBytes));
        beast::error_code ec;
        {
          // The header deadline counts from the accept (first request) or the first byte.
          DeadlineScope deadline(*conn, limits.headerTimeout);
          bhttp::read_header(socket, buffer, parser, ec);
        }
        if (!ec && !parser.is_done()) {
          DeadlineScope deadline(*conn, limits.bodyTimeout);
          bhttp::read(socket, buffer, parser, ec);
        }
        if (ec) {
          if (Status s = requestReadFailure(ec, limits); !s.ok() && !stopping) refuse(*conn, s);
          break;
        }
        auto& msg = parser.get();
        Request req;
        req.method = std::string(msg.method_string());
        req.target = std::string(msg.target());
        std::string_view t = req.target;
        size_t q = t.find('?');
        req.path = percentDecode(t.substr(0, q), false);
        if (q != std::string_view::npos) req.query = parseQuery(t.substr(q + 1));
        for (auto& f : msg) req.headers[std::string(f.name_string())] = std::string(f.value());
        req.body = std::move(msg.body());
        req.remoteAddress = remoteAddress;
        req.tls = overTls;
        req.clientCertificate = peer;

        ConnectionWriter writer(*conn, msg.version(), msg.keep_alive(), limits.writeTimeout);
        try {
          handler(req, writer);
        } catch (const std::exception& e) {
          LOG_ERROR("handler for {} {} threw: {}", req.method, req.target, e.what());
          if (!writer.done()) writer.send(Response::error(Status::Internal(e.what())));
        }
        if (!writer.done()) writer.send(Response::error(Status::Internal("no response")));
        if (writer.taken()) {
          released = true;
          break;
        }
        if (!writer.reusable() || stopping) break;
      }
    }
    std::lock_guard lock(mu);
    if (released) {
      conn->fd = -1;  // the handler owns the stream and its socket now
    } else if (conn->stream) {
      conn->stream->closeWrite();
      conn->stream.reset();  // closes the socket (under the lock: the watchdog uses conn->fd)
      conn->fd = -1;
    } else {
      ::shutdown(conn->fd, SHUT_RDWR);
      ::close(conn->fd);
      conn->fd = -1;
    }
    connections.erase(conn);
    --active;
    cv.notify_all();
  }

  // Over the connection bound: answer 429 without a thread and let the watchdog close it. Over
  // TLS nothing can be said before a handshake, so the connection is just closed.
  void refuseOverLimit(std::shared_ptr<Connection> conn) {
    if (!tls) {
      const std::string raw = rawErrorResponse(
          Status::TooManyRequests("too many open connections (limit " +
                                  std::to_string(limits.maxConnections) + "), retry later"));
      ssize_t sent = ::send(conn->fd, raw.data(), raw.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      (void)sent;
    }
    ::shutdown(conn->fd, SHUT_WR);
    std::lock_guard lock(mu);
    if (lingering.size() >= 64) return;  // closed right away by the destructor
    lingering.emplace_back(std::move(conn), Clock::now() + std::chrono::seconds(1));
  }

  void acceptLoop() {
    while (!stopping) {
      tcp::socket socket(io);
      beast::error_code ec;
      acceptor->accept(socket, ec);
      if (ec) {
        if (stopping) break;
        // Out of descriptors (EMFILE) and similar: do not spin.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      auto conn = std::make_shared<Connection>(socket.release(ec));
      {
        std::lock_guard lock(mu);
        if (static_cast<size_t>(active) < limits.maxConnections) {
          connections.insert(conn);
          ++active;
          std::thread([this, conn] { serve(conn); }).detach();
          continue;
        }
      }
      refuseOverLimit(std::move(conn));
    }
  }

  // Enforces the connections' deadlines and closes lingering refused connections.
  void watchdogLoop() {
    auto tick = std::min({limits.headerTimeout, limits.bodyTimeout, limits.writeTimeout}) / 4;
    tick = std::clamp(tick, std::chrono::milliseconds(5), std::chrono::milliseconds(500));
    std::unique_lock lock(mu);
    while (!stopping) {
      watchdogCv.wait_for(lock, tick);
      const auto now = Clock::now();
      const int64_t nowTicks = now.time_since_epoch().count();
      for (auto& c : connections) {
        int64_t d = c->deadline.load();
        if (c->fd >= 0 && d <= nowTicks && c->deadline.compare_exchange_strong(d, kNoDeadline)) {
          ::shutdown(c->fd, SHUT_RDWR);
        }
      }
      std::erase_if(lingering, [&](auto& entry) {
        char sink[4096];
        ssize_t n;
        while ((n = ::recv(entry.first->fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {
        }
        return n == 0 || entry.second <= now;
      });
    }
    lingering.clear();
  }
};

Server::Server(Handler handler, ServerLimits limits) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->limits = limits;
}

Server::~Server() { stop(); }

Status Server::enableTls(const TlsServerConfig& config) {
  auto context = TlsContext::forServer(config);
  if (!context.ok()) return context.status();
  impl_->tls = std::move(context).value();
  return Status::Ok();
}

Status Server::start(const std::string& listenAddress) {
  size_t colon = listenAddress.rfind(':');
  if (colon == std::string::npos) {
    return Status::BadRequest("listen address must be host:port, got \"" + listenAddress + "\"");
  }
  std::string host = listenAddress.substr(0, colon);
  if (host.size() > 1 && host.front() == '[') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  int port = 0;
  try {
    port = std::stoi(listenAddress.substr(colon + 1));
  } catch (...) {
    return Status::BadRequest("invalid port in listen address \"" + listenAddress + "\"");
  }
  beast::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) return Status::BadRequest("invalid listen host \"" + host + "\": " + ec.message());
  auto acceptor = std::make_unique<tcp::acceptor>(impl_->io);
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen on " + listenAddress + ": " + ec.message());
  port_ = acceptor->local_endpoint().port();
  impl_->acceptor = std::move(acceptor);
  impl_->acceptThread = std::thread([this] { impl_->acceptLoop(); });
  impl_->watchdogThread = std::thread([this] { impl_->watchdogLoop(); });
  return Status::Ok();
}

void Server::stop() {
  if (!impl_ || !impl_->acceptor || impl_->stopping.exchange(true)) return;
  beast::error_code ec;
  // Unblock accept(): shutdown wakes a blocked accept on Linux, close alone may not.
  ::shutdown(impl_->acceptor->native_handle(), SHUT_RDWR);
  impl_->acceptor->close(ec);
  if (impl_->acceptThread.joinable()) impl_->acceptThread.join();
  std::unique_lock lock(impl_->mu);
  for (auto& c : impl_->connections) {
    if (c->fd >= 0) ::shutdown(c->fd, SHUT_RDWR);
  }
  impl_->cv.wait_for(lock, std::chrono::seconds(10), [&] { return impl_->active == 0; });
  impl_->watchdogCv.notify_all();
  lock.unlock();
  if (impl_->watchdogThread.joinable()) impl_->watchdogThread.join();
}

}  // namespace minik8s::http
