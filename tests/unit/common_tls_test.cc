// TLS on real loopback sockets: the HTTP server with optional and required client certificates,
// the HTTP client's verification of the server (CA, IP and DNS SANs, serverName), ALPN falling
// back to http/1.1, the limits (a client that never completes the handshake is dropped, the
// connection cap counts TLS connections), streaming responses and WebSocket over TLS.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "common/http.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "common/stream.h"
#include "common/tls.h"
#include "common/websocket.h"

namespace minik8s::http {
namespace {

using namespace std::chrono_literals;

struct TestPki {
  pki::KeyAndCert ca, server, client, otherCa, otherClient;
};

const TestPki& testPki() {
  static const TestPki p = [] {
    TestPki t;
    t.ca = pki::createCA("test-ca").value();
    t.otherCa = pki::createCA("other-ca").value();
    pki::CertSpec server;
    server.commonName = "kube-apiserver";
    server.dnsNames = {"kubernetes.default.svc"};
    server.ipAddresses = {"127.0.0.1"};
    server.serverAuth = true;
    t.server = pki::issue(t.ca, server).value();
    pki::CertSpec client;
    client.commonName = "alice";
    client.organizations = {"devs", "system:masters"};
    client.clientAuth = true;
    t.client = pki::issue(t.ca, client).value();
    t.otherClient = pki::issue(t.otherCa, client).value();
    return t;
  }();
  return p;
}

// Answers "<tls> <CN> <O,O>" so tests see what the server learnt about the connection.
Handler whoAmI() {
  return [](const Request& req, ResponseWriter& w) {
    std::string who = req.tls ? "tls" : "plain";
    if (req.clientCertificate) {
      who += " " + req.clientCertificate->commonName;
      for (const auto& o : req.clientCertificate->organizations) who += " " + o;
      if (!req.clientCertificate->verified) who += " UNVERIFIED";
    }
    w.send(Response::text(200, who));
  };
}

TlsServerConfig serverTls(bool withClientCa, bool require = false) {
  TlsServerConfig c;
  c.certPem = testPki().server.certPem;
  c.keyPem = testPki().server.keyPem;
  if (withClientCa) c.clientCaPem = testPki().ca.certPem;
  c.requireClientCertificate = require;
  return c;
}

TlsClientConfig trusting(bool withClientCert = false) {
  TlsClientConfig c;
  c.caPem = testPki().ca.certPem;
  if (withClientCert) {
    c.certPem = testPki().client.certPem;
    c.keyPem = testPki().client.keyPem;
  }
  return c;
}

std::string httpsUrl(const Server& s, const std::string& host = "127.0.0.1") {
  return "https://" + host + ":" + std::to_string(s.port());
}

TEST(TlsTest, ServesHttpsAndReportsTheVerifiedClientCertificate) {
  Server server(whoAmI());
  ASSERT_TRUE(server.enableTls(serverTls(true)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());

  Client anonymous(httpsUrl(server), trusting());
  auto r = anonymous.get("/");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "tls");
  // Keep-alive over TLS: a second request on the same client.
  r = anonymous.get("/again");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "tls");

  Client alice(httpsUrl(server), trusting(true));
  r = alice.get("/");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "tls alice devs system:masters");

  // A certificate from another CA (optional client certificates): the handshake completes but
  // the request says the certificate is not verified, so the API server answers 401.
  TlsClientConfig stranger = trusting();
  stranger.certPem = testPki().otherClient.certPem;
  stranger.keyPem = testPki().otherClient.keyPem;
  Client mallory(httpsUrl(server), stranger);
  r = mallory.get("/");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_NE(r->body.find("UNVERIFIED"), std::string::npos) << r->body;

  // Plain HTTP on a TLS port gets nothing useful.
  Client plain("http://127.0.0.1:" + std::to_string(server.port()));
  auto p = plain.get("/");
  EXPECT_TRUE(!p.ok() || p->status >= 400);
}

