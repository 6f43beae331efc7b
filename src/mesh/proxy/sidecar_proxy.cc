#include "mesh/proxy/sidecar_proxy.h"

#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <map>

#include "common/logging.h"
#include "mesh/load_balancer.h"

namespace minik8s::mesh {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using asio::awaitable;
using asio::use_awaitable;
using ErrorCode = boost::system::error_code;

namespace {

constexpr uint64_t kMaxBodyBytes = 64ull << 20;
constexpr auto kConnectTimeout = std::chrono::seconds(5);
constexpr auto kNoTimeout = std::chrono::hours(1);
constexpr auto kSniffTimeout = std::chrono::milliseconds(200);

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

// A pooled keep-alive connection to one endpoint.
struct Upstream {
  explicit Upstream(asio::io_context& io) : stream(io) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

Response plainResponse(bhttp::status status, unsigned version, std::string body) {
  Response res{status, version};
  res.set(bhttp::field::content_type, "text/plain");
  res.set(bhttp::field::server, "minik8s-mesh");
  res.body() = std::move(body) + "\n";
  res.prepare_payload();
  return res;
}

bool isUpgrade(const Request& req) {
  return req.find(bhttp::field::upgrade) != req.end() &&
         bhttp::token_list{req[bhttp::field::connection]}.exists("upgrade");
}

bool looksLikeHttpRequest(std::string_view head) {
  // A method token (upper-case letters) then a space: GET, POST, PUT, DELETE, PATCH, HEAD, ...
  size_t i = 0;
  while (i < head.size() && head[i] >= 'A' && head[i] <= 'Z') ++i;
  return i >= 3 && i < head.size() && head[i] == ' ';
}

}  // namespace

std::optional<std::pair<std::string, int>> originalDestinationOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &addr, &len) != 0) return std::nullopt;
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  return std::make_pair(std::string(ip), static_cast<int>(ntohs(addr.sin_port)));
}

struct SidecarProxy::Impl {
  Impl(ProxyOptions o, SidecarProxy& owner)
      : options(std::move(o)),
        self(owner),
        registry(options.registry ? *options.registry : metrics::defaultRegistry()),
        requests(registry.counterVec("mesh_requests_total",
                                     "HTTP requests the sidecar routed, by destination service "
                                     "and response code.",
                                     {"destination_service", "response_code"})),
        latency(registry.histogramVec("mesh_request_duration_seconds",
                                      "Time from a request read to its response written back.",
                                      {"destination_service"},
                                      metrics::exponentialBuckets(0.0005, 2, 16))),
        byVersion(registry.counterVec(
            "mesh_destination_requests_total",
            "HTTP requests the sidecar routed, by destination service, the version label of the "
            "endpoint's pod (\"unknown\" when none answered) and response code: what `minik8s "
            "mesh rollout` reads a new version's error rate from.",
            {"destination_service", "destination_version", "response_code"})),
        rng(options.seed ? options.seed : std::random_device{}()) {}

  ProxyOptions options;
  SidecarProxy& self;
  metrics::Registry& registry;
  metrics::CounterVec& requests;
  metrics::HistogramVec& latency;
  metrics::CounterVec& byVersion;

  asio::io_context io{1};
  tcp::acceptor outbound{io}, inbound{io}, metricsAcceptor{io};
  std::thread thread;

  mutable std::mutex mu;
  std::shared_ptr<const MeshConfig> config = std::make_shared<MeshConfig>();

  // io thread only
  std::mt19937_64 rng;
  std::map<std::string, uint64_t> roundRobin;
  std::map<std::string, EndpointBalancer> balancers;  // by destination ("ns/name/subset")

  std::shared_ptr<const MeshConfig> current() const {
    std::lock_guard lock(mu);
    return config;
  }

