#include "mesh/proxy/sidecar_proxy.h"

#include <arpa/inet.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <map>
#include <optional>
#include <span>

#include "common/logging.h"
#include "mesh/authorization_policy.h"
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
constexpr auto kSniffTimeout = std::chrono::milliseconds(200);
// A client pod with a sidecar will send a ClientHello; under load its sidecar may take a while.
constexpr auto kMeshPeerSniffTimeout = std::chrono::seconds(5);
constexpr int kSidecarMetricsPort = 15090;  // excluded from inbound interception (mesh-init)

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

// Both sides' TLS settings from one workload certificate; shared by the connections made with
// it, so a rotation leaves them alone.
struct TlsContexts {
  asio::ssl::context server{asio::ssl::context::tls_server};
  asio::ssl::context client{asio::ssl::context::tls_client};
  WorkloadCredentials credentials;
};

using TlsStream = asio::ssl::stream<beast::tcp_stream&>;

// One side of a connection: TCP, and TLS over it for mutual TLS. Also a pooled keep-alive
// connection to one endpoint (with the buffer of its responses).
struct Channel {
  explicit Channel(asio::io_context& io) : transport(io) {}
  explicit Channel(tcp::socket socket) : transport(std::move(socket)) {}
  beast::tcp_stream transport;
  std::shared_ptr<TlsContexts> contexts;  // keeps the SSL_CTX of `tls` alive
  std::unique_ptr<TlsStream> tls;
  beast::flat_buffer buffer;
  std::string head;       // the message head being written (kept for its capacity)
  bool deadline = false;  // `transport` has an expiry: its operations arm a timer

  // Bounds the operations from now on (beast's tcp_stream closes the socket at the deadline).
  void setDeadline(std::chrono::steady_clock::duration d) {
    transport.expires_after(d);
    deadline = true;
  }
  void clearDeadline() {
    transport.expires_never();
    deadline = false;
  }

  void shutdownSend() {
    ErrorCode ignored;
    transport.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }
  void close() {
    ErrorCode ignored;
    transport.socket().close(ignored);
  }
};

// Runs `op` on the channel's TLS stream when it has one, else on its TCP stream; `op` returns
// the same awaitable type for each. Without a deadline on the socket itself: tcp_stream's
// operations cost a timer and type-erased executor copies even when they have no expiry.
template <class Op>
auto onStream(Channel& c, Op&& op) {
  if (c.tls) return op(*c.tls);
  if (c.deadline) return op(c.transport);
  return op(c.transport.socket());
}

// Appends the start line and the fields of `msg` as Beast's serializer writes them.
template <bool isRequest>
void appendHead(std::string& out, const bhttp::message<isRequest, bhttp::string_body>& msg) {
  auto append = [&out](beast::string_view text) { out.append(text.data(), text.size()); };
  auto version = [&out](unsigned v) {
    out += "HTTP/";
    out += static_cast<char>('0' + v / 10);
    out += '.';
    out += static_cast<char>('0' + v % 10);
  };
  if constexpr (isRequest) {
    append(msg.method_string());
    out += ' ';
    append(msg.target());
    out += ' ';
    version(msg.version());
  } else {
    version(msg.version());
    const unsigned code = msg.result_int();
    out += ' ';
    out += static_cast<char>('0' + code / 100 % 10);
    out += static_cast<char>('0' + code / 10 % 10);
    out += static_cast<char>('0' + code % 10);
    out += ' ';
    append(msg.reason());
  }
  out += "\r\n";
  for (const auto& field : msg) {
    append(field.name_string());
    out += ": ";
    append(field.value());
    out += "\r\n";
  }
  out += "\r\n";
}

// A body up to this size goes in one TLS record with its head (one write, not two).
constexpr size_t kCoalesceBytes = 16 * 1024;
constexpr size_t kKeptHeadBytes = 2048;

