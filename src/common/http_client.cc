#include "common/http_client.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <limits>
#include <mutex>
#include <utility>

#include "common/stream.h"
#include "common/tls.h"

namespace minik8s::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using Clock = std::chrono::steady_clock;

namespace {

// Message prefixes of failures that happened before the server could act on a request:
// dialStream's (common/stream.h) and ours for a request that was not sent entirely.
constexpr const char* kNeverSentPrefixes[] = {"cannot connect", "cannot resolve",
                                              "TLS handshake failed", "cannot send"};

// Reads at least a whole TLS record (16 KiB of plaintext at most) at a time, so that no
// decrypted byte waits inside OpenSSL where poll() cannot see it.
constexpr size_t kReadChunk = 32 * 1024;
constexpr size_t kWriteChunk = 16 * 1024;

// Waits until `fd` is ready for `events` or `limit` passes (0 = no limit); false on timeout.
// A shut down socket counts as ready: the following read or write reports it.
bool waitReady(int fd, short events, std::chrono::milliseconds limit) {
  if (limit.count() <= 0) return true;
  const auto deadline = Clock::now() + limit;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;
  }
}

// Keepalive and TCP_USER_TIMEOUT so that a vanished peer breaks the connection (see
// ClientTimeouts::deadPeer). Best effort: an option the kernel refuses leaves its default.
void limitDeadPeer(int fd, std::chrono::milliseconds deadPeer) {
  const int seconds = static_cast<int>(deadPeer.count() / 1000);
  if (seconds <= 0) return;
  const int one = 1, probes = 3;
  const int idle = std::max(1, seconds / 2);
  const int interval = std::max(1, (seconds - idle) / probes);
  const unsigned userTimeoutMs = static_cast<unsigned>(seconds) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeoutMs, sizeof userTimeoutMs);
}

// Bytes read off a connection and not yet handed to the parser.
struct ReadAhead {
  std::vector<char> data = std::vector<char>(kReadChunk);
  size_t begin = 0, end = 0;
  void clear() { begin = end = 0; }
};

// Beast's SyncReadStream and SyncWriteStream over a Stream, with every wait bounded by `limit`
// (0 = none): a read or write that makes no progress for that long fails with timed_out.
class TimedStream {
 public:
  TimedStream(Stream& stream, ReadAhead& ahead, std::chrono::milliseconds limit)
      : stream_(stream), ahead_(ahead), limit_(limit) {}

  void setLimit(std::chrono::milliseconds limit) { limit_ = limit; }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    ec = {};
    if (asio::buffer_size(buffers) == 0) return 0;
    if (ahead_.begin == ahead_.end) {
      if (!waitReady(stream_.fd(), POLLIN, limit_)) {
        ec = asio::error::timed_out;
        return 0;
      }
      auto n = stream_.read(ahead_.data.data(), ahead_.data.size());
      if (!n.ok()) {
        ec = asio::error::connection_reset;
        return 0;
      }
      if (*n == 0) {
        ec = asio::error::eof;
        return 0;
      }
      ahead_.begin = 0;
      ahead_.end = *n;
    }
    const size_t copied = asio::buffer_copy(
        buffers, asio::buffer(ahead_.data.data() + ahead_.begin, ahead_.end - ahead_.begin));
    ahead_.begin += copied;
    return copied;
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    beast::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Gathers the buffers and writes them in pieces, each after the socket took the last one.
  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, beast::error_code& ec) {
    ec = {};
    std::string gathered(asio::buffer_size(buffers), '\0');
    asio::buffer_copy(asio::buffer(gathered), buffers);
    std::string_view rest = gathered;
    while (!rest.empty()) {
      if (!waitReady(stream_.fd(), POLLOUT, limit_)) {
        ec = asio::error::timed_out;
        return 0;
      }
      const std::string_view piece = rest.substr(0, kWriteChunk);
      if (!stream_.write(piece).ok()) {
        ec = asio::error::broken_pipe;
        return 0;
      }
      rest.remove_prefix(piece.size());
    }
    return gathered.size();
  }

  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    beast::error_code ec;
    size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  Stream& stream_;
  ReadAhead& ahead_;
  std::chrono::milliseconds limit_;
};

bool replayable(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

}  // namespace

