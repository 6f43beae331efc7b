#include <utility>
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>

#include "common/http.h"
#include "common/logging.h"

namespace minik8s::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) < std::tolower(static_cast<unsigned char>(y));
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

// One connection's writer: either a whole response or a chunked stream.
class ConnectionWriter : public ResponseWriter {
 public:
  ConnectionWriter(tcp::socket& socket, unsigned version, bool keepAlive)
      : socket_(socket), version_(version), keepAlive_(keepAlive) {}

  void send(Response response) override {
    if (done_) return;
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status), version_};
    for (auto& [k, v] : response.headers) res.set(k, v);
    res.body() = std::move(response.body);
    res.keep_alive(keepAlive_);
    res.prepare_payload();
    beast::error_code ec;
    bhttp::write(socket_, res, ec);
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
    bhttp::write_header(socket_, sr, ec);
    streaming_ = true;
    done_ = true;
    if (ec) broken_ = true;
    return !broken_;
  }

  bool write(std::string_view chunk) override {
    if (!streaming_ || broken_) return false;
    if (chunk.empty()) return true;
    beast::error_code ec;
    asio::write(socket_, bhttp::make_chunk(asio::buffer(chunk.data(), chunk.size())), ec);
    if (ec) broken_ = true;
    return !broken_;
  }

  void end() override {
    if (!streaming_ || broken_) return;
    beast::error_code ec;
    asio::write(socket_, bhttp::make_chunk_last(), ec);
    if (ec) broken_ = true;
    streaming_ = false;
  }

  bool clientGone() override {
    if (broken_) return true;
    pollfd p{socket_.native_handle(), POLLIN, 0};
    int r = ::poll(&p, 1, 0);
    if (r <= 0) return false;
    if (p.revents & (POLLHUP | POLLERR)) return true;
    char c;
    ssize_t n = ::recv(socket_.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0;
  }

  int takeSocket() override {
    taken_ = true;
    done_ = true;
    return socket_.native_handle();
  }

  bool done() const { return done_; }
  bool reusable() const { return keepAlive_ && !broken_ && !streaming_ && !taken_; }
  bool taken() const { return taken_; }

 private:
  tcp::socket& socket_;
  unsigned version_;
  bool keepAlive_;
  bool done_ = false;
  bool streaming_ = false;
  bool broken_ = false;
  bool taken_ = false;
};

}  // namespace

struct Server::Impl {
  Handler handler;
  asio::io_context io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread acceptThread;
  std::mutex mu;
  std::condition_variable cv;
  std::set<std::shared_ptr<tcp::socket>> connections;
  int active = 0;
  std::atomic<bool> stopping{false};

  void serve(std::shared_ptr<tcp::socket> socket) {
    beast::flat_buffer buffer;
    bool released = false;
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(64 * 1024 * 1024);
      parser.header_limit(1024 * 1024);
      beast::error_code ec;
      bhttp::read(*socket, buffer, parser, ec);
      if (ec) break;
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
      beast::error_code rec;
      auto ep = socket->remote_endpoint(rec);
      if (!rec) req.remoteAddress = ep.address().to_string();

      ConnectionWriter writer(*socket, msg.version(), msg.keep_alive());
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
    std::lock_guard lock(mu);
    if (!released) {
      beast::error_code ec;
      socket->shutdown(tcp::socket::shutdown_both, ec);
      socket->close(ec);
    } else {
      // The handler owns the file descriptor now.
      socket->release();
    }
    connections.erase(socket);
    --active;
    cv.notify_all();
  }

  void acceptLoop() {
    while (!stopping) {
      auto socket = std::make_shared<tcp::socket>(io);
      beast::error_code ec;
      acceptor->accept(*socket, ec);
      if (ec) {
        if (stopping) break;
        continue;
      }
      socket->set_option(tcp::no_delay(true), ec);
      std::lock_guard lock(mu);
      connections.insert(socket);
      ++active;
      std::thread([this, socket] { serve(socket); }).detach();
    }
  }
};

Server::Server(Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
}

Server::~Server() { stop(); }

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
  for (auto& s : impl_->connections) {
    ::shutdown(s->native_handle(), SHUT_RDWR);
  }
  impl_->cv.wait_for(lock, std::chrono::seconds(10), [&] { return impl_->active == 0; });
}

}  // namespace minik8s::http
