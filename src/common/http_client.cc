#include "common/http_client.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <utility>

#include "common/beast_stream.h"
#include "common/stream.h"
#include "common/tls.h"

namespace minik8s::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

struct Client::Impl {
  std::string host, port;
  bool https = false;
  std::shared_ptr<TlsContext> tls;
  Status tlsError;  // a TLS configuration that cannot work fails every request
  std::mutex mu;    // guards `stream` against close() from another thread
  std::unique_ptr<Stream> stream;
  beast::flat_buffer buffer;
  std::atomic<bool> closed{false};

  Status connect() {
    if (closed) return Status::Unavailable("the client was closed");
    if (!tlsError.ok()) return tlsError;
    {
      std::lock_guard lock(mu);
      if (stream) return Status::Ok();
    }
    int portNumber = 0;
    try {
      portNumber = std::stoi(port);
    } catch (...) {
      return Status::BadRequest("invalid port \"" + port + "\"");
    }
    auto connected = dialStream(host, portNumber, tls.get());
    if (!connected.ok()) return connected.status();
    std::lock_guard lock(mu);
    stream = std::move(connected).value();
    if (closed) stream->shutdown();
    buffer.clear();
    return Status::Ok();
  }

  void disconnect() {
    std::lock_guard lock(mu);
    if (stream) stream->shutdown();
    stream.reset();
  }

  bhttp::request<bhttp::string_body> build(
      const std::string& method, const std::string& target, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers) {
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    req.set(bhttp::field::host,
            host.find(':') != std::string::npos ? "[" + host + "]:" + port : host + ":" + port);
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

Client::Client(const std::string& baseUrl, TlsClientConfig tls) : impl_(std::make_unique<Impl>()) {
  std::string rest = baseUrl;
  if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  } else if (rest.rfind("https://", 0) == 0) {
    rest = rest.substr(8);
    impl_->https = true;
  }
  if (size_t slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    size_t close = rest.find(']');
    impl_->host = rest.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    colon = close != std::string::npos && close + 1 < rest.size() && rest[close + 1] == ':'
                ? close + 1
                : std::string::npos;
  } else {
    impl_->host = colon == std::string::npos ? rest : rest.substr(0, colon);
  }
  impl_->port = colon == std::string::npos ? (impl_->https ? "443" : "80") : rest.substr(colon + 1);
  if (impl_->https) {
    auto context = TlsContext::forClient(tls);
    if (context.ok()) {
      impl_->tls = std::move(context).value();
    } else {
      impl_->tlsError = context.status();
    }
  }
}

Client::~Client() { impl_->disconnect(); }

void Client::close() {
  impl_->closed = true;
  std::lock_guard lock(impl_->mu);
  if (impl_->stream) impl_->stream->shutdown();
}

Result<Response> Client::request(const std::string& method, const std::string& target,
                                 const std::string& body,
                                 const std::vector<std::pair<std::string, std::string>>& headers) {
  // One retry on a fresh connection: the server may have closed an idle keep-alive connection.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status c = impl_->connect();
    if (!c.ok()) return c;
    BeastStream socket(*impl_->stream);
    auto req = impl_->build(method, target, body, headers);
    beast::error_code ec;
    bhttp::write(socket, req, ec);
    if (ec) {
      impl_->disconnect();
      continue;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1024ull * 1024 * 1024);
    bhttp::read(socket, impl_->buffer, parser, ec);
    if (ec) {
      impl_->disconnect();
      if (attempt == 0) continue;
      return Status::Unavailable("reading the response of " + method + " " + target + ": " +
                                 ec.message());
    }
    auto& msg = parser.get();
    Response r;
    r.status = static_cast<int>(msg.result_int());
    for (auto& f : msg)
      r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
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
  BeastStream socket(*impl_->stream);
  auto req = impl_->build(method, target, "", headers);
  beast::error_code ec;
  bhttp::write(socket, req, ec);
  if (ec) {
    impl_->disconnect();
    return Status::Unavailable("sending " + method + " " + target + ": " + ec.message());
  }
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(boost::none);
  bhttp::read_header(socket, impl_->buffer, parser, ec);
  if (ec) {
    impl_->disconnect();
    return Status::Unavailable("reading the response of " + target + ": " + ec.message());
  }
  Response r;
  r.status = static_cast<int>(parser.get().result_int());
  for (auto& f : parser.get())
    r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  char buf[16384];
  while (!parser.is_done()) {
    parser.get().body().data = buf;
    parser.get().body().size = sizeof buf;
    bhttp::read_some(socket, impl_->buffer, parser, ec);
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