bool neverReachedServer(const Status& failure) {
  if (failure.ok()) return false;
  for (const char* prefix : kNeverSentPrefixes) {
    if (failure.message().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

struct Client::Impl {
  std::string host, port;
  bool https = false;
  std::shared_ptr<TlsContext> tls;
  Status tlsError;  // a TLS configuration that cannot work fails every request
  ClientTimeouts timeouts;
  std::mutex mu;  // guards `stream` against close() from another thread
  std::unique_ptr<Stream> stream;
  ReadAhead ahead;
  beast::flat_buffer buffer;
  std::atomic<bool> closed{false};

  // A connection, the kept-alive one when the server has not closed it; `reused` says which.
  Status connect(bool& reused) {
    reused = false;
    if (closed) return Status::Unavailable("the client was closed");
    if (!tlsError.ok()) return tlsError;
    {
      std::lock_guard lock(mu);
      // An idle keep-alive connection the server closed: do not send a request into it.
      if (stream && ahead.begin == ahead.end && buffer.size() == 0 && stream->peerClosed()) {
        stream->shutdown();
        stream.reset();
      }
      if (stream) {
        reused = true;
        return Status::Ok();
      }
    }
    int portNumber = 0;
    try {
      portNumber = std::stoi(port);
    } catch (...) {
      return Status::BadRequest("invalid port \"" + port + "\"");
    }
    auto connected = dialStream(host, portNumber, tls.get(), timeouts.connect);
    if (!connected.ok()) return connected.status();
    limitDeadPeer((*connected)->fd(), timeouts.deadPeer);
    std::lock_guard lock(mu);
    stream = std::move(connected).value();
    if (closed) stream->shutdown();
    buffer.clear();
    ahead.clear();
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

  Status timedOut(const std::string& what) const {
    return Status::Timeout(what + ": no progress within " +
                           std::to_string(timeouts.request.count()) + " ms");
  }
};

Client::Client(const std::string& baseUrl, TlsClientConfig tls, ClientTimeouts timeouts)
    : impl_(std::make_unique<Impl>()) {
  impl_->timeouts = timeouts;
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
  const std::string what = method + " " + target;
  // A second attempt only on a fresh connection after a reused one broke (see the header).
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = false;
    Status c = impl_->connect(reused);
    if (!c.ok()) return c;
    TimedStream socket(*impl_->stream, impl_->ahead, impl_->timeouts.request);
    auto req = impl_->build(method, target, body, headers);
    beast::error_code ec;
    bhttp::write(socket, req, ec);
    if (ec) {
      impl_->disconnect();
      if (ec == asio::error::timed_out) return impl_->timedOut("cannot send " + what);
      if (reused && attempt == 0) continue;
      return Status::Unavailable("cannot send " + what + ": " + ec.message());
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1024ull * 1024 * 1024);
    bhttp::read(socket, impl_->buffer, parser, ec);
    if (ec) {
      impl_->disconnect();
      if (ec == asio::error::timed_out) return impl_->timedOut("waiting for the answer to " + what);
      if (reused && attempt == 0 && !parser.got_some() && replayable(method)) continue;
      return Status::Unavailable("reading the response of " + what + ": " + ec.message());
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
  return Status::Unavailable("cannot send " + what + ": the connection broke twice");
}

Result<Response> Client::stream(const std::string& method, const std::string& target,
                                const std::function<bool(std::string_view)>& onData,
                                const std::vector<std::pair<std::string, std::string>>& headers) {
  const std::string what = method + " " + target;
  bool reused = false;
  Status c = impl_->connect(reused);
  if (!c.ok()) return c;
  TimedStream socket(*impl_->stream, impl_->ahead, impl_->timeouts.request);
  auto req = impl_->build(method, target, "", headers);
  beast::error_code ec;
  bhttp::write(socket, req, ec);
  if (ec) {
    impl_->disconnect();
    if (ec == asio::error::timed_out) return impl_->timedOut("cannot send " + what);
    return Status::Unavailable("cannot send " + what + ": " + ec.message());
  }
  bhttp::response_parser<bhttp::buffer_body> parser;
  // No limit. Not boost::none: Boost 1.74's parser compares a Content-Length with the optional
  // limit as `len > limit`, which is true for any length when the limit is none, so every
  // answer with a Content-Length (an error Status, for instance) failed with "body limit
  // exceeded".
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  bhttp::read_header(socket, impl_->buffer, parser, ec);
  if (ec) {
    impl_->disconnect();
    if (ec == asio::error::timed_out) return impl_->timedOut("waiting for the answer to " + what);
    return Status::Unavailable("reading the response of " + what + ": " + ec.message());
  }
  Response r;
  r.status = static_cast<int>(parser.get().result_int());
  for (auto& f : parser.get())
    r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  // The body may stay quiet for as long as the server likes; keepalive watches the peer.
  socket.setLimit(std::chrono::milliseconds(0));
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
  // A body cut before its end: the server died, the peer vanished or close() was called.
  if (ec && !parser.is_done()) {
    return Status::Unavailable("the stream of " + what + " broke: " + ec.message());
  }
  return r;
}

}  // namespace minik8s::http