// Writes `msg` on `c`: its head made in one piece and the body, in one gather write (Beast's
// serializer hands the socket one buffer per field, and a TLS stream one record per buffer).
// Chunked messages still go through Beast, which frames the chunks.
template <bool isRequest>
awaitable<ErrorCode> writeMessage(Channel& c, bhttp::message<isRequest, bhttp::string_body>& msg) {
  ErrorCode ec;
  if (msg.chunked()) {
    co_await onStream(c, [&](auto& s) {
      return bhttp::async_write(s, msg, asio::redirect_error(use_awaitable, ec));
    });
    co_return ec;
  }
  c.head.clear();
  appendHead(c.head, msg);
  const std::string& body = msg.body();
  if (c.tls && body.size() <= kCoalesceBytes) {
    c.head += body;
    co_await asio::async_write(*c.tls, asio::buffer(c.head),
                               asio::redirect_error(use_awaitable, ec));
  } else {
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(c.head), asio::buffer(body)};
    co_await onStream(c, [&](auto& s) {
      return asio::async_write(s, buffers, asio::redirect_error(use_awaitable, ec));
    });
  }
  // A kept connection keeps a head's worth of memory, not a coalesced body's.
  if (c.head.capacity() > kKeptHeadBytes) std::string().swap(c.head);
  co_return ec;
}

// The SPIFFE identity of the peer's certificate (verified by the handshake), if it has one.
std::optional<WorkloadId> peerWorkload(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return std::nullopt;
  std::optional<WorkloadId> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names, i);
    if (gn->type != GEN_URI) continue;
    const ASN1_STRING* s = gn->d.uniformResourceIdentifier;
    out = parseSpiffeId(std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         static_cast<size_t>(ASN1_STRING_length(s))));
    if (out) break;
  }
  GENERAL_NAMES_free(names);
  X509_free(cert);
  return out;
}