  Status listen(tcp::acceptor& acceptor, int port, int* bound) {
    ErrorCode ec;
    tcp::endpoint ep(asio::ip::make_address(options.bindAddress, ec), static_cast<uint16_t>(port));
    if (ec) return Status::BadRequest("bind address " + options.bindAddress + ": " + ec.message());
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Status::Unavailable("listen on " + options.bindAddress + ":" + std::to_string(port) +
                                 ": " + ec.message());
    }
    *bound = acceptor.local_endpoint().port();
    return Status::Ok();
  }

  template <class Handler>
  awaitable<void> acceptLoop(tcp::acceptor& acceptor, Handler handler) {
    for (;;) {
      ErrorCode ec;
      tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(use_awaitable, ec));
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) continue;
      socket.set_option(tcp::no_delay(true), ec);
      asio::co_spawn(io, handler(std::move(socket)), asio::detached);
    }
  }

  std::optional<std::pair<std::string, int>> destinationOf(tcp::socket& socket) {
    auto dst = options.originalDestination ? options.originalDestination(socket.native_handle())
                                           : originalDestinationOf(socket.native_handle());
    // Not redirected (someone dialled a proxy port itself): never loop back into the proxy.
    if (!dst || dst->second == self.outboundPort_ || dst->second == self.inboundPort_) {
      return std::nullopt;
    }
    return dst;
  }

  // --- plain TCP ---------------------------------------------------------------------------

  static awaitable<void> pump(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
    std::vector<char> buf(16 * 1024);
    ErrorCode ec;
    for (;;) {
      size_t n = co_await from->async_read_some(asio::buffer(buf),
                                                asio::redirect_error(use_awaitable, ec));
      if (ec) break;
      co_await asio::async_write(*to, asio::buffer(buf.data(), n),
                                 asio::redirect_error(use_awaitable, ec));
      if (ec) break;
    }
    ErrorCode ignored;
    if (ec == asio::error::eof) {
      to->shutdown(tcp::socket::shutdown_send, ignored);  // pass the half-close on
    } else {
      from->close(ignored);  // a broken side ends both directions
      to->close(ignored);
    }
  }

  awaitable<void> relay(tcp::socket a, tcp::socket b) {
    auto pa = std::make_shared<tcp::socket>(std::move(a));
    auto pb = std::make_shared<tcp::socket>(std::move(b));
    asio::co_spawn(io, pump(pa, pb), asio::detached);
    co_await pump(pb, pa);
  }

  // Connects to the first of `ips` that accepts, then relays; closing `down` when none does
  // tells the client, as a refused connect would.
  awaitable<void> passThrough(tcp::socket down, std::vector<std::string> ips, int port) {
    for (const auto& ip : ips) {
      ErrorCode ec;
      auto address = asio::ip::make_address(ip, ec);
      if (ec) continue;
      tcp::socket up(io);
      co_await up.async_connect(tcp::endpoint(address, static_cast<uint16_t>(port)),
                                asio::redirect_error(use_awaitable, ec));
      if (ec) continue;
      up.set_option(tcp::no_delay(true), ec);
      co_await relay(std::move(down), std::move(up));
      co_return;
    }
  }

  // To the application on loopback; when it listens on the pod IP only, to the original
  // destination itself (the proxy's UID is not redirected, so this does not loop).
  awaitable<void> inboundConnection(tcp::socket socket) {
    auto dst = destinationOf(socket);
    if (!dst) co_return;
    std::vector<std::string> targets;  // (a braced list here trips GCC 12's coroutines)
    targets.push_back(options.inboundTarget);
    targets.push_back(dst->first);
    co_await passThrough(std::move(socket), std::move(targets), dst->second);
  }

  // True when the client's first bytes look like an HTTP request; false when it sends nothing
  // within kSniffTimeout (a server-first protocol) or something else.
  awaitable<bool> sniffHttp(tcp::socket& socket) {
    asio::steady_timer timer(io);
    timer.expires_after(kSniffTimeout);
    timer.async_wait([&socket](ErrorCode ec) {
      if (!ec) socket.cancel();
    });
    ErrorCode ec;
    co_await socket.async_wait(tcp::socket::wait_read, asio::redirect_error(use_awaitable, ec));
    timer.cancel();
    if (ec) co_return false;
    char head[16];
    size_t n = socket.receive(asio::buffer(head), tcp::socket::message_peek, ec);
    co_return !ec && looksLikeHttpRequest(std::string_view(head, n));
  }

  awaitable<void> outboundConnection(tcp::socket socket) {
    auto dst = destinationOf(socket);
    if (!dst) co_return;
    auto cfg = current();
    const MeshService* svc = cfg->serviceAt(dst->first, dst->second);
    const MeshServicePort* port = svc ? svc->port(dst->second) : nullptr;
    if (port != nullptr && port->appProtocol == "http" && co_await sniffHttp(socket)) {
      co_await serveHttp(std::move(socket), svc->key(), dst->second);
    } else {
      std::vector<std::string> targets(1, dst->first);
      co_await passThrough(std::move(socket), std::move(targets), dst->second);
    }
  }

  // --- HTTP --------------------------------------------------------------------------------

  struct Decision {
    std::string service;  // "ns/name"
    std::vector<const MeshEndpoint*> endpoints;
    std::string rrKey;
    std::chrono::milliseconds timeout{0};
    int attempts = 1 + kDefaultRetryAttempts;
    TrafficPolicy policy;  // the DestinationRule's, or its subset's
  };

  // Tells the balancer how an attempt at one endpoint ended, whichever way it leaves.
  struct Outcome {
    Outcome(EndpointBalancer& b, std::string e, const TrafficPolicy& p)
        : balancer(b), endpoint(std::move(e)), policy(p) {
      balancer.started(endpoint);
    }
    ~Outcome() { balancer.finished(endpoint, status, policy, std::chrono::steady_clock::now()); }
    Outcome(const Outcome&) = delete;
    Outcome& operator=(const Outcome&) = delete;
    EndpointBalancer& balancer;
    std::string endpoint;
    const TrafficPolicy& policy;
    int status = 0;  // 0 = no answer
  };

  Decision decide(const MeshConfig& cfg, const std::string& serviceKey, int servicePort,
                  const Request& req) {
    Decision d;
    d.service = serviceKey;
    std::string subset;
    int port = servicePort;
    const MeshService* svc = cfg.service(serviceKey);
    if (svc != nullptr && !svc->routes.empty()) {
      auto header = [&req](std::string_view name) -> std::optional<std::string_view> {
        auto it = req.find(beast::string_view(name.data(), name.size()));
        if (it == req.end()) return std::nullopt;
        return std::string_view(it->value().data(), it->value().size());
      };
      std::string_view target(req.target().data(), req.target().size());
      if (const HttpRoute* route = matchRoute(svc->routes, target, header)) {
        const RouteDestination& dest = route->route[pickWeighted(route->route, rng)];
        d.service = dest.host;
        subset = dest.subset;
        if (dest.port != 0) port = dest.port;
        d.timeout = route->timeout;
        d.attempts = 1 + std::max(route->retryAttempts, 0);
      }
    }
    const MeshService* target = cfg.service(d.service);
    const MeshServicePort* p = target ? target->port(port) : nullptr;
    if (p == nullptr && target != nullptr && target->ports.size() == 1) p = &target->ports[0];
    if (p != nullptr) d.endpoints = subsetEndpoints(*target, *p, subset);
    d.rrKey = d.service + "/" + subset;
    if (target != nullptr) {
      d.policy = target->trafficPolicy;
      auto s = target->subsets.find(subset);
      if (s != target->subsets.end() && s->second.trafficPolicy)
        d.policy = *s->second.trafficPolicy;
    }
    return d;
  }

  awaitable<Response> forward(Request& req, const std::string& serviceKey, int servicePort,
                              std::map<std::string, std::unique_ptr<Upstream>>& pool,
                              std::string* destination, std::string* endpoint,
                              std::string* version) {
    auto cfg = current();
    Decision d = decide(*cfg, serviceKey, servicePort, req);
    *destination = d.service;
    if (d.endpoints.empty()) {
      co_return plainResponse(bhttp::status::service_unavailable, req.version(),
                              "no healthy upstream for " + d.service);
    }
    // Toward the endpoint; the client's own choice is restored after. An upgrade keeps its
    // `Connection: Upgrade`.
    if (!isUpgrade(req)) req.keep_alive(true);
    bool timedOut = false;
    for (int attempt = 0; attempt < d.attempts; ++attempt) {
      EndpointBalancer& balancer = balancers[d.rrKey];
      std::vector<std::string> candidates;
      for (const MeshEndpoint* e : d.endpoints) {
        candidates.push_back(e->ip + ":" + std::to_string(e->port));
      }
      const size_t chosen =
          balancer.pick(candidates, d.policy, std::chrono::steady_clock::now(), rng);
      const MeshEndpoint* ep = d.endpoints[chosen];
      Outcome outcome(balancer, candidates[chosen], d.policy);
      std::string key = ep->ip + ":" + std::to_string(ep->port);
      ErrorCode ec;
      // A pooled connection the endpoint closed while idle fails at once: one free retry.
      for (int fresh = 0; fresh < 2; ++fresh) {
        auto& up = pool[key];
        bool reused = up != nullptr;
        if (!up) {
          auto address = asio::ip::make_address(ep->ip, ec);
          if (ec) break;
          up = std::make_unique<Upstream>(io);
          up->stream.expires_after(kConnectTimeout);
          co_await up->stream.async_connect(tcp::endpoint(address, static_cast<uint16_t>(ep->port)),
                                            asio::redirect_error(use_awaitable, ec));
          if (ec) {
            pool.erase(key);
            break;
          }
          up->stream.socket().set_option(tcp::no_delay(true), ec);
        }
        up->stream.expires_after(d.timeout.count() > 0
                                     ? std::chrono::steady_clock::duration(d.timeout)
                                     : std::chrono::steady_clock::duration(kNoTimeout));
        co_await bhttp::async_write(up->stream, req, asio::redirect_error(use_awaitable, ec));
        bhttp::response_parser<bhttp::string_body> parser;
        parser.body_limit(kMaxBodyBytes);
        if (req.method() == bhttp::verb::head) parser.skip(true);
        if (!ec) {
          co_await bhttp::async_read(up->stream, up->buffer, parser,
                                     asio::redirect_error(use_awaitable, ec));
        }
        if (ec) {
          timedOut = ec == beast::error::timeout;
          pool.erase(key);
          if (reused && !timedOut) continue;
          break;
        }
        Response res = parser.release();
        outcome.status = res.result_int();
        if (!res.keep_alive()) pool.erase(key);
        if (res.result() == bhttp::status::service_unavailable && attempt + 1 < d.attempts) break;
        *endpoint = key;
        if (auto v = ep->labels.find("version"); v != ep->labels.end()) *version = v->second;
        co_return res;
      }
    }
    co_return timedOut
        ? plainResponse(bhttp::status::gateway_timeout, req.version(), "upstream request timeout")
        : plainResponse(bhttp::status::service_unavailable, req.version(),
                        "upstream connect error or disconnect/reset before headers");
  }

  awaitable<void> serveHttp(tcp::socket socket, std::string serviceKey, int servicePort) {
    beast::tcp_stream down(std::move(socket));
    beast::flat_buffer buffer;
    std::map<std::string, std::unique_ptr<Upstream>> pool;
    for (;;) {
      ErrorCode ec;
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(kMaxBodyBytes);
      co_await bhttp::async_read(down, buffer, parser, asio::redirect_error(use_awaitable, ec));
      if (ec) break;
      auto start = std::chrono::steady_clock::now();
      Request req = parser.release();
      bool keepAlive = req.keep_alive();
      bool head = req.method() == bhttp::verb::head;
      bool upgrade = isUpgrade(req);
      std::string destination, endpoint, version;
      Response res =
          co_await forward(req, serviceKey, servicePort, pool, &destination, &endpoint, &version);
      bool switched = upgrade && res.result() == bhttp::status::switching_protocols &&
                      pool.count(endpoint) != 0;
      if (!switched) {
        if (!head && !res.chunked() && !res.has_content_length()) res.prepare_payload();
        res.keep_alive(keepAlive);
      }
      co_await bhttp::async_write(down, res, asio::redirect_error(use_awaitable, ec));
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      requests.with({destination, std::to_string(res.result_int())}).inc();
      byVersion
          .with({destination, version.empty() ? "unknown" : version,
                 std::to_string(res.result_int())})
          .inc();
      latency.with({destination}).observe(seconds);
      if (switched && !ec) {
        // WebSocket and other upgrades: from here on bytes both ways, starting with what either
        // side sent after its HTTP part.
        std::unique_ptr<Upstream> up = std::move(pool[endpoint]);
        pool.erase(endpoint);
        if (buffer.size() > 0) {
          co_await asio::async_write(up->stream.socket(), buffer.data(),
                                     asio::redirect_error(use_awaitable, ec));
        }
        if (!ec && up->buffer.size() > 0) {
          co_await asio::async_write(down.socket(), up->buffer.data(),
                                     asio::redirect_error(use_awaitable, ec));
        }
        if (ec) co_return;
        down.expires_never();
        up->stream.expires_never();
        co_await relay(down.release_socket(), up->stream.release_socket());
        co_return;
      }
      if (ec || !keepAlive) break;
    }
    ErrorCode ignored;
    down.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  // --- metrics -----------------------------------------------------------------------------

  awaitable<void> metricsConnection(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      ErrorCode ec;
      stream.expires_after(std::chrono::seconds(60));
      Request req;
      co_await bhttp::async_read(stream, buffer, req, asio::redirect_error(use_awaitable, ec));
      if (ec) break;
      std::string_view target(req.target().data(), req.target().size());
      Response res;
      if (target.rfind("/metrics", 0) == 0) {
        res = plainResponse(bhttp::status::ok, req.version(), "");
        res.body() = registry.exposition();
        res.set(bhttp::field::content_type, "text/plain; version=0.0.4");
      } else if (target.rfind("/registry", 0) == 0) {
        res = plainResponse(bhttp::status::ok, req.version(), "");
        res.body() = meshConfigToJson(*current()).dump();
        res.set(bhttp::field::content_type, "application/json");
      } else if (target.rfind("/healthz", 0) == 0) {
        res = plainResponse(bhttp::status::ok, req.version(), "ok");
      } else {
        res = plainResponse(bhttp::status::not_found, req.version(), "not found");
      }
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      co_await bhttp::async_write(stream, res, asio::redirect_error(use_awaitable, ec));
      if (ec || !req.keep_alive()) break;
    }
  }
};