TEST(TlsTest, RequiredClientCertificate) {
  Server server(whoAmI());
  ASSERT_TRUE(server.enableTls(serverTls(true, true)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client anonymous(httpsUrl(server), trusting());
  EXPECT_FALSE(anonymous.get("/").ok());
  Client alice(httpsUrl(server), trusting(true));
  auto r = alice.get("/");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "tls alice devs system:masters");
  // Requiring certificates without a CA to check them is a configuration error.
  Server bad(whoAmI());
  EXPECT_FALSE(bad.enableTls(serverTls(false, true)).ok());
  TlsServerConfig garbage = serverTls(false);
  garbage.keyPem = testPki().client.keyPem;  // not the certificate's key
  EXPECT_FALSE(bad.enableTls(garbage).ok());
}

TEST(TlsTest, ClientVerifiesTheServerCertificateAndHost) {
  Server server(whoAmI());
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());

  TlsClientConfig wrongCa;
  wrongCa.caPem = testPki().otherCa.certPem;
  Client untrusted(httpsUrl(server), wrongCa);
  auto r = untrusted.get("/");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("certificate verify failed"), std::string::npos)
      << r.status().message();

  TlsClientConfig insecure;
  insecure.insecureSkipVerify = true;
  Client skipping(httpsUrl(server), insecure);
  EXPECT_TRUE(skipping.get("/").ok());

  // "localhost" resolves to the server but is not among its SANs.
  Client byName(httpsUrl(server, "localhost"), trusting());
  EXPECT_FALSE(byName.get("/").ok());
  // serverName names the identity to check, whatever address is dialled.
  TlsClientConfig named = trusting();
  named.serverName = "kubernetes.default.svc";
  Client viaServerName(httpsUrl(server, "localhost"), named);
  auto ok = viaServerName.get("/");
  EXPECT_TRUE(ok.ok()) << ok.status().toString();
  named.serverName = "kubernetes.default";
  Client wrongName(httpsUrl(server), named);
  EXPECT_FALSE(wrongName.get("/").ok());
}

TEST(TlsTest, AlpnSelectsHttp11ForAnH2Client) {
  Server server(whoAmI());
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  const unsigned char offer[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx, offer, sizeof offer);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  ASSERT_EQ(SSL_connect(ssl), 1);
  const unsigned char* chosen = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl, &chosen, &len);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(chosen), len), "http/1.1");
  EXPECT_GE(SSL_version(ssl), TLS1_2_VERSION);
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(SSL_write(ssl, request.data(), static_cast<int>(request.size())),
            static_cast<int>(request.size()));
  std::string answer;
  char buf[4096];
  int n;
  while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("\r\n\r\ntls"), std::string::npos) << answer;
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(fd);
}

int rawConnect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the server closes `fd` within `timeout`.
bool closedWithin(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
  }
  return false;
}