int selectMeshAlpn(SSL*, const unsigned char** out, unsigned char* outLen, const unsigned char* in,
                   unsigned int inLen, void*) {
  const std::string_view want(kMeshAlpn);
  for (unsigned int i = 0; i < inLen;) {
    unsigned int n = in[i];
    if (i + 1 + n > inLen) break;
    if (std::string_view(reinterpret_cast<const char*>(in + i + 1), n) == want) {
      *out = in + i + 1;
      *outLen = static_cast<unsigned char>(n);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + n;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

Result<std::shared_ptr<TlsContexts>> makeTlsContexts(const WorkloadCredentials& c) {
  auto t = std::make_shared<TlsContexts>();
  t->credentials = c;
  for (asio::ssl::context* ctx : {&t->server, &t->client}) {
    ErrorCode ec;
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1,
                     ec);
    if (!ec) ctx->use_certificate_chain(asio::buffer(c.certPem), ec);
    if (!ec) ctx->use_private_key(asio::buffer(c.keyPem), asio::ssl::context::pem, ec);
    if (!ec) ctx->add_certificate_authority(asio::buffer(c.caPem), ec);
    if (!ec) {
      ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
    }
    if (ec) return Status::BadRequest("workload certificate: " + ec.message());
  }
  std::string alpn = std::string(1, static_cast<char>(sizeof(kMeshAlpn) - 1)) + kMeshAlpn;
  if (SSL_CTX_set_alpn_protos(t->client.native_handle(),
                              reinterpret_cast<const unsigned char*>(alpn.data()),
                              static_cast<unsigned int>(alpn.size())) != 0) {
    return Status::BadRequest("workload certificate: cannot set ALPN");
  }
  SSL_CTX_set_alpn_select_cb(t->server.native_handle(), selectMeshAlpn, nullptr);
  return t;
}

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
        requests(registry.counterVec(
            "mesh_requests_total",
            "HTTP requests the sidecar routed, by destination service, response code and source "
            "(this sidecar's pod: its namespace and workload, the pod's app label or else its "
            "name).",
            {"destination_service", "response_code", "source_namespace", "source_workload"})),
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
        inboundConnections(registry.counterVec(
            "mesh_inbound_connections_total",
            "Connections the inbound listener accepted, by security (mutual_tls or plaintext) and "
            "the client's SPIFFE identity (source_principal, \"unknown\" for plain text).",
            {"security", "source_principal"})),
        inboundRefused(registry.counterVec(
            "mesh_inbound_refused_total",
            "Connections the inbound listener closed: plaintext (under STRICT), handshake_failed, "
            "no_certificate (none yet), bad_identity (no SPIFFE ID of the trust domain).",
            {"reason"})),
        authorizationDenied(registry.counterVec(
            "mesh_authorization_denied_total",
            "Connections (protocol tcp) and HTTP requests (http) the inbound listener denied by "
            "the workload's AuthorizationPolicies, by the DENY policy that denied (\"\" when no "
            "ALLOW policy matched).",
            {"protocol", "policy"})),
        outboundConnections(registry.counterVec(
            "mesh_outbound_connections_total",
            "Connections the sidecar opened toward endpoints, by security: mutual_tls, plaintext, "
            "or mutual_tls_failed (handshake failed or the server's identity was not the one "
            "expected).",
            {"security"})),
        rng(options.seed ? options.seed : std::random_device{}()) {}

  ProxyOptions options;
  SidecarProxy& self;
  metrics::Registry& registry;
  metrics::CounterVec& requests;
  metrics::HistogramVec& latency;
  metrics::CounterVec& byVersion;
  metrics::CounterVec& inboundConnections;
  metrics::CounterVec& inboundRefused;
  metrics::CounterVec& authorizationDenied;
  metrics::CounterVec& outboundConnections;

  asio::io_context io{1};
  tcp::acceptor outbound{io}, inbound{io}, metricsAcceptor{io};
  std::thread thread;

  mutable std::mutex mu;
  std::shared_ptr<const MeshConfig> config = std::make_shared<MeshConfig>();
  std::shared_ptr<TlsContexts> tls;  // null until the first workload certificate
  int rotations = 0;

  // io thread only
  std::mt19937_64 rng;
  std::map<std::string, uint64_t> roundRobin;
  std::map<std::string, EndpointBalancer> balancers;  // by destination ("ns/name/subset")

  std::shared_ptr<const MeshConfig> current() const {
    std::lock_guard lock(mu);
    return config;
  }

  std::shared_ptr<TlsContexts> contexts() const {
    std::lock_guard lock(mu);
    return tls;
  }

  // "" for plain text, or the SPIFFE ID the endpoint's sidecar must present: mutual TLS goes to
  // a pod with a sidecar whose policy on that port is not DISABLE, once we have a certificate.
  std::string mtlsPeer(const MeshConfig& cfg, const std::string& ns,
                       const std::map<std::string, std::string>& labels, bool sidecar,
                       const std::string& serviceAccount, int port) const {
    // A sidecar's own metrics port is not intercepted at the destination: plain text.
    if (!sidecar || ns.empty() || port == kSidecarMetricsPort || !contexts()) return "";
    if (cfg.mtlsMode(ns, labels, port) == MtlsMode::kDisable) return "";
    return spiffeId({ns, serviceAccount.empty() ? "default" : serviceAccount});
  }

  std::string mtlsPeer(const MeshConfig& cfg, const MeshEndpoint& ep) const {
    return mtlsPeer(cfg, ep.ns, ep.labels, ep.sidecar, ep.serviceAccount, ep.port);
  }

  const std::map<std::string, std::string>& ownLabels(const MeshConfig& cfg) const {
    static const std::map<std::string, std::string> kNoLabels;
    const MeshPod* pod = cfg.pod(options.podNamespace + "/" + options.podName);
    return pod ? pod->labels : kNoLabels;
  }

  // The mode this sidecar's own pod has on `port`.
  MtlsMode ownMode(const MeshConfig& cfg, int port) const {
    return cfg.mtlsMode(options.podNamespace, ownLabels(cfg), port);
  }

  // The AuthorizationPolicies of this sidecar's own pod.
  std::vector<const AuthorizationPolicy*> ownPolicies(const MeshConfig& cfg) const {
    return applicablePolicies(cfg.authorizationPolicies, options.podNamespace, ownLabels(cfg));
  }

  // Connects `ch` to ip:port; with `peerId`, runs the TLS client handshake with this workload's
  // certificate and checks that the server presented `peerId`.
  awaitable<ErrorCode> dial(Channel& ch, const std::string& ip, int port, std::string peerId) {
    ErrorCode ec;
    auto address = asio::ip::make_address(ip, ec);
    if (ec) co_return ec;
    ch.setDeadline(kConnectTimeout);
    co_await ch.transport.async_connect(tcp::endpoint(address, static_cast<uint16_t>(port)),
                                        asio::redirect_error(use_awaitable, ec));
    if (ec) co_return ec;
    ch.transport.socket().set_option(tcp::no_delay(true), ec);
    ec = {};
    if (!peerId.empty()) {
      ch.contexts = contexts();
      if (!ch.contexts) co_return asio::error::access_denied;
      ch.tls = std::make_unique<TlsStream>(ch.transport, ch.contexts->client);
      co_await ch.tls->async_handshake(asio::ssl::stream_base::client,
                                       asio::redirect_error(use_awaitable, ec));
      if (!ec) {
        auto peer = peerWorkload(ch.tls->native_handle());
        if (!peer || spiffeId(*peer) != peerId) {
          LOG_WARN("mesh proxy: {}:{} presented {}, expected {}", ip, port,
                   peer ? spiffeId(*peer) : "no SPIFFE identity", peerId);
          ec = asio::error::access_denied;
        }
      }
      if (ec) {
        outboundConnections.with({"mutual_tls_failed"}).inc();
        ch.close();
        co_return ec;
      }
    }
    ch.clearDeadline();
    outboundConnections.with({peerId.empty() ? "plaintext" : "mutual_tls"}).inc();
    co_return ec;
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

  static awaitable<void> pump(std::shared_ptr<Channel> from, std::shared_ptr<Channel> to) {
    std::vector<char> buf(16 * 1024);
    ErrorCode ec;
    for (;;) {
      size_t n = co_await onStream(*from, [&](auto& s) {
        return s.async_read_some(asio::buffer(buf), asio::redirect_error(use_awaitable, ec));
      });
      if (ec) break;
      co_await onStream(*to, [&](auto& s) {
        return asio::async_write(s, asio::buffer(buf.data(), n),
                                 asio::redirect_error(use_awaitable, ec));
      });
      if (ec) break;
    }
    // Pass a half-close on. A TLS side ends with its TCP FIN (no close_notify: the other
    // direction may still be reading), which the peer sidecar reads as stream_truncated.
    if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
      to->shutdownSend();
    } else {
      from->close();  // a broken side ends both directions
      to->close();
    }
  }

  awaitable<void> relay(std::shared_ptr<Channel> a, std::shared_ptr<Channel> b) {
    asio::co_spawn(io, pump(a, b), asio::detached);
    co_await pump(b, a);
  }

  struct Target {
    std::string ip;
    int port = 0;
    std::string peerId;  // "" = plain text
  };

  // A connection to the first of `targets` that accepts; null when none does.
  awaitable<std::shared_ptr<Channel>> dialFirst(std::span<const Target> targets) {
    for (const auto& t : targets) {
      auto up = std::make_shared<Channel>(io);
      if (!co_await dial(*up, t.ip, t.port, t.peerId)) co_return up;
    }
    co_return nullptr;
  }

  // Connects to the first of `targets` that accepts, then relays; closing `down` when none does
  // tells the client, as a refused connect would.
  awaitable<void> passThrough(std::shared_ptr<Channel> down, std::vector<Target> targets) {
    std::shared_ptr<Channel> up = co_await dialFirst(targets);
    if (up) co_await relay(std::move(down), std::move(up));
  }

  // What the client's first bytes are: kPlain when it sends nothing within `timeout` (a
  // server-first protocol).
  awaitable<Hello> sniffHello(tcp::socket& socket, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    asio::steady_timer timer(io);
    timer.expires_at(deadline);
    timer.async_wait([&socket](ErrorCode ec) {
      if (!ec) socket.cancel();
    });
    ErrorCode ec;
    co_await socket.async_wait(tcp::socket::wait_read, asio::redirect_error(use_awaitable, ec));
    timer.cancel();
    if (ec) co_return Hello::kPlain;
    std::array<char, 4096> head;
    for (;;) {
      size_t n = socket.receive(asio::buffer(head), tcp::socket::message_peek, ec);
      if (ec || n == 0) co_return Hello::kPlain;
      Hello hello = classifyHello(std::string_view(head.data(), n));
      if (hello != Hello::kIncomplete) co_return hello;
      if (n == head.size() || std::chrono::steady_clock::now() > deadline) {
        co_return Hello::kOtherTls;
      }
      asio::steady_timer wait(io);  // the rest of the ClientHello is on its way
      wait.expires_after(std::chrono::milliseconds(2));
      co_await wait.async_wait(asio::redirect_error(use_awaitable, ec));
    }
  }

  bool fromProbeSource(tcp::socket& socket) const {
    ErrorCode ec;
    auto peer = socket.remote_endpoint(ec);
    if (ec) return false;
    const std::string ip = peer.address().to_string();
    return std::find(options.probeSources.begin(), options.probeSources.end(), ip) !=
           options.probeSources.end();
  }

  void refuse(tcp::socket& socket, const char* reason) {
    inboundRefused.with({reason}).inc();
    ErrorCode ignored;
    socket.set_option(asio::socket_base::linger(true, 0), ignored);  // a reset, not a FIN
    socket.close(ignored);
  }

  // Mutual TLS from another sidecar is terminated here; plain text passes unless the policy is
  // STRICT. Then to the application on loopback; when it listens on the pod IP only, to the
  // original destination itself (the proxy's UID is not redirected, so this does not loop).
  awaitable<void> inboundConnection(tcp::socket socket) {
    auto dst = destinationOf(socket);
    if (!dst) co_return;
    auto cfg = current();
    MtlsMode mode = ownMode(*cfg, dst->second);
    // The kubelet's probes pass as they do under STRICT (Istio sends them through its agent).
    const bool probe = fromProbeSource(socket);
    AuthzRequest authz;
    authz.destinationIp = dst->first;
    authz.destinationPort = dst->second;
    {
      ErrorCode ec;
      auto peer = socket.remote_endpoint(ec);
      if (!ec) authz.sourceIp = peer.address().to_string();
    }
    std::string principal = "unknown";
    bool mutualTls = false;
    std::unique_ptr<TlsStream> tlsStream;
    std::shared_ptr<TlsContexts> ctx;
    if (mode != MtlsMode::kDisable) {
      // A client that does not speak first is plain text after kSniffTimeout, unless it is a
      // pod with a sidecar (its ClientHello may be late when its sidecar is busy).
      ErrorCode ec;
      auto peer = socket.remote_endpoint(ec);
      const MeshPod* peerPod = ec ? nullptr : cfg->podAt(peer.address().to_string());
      auto timeout = peerPod != nullptr && peerPod->sidecar
                         ? std::chrono::milliseconds(kMeshPeerSniffTimeout)
                         : std::chrono::milliseconds(kSniffTimeout);
      Hello hello = co_await sniffHello(socket, timeout);
      if (hello == Hello::kMeshTls) {
        ctx = contexts();
        if (!ctx) {
          refuse(socket, "no_certificate");
          co_return;
        }
        mutualTls = true;
      } else if (mode == MtlsMode::kStrict && !fromProbeSource(socket)) {
        refuse(socket, "plaintext");
        co_return;
      }
    }
    auto down = std::make_shared<Channel>(std::move(socket));
    if (mutualTls) {
      down->contexts = ctx;
      down->tls = std::make_unique<TlsStream>(down->transport, ctx->server);
      down->setDeadline(kConnectTimeout);
      ErrorCode ec;
      co_await down->tls->async_handshake(asio::ssl::stream_base::server,
                                          asio::redirect_error(use_awaitable, ec));
      if (ec) {
        LOG_WARN("mesh proxy: inbound mTLS handshake failed: {}", ec.message());
        refuse(down->transport.socket(), "handshake_failed");
        co_return;
      }
      auto peer = peerWorkload(down->tls->native_handle());
      if (!peer) {
        refuse(down->transport.socket(), "bad_identity");
        co_return;
      }
      down->clearDeadline();
      principal = spiffeId(*peer);
      authz.principal = principal.substr(principal.rfind("spiffe://", 0) == 0 ? 9 : 0);
    }
    inboundConnections.with({mutualTls ? "mutual_tls" : "plaintext", principal}).inc();
    std::vector<Target> targets;  // (a braced list here trips GCC 12's coroutines)
    targets.push_back(Target{options.inboundTarget, dst->second, ""});
    targets.push_back(Target{dst->first, dst->second, ""});
    // AuthorizationPolicies: per request on an HTTP port when a rule needs the request, else once
    // for the connection.
    auto policies = probe ? std::vector<const AuthorizationPolicy*>{} : ownPolicies(*cfg);
    if (!policies.empty()) {
      if (needsHttp(policies) && inboundIsHttp(*cfg, *dst)) {
        co_await serveInboundHttp(down, std::move(targets), std::move(authz));
        co_return;
      }
      AuthzDecision decision = authorize(policies, authz);
      if (!decision.allowed) {
        authorizationDenied.with({"tcp", decision.policy}).inc();
        LOG_INFO("mesh proxy: connection from {} ({}) to port {} denied: {}", authz.sourceIp,
                 principal, authz.destinationPort, decision.reason);
        refuse(down->transport.socket(), "rbac_denied");
        co_return;
      }
    }
    co_await passThrough(down, std::move(targets));
  }

  // Whether the pod's own ip:port is an endpoint of an HTTP service port.
  static bool inboundIsHttp(const MeshConfig& cfg, const std::pair<std::string, int>& dst) {
    for (const auto& [key, svc] : cfg.services) {
      for (const auto& port : svc.ports) {
        if (port.appProtocol != "http") continue;
        for (const auto& e : port.endpoints) {
          if (e.ip == dst.first && e.port == dst.second) return true;
        }
      }
    }
    return false;
  }

  // HTTP/1.1 toward the application with each request authorized first: a denied one is
  // answered 403 "RBAC: access denied" (the connection stays open), an allowed one goes to the
  // application over one keep-alive connection; an upgrade answered 101 continues as TCP.
  awaitable<void> serveInboundHttp(std::shared_ptr<Channel> down, std::vector<Target> targets,
                                   AuthzRequest base) {
    std::shared_ptr<Channel> up;
    for (;;) {
      Request req;
      ErrorCode ec = co_await readRequest(*down, req);
      if (ec) break;
      const bool keepAlive = req.keep_alive();
      const bool head = req.method() == bhttp::verb::head;
      AuthzRequest r = base;
      r.http = true;
      r.method = std::string(req.method_string());
      r.path = std::string(req.target());
      r.host = std::string(req[bhttp::field::host]);
      r.header = [&req](std::string_view name) -> std::optional<std::string> {
        auto it = req.find(beast::string_view(name.data(), name.size()));
        if (it == req.end()) return std::nullopt;
        return std::string(it->value());
      };
      AuthzDecision decision = authorize(ownPolicies(*current()), r);
      Response res;
      bool switched = false;
      if (!decision.allowed) {
        authorizationDenied.with({"http", decision.policy}).inc();
        res = plainResponse(bhttp::status::forbidden, req.version(), "RBAC: access denied");
      } else {
        const bool upgrade = isUpgrade(req);
        if (!upgrade) req.keep_alive(true);
        if (co_await exchange(up, targets, req, std::nullopt, res) == Exchanged::kAnswered) {
          switched = upgrade && res.result() == bhttp::status::switching_protocols;
          if (!switched && !res.keep_alive()) up.reset();
        } else {
          res = plainResponse(bhttp::status::service_unavailable, req.version(),
                              "upstream connect error or disconnect/reset before headers");
        }
      }
      ec = co_await respond(*down, res, keepAlive, head, switched);
      if (switched && !ec) {
        co_await continueUpgrade(std::move(down), std::move(up));
        co_return;
      }
      if (ec || !keepAlive) break;
    }
    down->shutdownSend();
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
      co_return;
    }
    std::vector<Target> targets;
    if (port != nullptr && contexts()) {
      // A service with meshed endpoints: to them (round robin) so that mTLS applies; the
      // virtual IP (kube-proxy) stays the last resort.
      bool anyMeshed = false;
      for (const auto& e : port->endpoints) anyMeshed = anyMeshed || e.sidecar;
      if (anyMeshed && !port->endpoints.empty()) {
        uint64_t first = roundRobin["tcp/" + svc->key() + ":" + std::to_string(port->port)]++;
        for (size_t i = 0; i < port->endpoints.size(); ++i) {
          const MeshEndpoint& e = port->endpoints[(first + i) % port->endpoints.size()];
          targets.push_back(Target{e.ip, e.port, mtlsPeer(*cfg, e)});
        }
      }
    } else if (const MeshPod* pod = svc == nullptr ? cfg->podAt(dst->first) : nullptr) {
      targets.push_back(Target{
          dst->first, dst->second,
          mtlsPeer(*cfg, pod->ns, pod->labels, pod->sidecar, pod->serviceAccount, dst->second)});
    }
    targets.push_back(Target{dst->first, dst->second, ""});
    co_await passThrough(std::make_shared<Channel>(std::move(socket)), std::move(targets));
  }

  // --- HTTP --------------------------------------------------------------------------------
  //
  // Both directions serve a client's Channel (plain or mutual TLS) with the same steps: one
  // request read, one exchange with an upstream Channel, the response written, and after a 101
  // the bytes both ways.

  awaitable<ErrorCode> readRequest(Channel& down, Request& req) {
    ErrorCode ec;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    co_await onStream(down, [&](auto& s) {
      return bhttp::async_read(s, down.buffer, parser, asio::redirect_error(use_awaitable, ec));
    });
    if (!ec) req = parser.release();
    co_return ec;
  }

  enum class Exchanged {
    kAnswered,
    kNoConnection,  // no target accepted a connection
    kFailed,        // the connection failed before a whole response
    kTimedOut,      // the response did not come within the timeout
  };

  // Writes `req` on `up` and reads its response into `res`; a null `up` is first connected to the
  // first of `targets` that accepts. A kept connection the peer closed while idle fails at once:
  // one fresh try then. `timeout` bounds the exchange (none: no bound, the route has no timeout).
  // When it fails, `up` is null again.
  awaitable<Exchanged> exchange(std::shared_ptr<Channel>& up, std::span<const Target> targets,
                                Request& req,
                                std::optional<std::chrono::steady_clock::duration> timeout,
                                Response& res) {
    Exchanged failure = Exchanged::kNoConnection;
    for (int fresh = 0; fresh < 2; ++fresh) {
      const bool reused = up != nullptr;
      if (!up) {
        up = co_await dialFirst(targets);
        if (!up) co_return failure;
      }
      if (timeout) {
        up->setDeadline(*timeout);
      } else if (up->deadline) {
        up->clearDeadline();  // a kept connection the last request bounded
      }
      Channel& ch = *up;
      ErrorCode ec = co_await writeMessage(ch, req);
      bhttp::response_parser<bhttp::string_body> parser;
      parser.body_limit(kMaxBodyBytes);
      if (req.method() == bhttp::verb::head) parser.skip(true);
      if (!ec) {
        co_await onStream(ch, [&](auto& s) {
          return bhttp::async_read(s, ch.buffer, parser, asio::redirect_error(use_awaitable, ec));
        });
      }
      if (!ec) {
        res = parser.release();
        co_return Exchanged::kAnswered;
      }
      up.reset();
      failure = ec == beast::error::timeout ? Exchanged::kTimedOut : Exchanged::kFailed;
      if (!reused || failure == Exchanged::kTimedOut) break;
    }
    co_return failure;
  }

  // Writes `res` to the client: with its framing completed and the client's own keep-alive,
  // unless it switched protocols.
  awaitable<ErrorCode> respond(Channel& down, Response& res, bool keepAlive, bool head,
                               bool switched) {
    if (!switched) {
      if (!head && !res.chunked() && !res.has_content_length()) res.prepare_payload();
      res.keep_alive(keepAlive);
    }
    co_return co_await writeMessage(down, res);
  }

  // WebSocket and other upgrades, once `up` answered 101: from here on bytes both ways, starting
  // with what either side sent after its HTTP part.
  awaitable<void> continueUpgrade(std::shared_ptr<Channel> down, std::shared_ptr<Channel> up) {
    ErrorCode ec;
    if (down->buffer.size() > 0) {
      co_await onStream(*up, [&](auto& s) {
        return asio::async_write(s, down->buffer.data(), asio::redirect_error(use_awaitable, ec));
      });
      down->buffer.consume(down->buffer.size());
    }
    if (!ec && up->buffer.size() > 0) {
      co_await onStream(*down, [&](auto& s) {
        return asio::async_write(s, up->buffer.data(), asio::redirect_error(use_awaitable, ec));
      });
      up->buffer.consume(up->buffer.size());
    }
    if (ec) co_return;
    down->clearDeadline();
    up->clearDeadline();
    co_await relay(std::move(down), std::move(up));
  }

  // --- outbound HTTP routing ---------------------------------------------------------------

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

  // Kept connections to endpoints, by "ip:port" (+"+mtls"), for one client connection.
  using Pool = std::map<std::string, std::shared_ptr<Channel>>;

  awaitable<Response> forward(Request& req, const std::string& serviceKey, int servicePort,
                              Pool& pool, std::string* destination, std::string* endpoint,
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
    std::optional<std::chrono::steady_clock::duration> timeout;
    if (d.timeout.count() > 0) timeout = d.timeout;
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
      std::string peerId = mtlsPeer(*cfg, *ep);
      const std::string key = candidates[chosen] + (peerId.empty() ? "" : "+mtls");
      const Target target{ep->ip, ep->port, std::move(peerId)};
      const std::span<const Target> targets(&target, 1);
      std::shared_ptr<Channel>& up = pool[key];
      Response res;
      const Exchanged result = co_await exchange(up, targets, req, timeout, res);
      if (result != Exchanged::kAnswered) {
        pool.erase(key);
        if (result != Exchanged::kNoConnection) timedOut = result == Exchanged::kTimedOut;
        continue;
      }
      outcome.status = res.result_int();
      if (!res.keep_alive()) pool.erase(key);
      if (res.result() == bhttp::status::service_unavailable && attempt + 1 < d.attempts) continue;
      *endpoint = key;
      if (auto v = ep->labels.find("version"); v != ep->labels.end()) *version = v->second;
      co_return res;
    }
    co_return timedOut
        ? plainResponse(bhttp::status::gateway_timeout, req.version(), "upstream request timeout")
        : plainResponse(bhttp::status::service_unavailable, req.version(),
                        "upstream connect error or disconnect/reset before headers");
  }

  // The source of this sidecar's outbound requests, as metric labels: its pod's namespace and
  // workload (the pod's app label as the registry has it, else the pod's name).
  std::string sourceWorkload() const {
    const MeshPod* pod = current()->pod(options.podNamespace + "/" + options.podName);
    if (pod != nullptr) {
      auto app = pod->labels.find("app");
      if (app != pod->labels.end() && !app->second.empty()) return app->second;
    }
    return options.podName.empty() ? "unknown" : options.podName;
  }

  awaitable<void> serveHttp(tcp::socket socket, std::string serviceKey, int servicePort) {
    auto down = std::make_shared<Channel>(std::move(socket));
    Pool pool;
    const std::string sourceNamespace =
        options.podNamespace.empty() ? "unknown" : options.podNamespace;
    const std::string source = sourceWorkload();
    for (;;) {
      Request req;
      ErrorCode ec = co_await readRequest(*down, req);
      if (ec) break;
      auto start = std::chrono::steady_clock::now();
      const bool keepAlive = req.keep_alive();
      const bool head = req.method() == bhttp::verb::head;
      const bool upgrade = isUpgrade(req);
      std::string destination, endpoint, version;
      Response res =
          co_await forward(req, serviceKey, servicePort, pool, &destination, &endpoint, &version);
      const bool switched = upgrade && res.result() == bhttp::status::switching_protocols &&
                            pool.count(endpoint) != 0;
      ec = co_await respond(*down, res, keepAlive, head, switched);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      requests.with({destination, std::to_string(res.result_int()), sourceNamespace, source}).inc();
      byVersion
          .with({destination, version.empty() ? "unknown" : version,
                 std::to_string(res.result_int())})
          .inc();
      latency.with({destination}).observe(seconds);
      if (switched && !ec) {
        std::shared_ptr<Channel> up = std::move(pool[endpoint]);
        pool.erase(endpoint);
        co_await continueUpgrade(std::move(down), std::move(up));
        co_return;
      }
      if (ec || !keepAlive) break;
    }
    down->shutdownSend();
  }

  // --- metrics -----------------------------------------------------------------------------

  json certsJson() const {
    auto t = contexts();
    auto seconds = [](std::chrono::system_clock::time_point tp) {
      return std::chrono::duration_cast<std::chrono::seconds>(tp.time_since_epoch()).count();
    };
    std::lock_guard lock(mu);
    if (!t) return {{"spiffeId", nullptr}, {"rotations", 0}};
    return {{"spiffeId", t->credentials.spiffeId},
            {"notBefore", seconds(t->credentials.notBefore)},
            {"notAfter", seconds(t->credentials.notAfter)},
            {"rotations", rotations}};
  }

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
      } else if (target.rfind("/certs", 0) == 0) {
        res = plainResponse(bhttp::status::ok, req.version(), "");
        res.body() = certsJson().dump();
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

Status SidecarProxy::setCredentials(const WorkloadCredentials& credentials) {
  auto contexts = makeTlsContexts(credentials);
  if (!contexts.ok()) return contexts.status();
  std::lock_guard lock(impl_->mu);
  if (impl_->tls) ++impl_->rotations;
  impl_->tls = std::move(contexts).value();
  return Status::Ok();
}

}  // namespace minik8s::mesh