SidecarProxy::SidecarProxy(ProxyOptions options)
    : impl_(std::make_unique<Impl>(std::move(options), *this)) {}

SidecarProxy::~SidecarProxy() { stop(); }

Status SidecarProxy::start() {
  Impl& i = *impl_;
  if (Status s = i.listen(i.outbound, i.options.outboundPort, &outboundPort_); !s.ok()) return s;
  if (Status s = i.listen(i.inbound, i.options.inboundPort, &inboundPort_); !s.ok()) return s;
  if (Status s = i.listen(i.metricsAcceptor, i.options.metricsPort, &metricsPort_); !s.ok()) {
    return s;
  }
  asio::co_spawn(
      i.io,
      i.acceptLoop(i.outbound, [&i](tcp::socket s) { return i.outboundConnection(std::move(s)); }),
      asio::detached);
  asio::co_spawn(
      i.io,
      i.acceptLoop(i.inbound, [&i](tcp::socket s) { return i.inboundConnection(std::move(s)); }),
      asio::detached);
  asio::co_spawn(i.io,
                 i.acceptLoop(i.metricsAcceptor,
                              [&i](tcp::socket s) { return i.metricsConnection(std::move(s)); }),
                 asio::detached);
  i.thread = std::thread([&i] { i.io.run(); });
  LOG_INFO("mesh proxy: outbound :{}, inbound :{}, metrics :{}", outboundPort_, inboundPort_,
           metricsPort_);
  return Status::Ok();
}

void SidecarProxy::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

void SidecarProxy::setConfig(std::shared_ptr<const MeshConfig> config) {
  std::lock_guard lock(impl_->mu);
  impl_->config = std::move(config);
}

std::shared_ptr<const MeshConfig> SidecarProxy::config() const { return impl_->current(); }

}  // namespace minik8s::mesh