TEST(TlsTest, ClientThatNeverCompletesTheHandshakeIsDroppedAfterTheHeaderTimeout) {
  ServerLimits limits;
  limits.headerTimeout = 300ms;
  Server server(whoAmI(), limits);
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  int silent = rawConnect(server.port());
  ASSERT_GE(silent, 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(closedWithin(silent, 3s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  ::close(silent);
  // Others are served meanwhile and afterwards.
  Client c(httpsUrl(server), trusting());
  EXPECT_TRUE(c.get("/").ok());
}

TEST(TlsTest, ConnectionCapCountsTlsConnections) {
  ServerLimits limits;
  limits.maxConnections = 1;
  Server server(whoAmI(), limits);
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client first(httpsUrl(server), trusting());
  ASSERT_TRUE(first.get("/").ok());  // holds the only slot (keep-alive)
  Client second(httpsUrl(server), trusting());
  EXPECT_FALSE(second.get("/").ok());
  first.close();
  std::this_thread::sleep_for(200ms);
  Client third(httpsUrl(server), trusting());
  auto r = third.get("/");
  EXPECT_TRUE(r.ok()) << r.status().toString();
}

TEST(TlsTest, ChunkedStreamOverTls) {
  Server server([](const Request&, ResponseWriter& w) {
    w.beginStream(200, {{"Content-Type", "text/plain"}});
    for (int i = 0; i < 3; ++i) w.write("line " + std::to_string(i) + "\n");
    w.end();
  });
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client c(httpsUrl(server), trusting());
  std::string got;
  auto r = c.stream("GET", "/watch", [&](std::string_view d) {
    got += d;
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(got, "line 0\nline 1\nline 2\n");
}

TEST(TlsTest, WebSocketOverTakenTlsStream) {
  Server server([](const Request& req, ResponseWriter& w) {
    auto stream = w.takeStream();
    ASSERT_TRUE(stream);
    EXPECT_TRUE(stream->isTls());
    ASSERT_TRUE(stream->peerCertificate());
    EXPECT_EQ(stream->peerCertificate()->commonName, "alice");
    auto conn = ws::acceptUpgrade(std::move(stream), req, "echo");
    ASSERT_TRUE(conn.ok());
    for (;;) {
      auto m = (*conn)->read();
      if (!m.ok() || m->opcode == ws::Opcode::kClose) break;
      (*conn)->writeBinary("echo:" + m->payload);
    }
    (*conn)->writeClose();
  });
  ASSERT_TRUE(server.enableTls(serverTls(true)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  auto tls = TlsContext::forClient(trusting(true));
  ASSERT_TRUE(tls.ok());
  auto c = ws::dial("127.0.0.1", server.port(), "/ws", {"echo"}, tls->get());
  ASSERT_TRUE(c.ok()) << c.status().toString();
  EXPECT_EQ((*c)->protocol(), "echo");
  // A reader thread and a writer at once, as exec sessions do.
  std::string got;
  std::thread reader([&] {
    for (int i = 0; i < 50; ++i) {
      auto m = (*c)->read();
      if (!m.ok()) return;
      got += m->payload.substr(5);
    }
  });
  std::string sent;
  for (int i = 0; i < 50; ++i) {
    std::string payload = std::string(1000 * (i % 7), 'x') + std::to_string(i);
    sent += payload;
    ASSERT_TRUE((*c)->writeBinary(payload).ok());
  }
  reader.join();
  EXPECT_EQ(got, sent);
  (*c)->writeClose();
}

TEST(TlsTest, StreamingHandlerSeesTheTlsClientLeave) {
  std::atomic<bool> handlerEnded{false};
  Server server([&](const Request&, ResponseWriter& w) {
    w.beginStream(200, {{"Content-Type", "text/plain"}});
    w.write("first\n");
    const auto giveUp = std::chrono::steady_clock::now() + 5s;
    while (!w.clientGone() && std::chrono::steady_clock::now() < giveUp) {
      std::this_thread::sleep_for(10ms);
    }
    handlerEnded = std::chrono::steady_clock::now() < giveUp;
  });
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  {
    Client c(httpsUrl(server), trusting());
    auto r = c.stream("GET", "/follow", [](std::string_view) { return false; });  // leave
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  for (int i = 0; i < 300 && !handlerEnded; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(handlerEnded);
}

TEST(TlsTest, StreamShutdownWakesABlockedTlsRead) {
  Server server([](const Request&, ResponseWriter& w) {
    auto stream = w.takeStream();
    char c;
    (void)stream->read(&c, 1);  // the client never sends: ends when the client goes
  });
  ASSERT_TRUE(server.enableTls(serverTls(false)).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  auto tls = TlsContext::forClient(trusting());
  ASSERT_TRUE(tls.ok());
  auto s = dialStream("127.0.0.1", server.port(), tls->get());
  ASSERT_TRUE(s.ok()) << s.status().toString();
  ASSERT_TRUE((*s)->write("GET / HTTP/1.1\r\nHost: x\r\n\r\n").ok());
  std::thread waker([&] {
    std::this_thread::sleep_for(100ms);
    (*s)->shutdown();
  });
  char buf[16];
  auto r = (*s)->read(buf, sizeof buf);
  EXPECT_TRUE(!r.ok() || *r == 0);
  waker.join();
}

// One keep-alive request on `stream`: the response body ("" when it fails).
std::string exchange(Stream& stream) {
  if (!stream.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n").ok()) return "";
  std::string got;
  char buf[4096];
  for (;;) {
    size_t end = got.find("\r\n\r\n");
    if (end != std::string::npos) {
      size_t at = got.find("Content-Length: ");
      if (at != std::string::npos) {
        size_t length = std::stoul(got.substr(at + 16));
        if (got.size() >= end + 4 + length) return got.substr(end + 4, length);
      }
    }
    auto n = stream.read(buf, sizeof buf);
    if (!n.ok() || *n == 0) return "";
    got.append(buf, *n);
  }
}

TEST(TlsTest, RotatedCertificateFilesReachNewHandshakesWhileEstablishedStreamsContinue) {
  char tmpl[] = "/tmp/tls-rotation-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  // Writes a new pair for `file` (key first, as the agent does) with the common name `cn`.
  auto rotate = [&](const std::string& file, const std::string& cn, bool server) {
    pki::CertSpec spec;
    spec.commonName = cn;
    spec.ipAddresses = {"127.0.0.1"};
    spec.serverAuth = server;
    spec.clientAuth = !server;
    auto kc = pki::issue(testPki().ca, spec).value();
    ASSERT_TRUE(pki::writePemFile(dir + "/" + file + ".key", kc.keyPem, true).ok());
    ASSERT_TRUE(pki::writePemFile(dir + "/" + file + ".crt", kc.certPem, false).ok());
  };
  rotate("server", "server-1", true);
  rotate("client", "client-1", false);
  Server server([](const Request& req, ResponseWriter& w) {
    w.send(Response::text(200, req.clientCertificate ? req.clientCertificate->commonName : "none"));
  });
  TlsServerConfig config;
  config.certPem = "file:" + dir + "/server.crt";
  config.keyPem = "file:" + dir + "/server.key";
  config.clientCaPem = testPki().ca.certPem;
  ASSERT_TRUE(server.enableTls(config).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  TlsClientConfig clientConfig = trusting();
  clientConfig.certPem = "file:" + dir + "/client.crt";
  clientConfig.keyPem = "file:" + dir + "/client.key";
  auto tls = TlsContext::forClient(clientConfig);
  ASSERT_TRUE(tls.ok()) << tls.status().toString();

  auto first = dialStream("127.0.0.1", server.port(), tls->get());
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_EQ((*first)->peerCertificate()->commonName, "server-1");
  EXPECT_EQ(exchange(**first), "client-1");

  // Rotation on disk: new handshakes on both sides present the new pairs.
  rotate("server", "server-2", true);
  rotate("client", "client-2", false);
  auto second = dialStream("127.0.0.1", server.port(), tls->get());
  ASSERT_TRUE(second.ok()) << second.status().toString();
  EXPECT_EQ((*second)->peerCertificate()->commonName, "server-2");
  EXPECT_EQ(exchange(**second), "client-2");
  // The connection made before the rotation keeps working with its certificates.
  EXPECT_EQ(exchange(**first), "client-1");
  // The HTTP client too: a new connection of a new Client presents the new certificate.
  Client fresh(httpsUrl(server), clientConfig);
  auto r = fresh.get("/");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->body, "client-2");

  // A key that does not match the certificate (half of a rotation): the last good pair stays.
  pki::CertSpec other;
  other.commonName = "other";
  ASSERT_TRUE(
      pki::writePemFile(dir + "/server.key", pki::issue(testPki().ca, other)->keyPem, true).ok());
  auto third = dialStream("127.0.0.1", server.port(), tls->get());
  ASSERT_TRUE(third.ok()) << third.status().toString();
  EXPECT_EQ((*third)->peerCertificate()->commonName, "server-2");
  EXPECT_EQ(exchange(**third), "client-2");

  // A first load that fails is an error, as is a certificate by file without its key by file.
  TlsServerConfig missing;
  missing.certPem = "file:" + dir + "/nope.crt";
  missing.keyPem = "file:" + dir + "/nope.key";
  EXPECT_FALSE(TlsContext::forServer(missing).ok());
  missing.keyPem = testPki().server.keyPem;
  EXPECT_FALSE(TlsContext::forServer(missing).ok());
  server.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minik8s::http
