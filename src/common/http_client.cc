#include <utility>

#include "common/http_client.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace minik8s::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

struct Client::Impl {
  std::string host, port;
  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  bool connected = false;
  std::atomic<bool> closed{false};

  Status connect() {
    if (closed) return Status::Unavailable("the client was closed");
    if (connected) return Status::Ok();
    beast::error_code ec;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(host, port, ec);
    if (ec) return Status::Unavailable("cannot resolve " + host + ": " + ec.message());
    asio::connect(socket, results, ec);
    if (ec) return Status::Unavailable("cannot connect to " + host + ":" + port + ": " + ec.message());
    socket.set_option(tcp::no_delay(true), ec);
    buffer.clear();
    connected = true;
    return Status::Ok();
  }

  void disconnect() {
    beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    connected = false;
  }

  bhttp::request<bhttp::string_body> build(const std::string& method, const std::string& target,
                                           const std::string& body,
                                           const std::vector<std::pair<std::string, std::string>>& headers) {
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    req.set(bhttp::field::host, host + ":" + port);
    req.set(bhttp::field::user_agent, "minik8s");
    for (const auto& [k, v] : headers) req.set(k, v);
    if (!body.empty() && req.find(bhttp::field::content_type) == req.end()) {
      req.set(bhttp::field::content_type, "application/json");
    }
    req.body() = body;
    req.prepare_payload();
    req.keep_alive(true);
    return req;
  }
};

Client::Client(const std::string& baseUrl, TlsClientConfig /*tls: not yet*/)
    : impl_(std::make_unique<Impl>()) {
  std::string rest = baseUrl;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  size_t colon = rest.rfind(':');
  impl_->host = colon == std::string::npos ? rest : rest.substr(0, colon);
  impl_->port = colon == std::string::npos ? "80" : rest.substr(colon + 1);
}

Client::~Client() { impl_->disconnect(); }

void Client::close() {
  impl_->closed = true;
  beast::error_code ec;
  impl_->socket.shutdown(tcp::socket::shutdown_both, ec);
}

Result<Response> Client::request(const std::string& method, const std::string& target,
                                 const std::string& body,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
  // One retry on a fresh connection: the server may have closed an idle keep-alive connection.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status c = impl_->connect();
    if (!c.ok()) return c;
    auto req = impl_->build(method, target, body, headers);
    beast::error_code ec;
    bhttp::write(impl_->socket, req, ec);
    if (ec) {
      impl_->disconnect();
      continue;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1024ull * 1024 * 1024);
    bhttp::read(impl_->socket, impl_->buffer, parser, ec);
    if (ec) {
      impl_->disconnect();
      if (attempt == 0) continue;
      return Status::Unavailable("reading the response of " + method + " " + target + ": " +
                                 ec.message());
    }
    auto& msg = parser.get();
    Response r;
    r.status = static_cast<int>(msg.result_int());
    for (auto& f : msg) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    r.body = std::move(msg.body());
    if (!msg.keep_alive()) impl_->disconnect();
    return r;
  }
  return Status::Unavailable("cannot send " + method + " " + target);
}

Result<Response> Client::stream(const std::string& method, const std::string& target,
                                const std::function<bool(std::string_view)>& onData,
                                const std::vector<std::pair<std::string, std::string>>& headers) {
  Status c = impl_->connect();
  if (!c.ok()) return c;
  auto req = impl_->build(method, target, "", headers);
  beast::error_code ec;
  bhttp::write(impl_->socket, req, ec);
  if (ec) {
    impl_->disconnect();
    return Status::Unavailable("sending " + method + " " + target + ": " + ec.message());
  }
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);
  bhttp::read_header(impl_->socket, impl_->buffer, parser, ec);
  if (ec) {
    impl_->disconnect();
    return Status::Unavailable("reading the response of " + target + ": " + ec.message());
  }
  Response r;
  r.status = static_cast<int>(parser.get().result_int());
  for (auto& f : parser.get()) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  char buf[16384];
  while (!parser.is_done()) {
    parser.get().body().data = buf;
    parser.get().body().size = sizeof buf;
    bhttp::read_some(impl_->socket, impl_->buffer, parser, ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) break;
    size_t n = sizeof buf - parser.get().body().size;
    if (n > 0 && !onData(std::string_view(buf, n))) break;
  }
  // A stream leaves the connection in an unknown state: start afresh next time.
  impl_->disconnect();
  return r;
}

}  // namespace minik8s::http
