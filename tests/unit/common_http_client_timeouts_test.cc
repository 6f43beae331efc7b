// http::Client never waits forever and never sends a request twice when that could apply it
// twice: connect, request and stream-header timeouts on real loopback sockets (plain and TLS), a
// slow but alive stream outliving the request timeout, stale keep-alive connections replaced
// before sending, and replays limited to requests the server cannot have acted on.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/http.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "raw_exchange.h"

namespace minik8s::http {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using minik8s::testing::connectTo;

// A loopback TCP socket listening with `backlog` that nobody accepts on.
struct SilentListener {
  explicit SilentListener(int backlog = 16) {
    auto l = minik8s::testing::listenOnLoopback(backlog);
    fd = l.fd;
    port = l.port;
  }
  ~SilentListener() { ::close(fd); }
  std::string url(const char* scheme = "http") const {
    return std::string(scheme) + "://127.0.0.1:" + std::to_string(port);
  }
  int fd = -1;
  int port = 0;
};

ClientTimeouts quick() {
  ClientTimeouts t;
  t.connect = 300ms;
  t.request = 300ms;
  t.deadPeer = 2s;
  return t;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(HttpClientTimeoutsTest, ServerThatAcceptsButNeverAnswersFailsWithinTheRequestTimeout) {
  SilentListener silent;  // the kernel completes the connection; nobody reads or answers
  Client client(silent.url(), {}, quick());
  for (const char* method : {"GET", "POST"}) {
    const auto start = Clock::now();
    auto r = client.request(method, "/api", method == std::string("POST") ? "{}" : "");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), 504) << r.status().toString();
    EXPECT_NE(r.status().message().find("waiting for the answer to"), std::string::npos);
    EXPECT_FALSE(neverReachedServer(r.status()));  // it was sent: the server may act on it
    EXPECT_GE(secondsSince(start), 0.25);
    EXPECT_LT(secondsSince(start), 2.0);
  }
}

TEST(HttpClientTimeoutsTest, ConnectThatGetsNoAnswerFailsWithinTheConnectTimeout) {
  SilentListener full(0);  // backlog 0: one queued connection fills it, later SYNs are dropped
  int filler = connectTo(full.port);
  Client client(full.url(), {}, quick());
  const auto start = Clock::now();
  auto r = client.get("/api");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 503);
  EXPECT_TRUE(neverReachedServer(r.status())) << r.status().toString();
  EXPECT_GE(secondsSince(start), 0.25);
  EXPECT_LT(secondsSince(start), 2.0);
  ::close(filler);
}

TEST(HttpClientTimeoutsTest, TlsHandshakeWithASilentServerFailsWithinTheConnectTimeout) {
  SilentListener silent;
  TlsClientConfig tls;
  tls.insecureSkipVerify = true;
  Client client(silent.url("https"), tls, quick());
  const auto start = Clock::now();
  auto r = client.get("/api");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(neverReachedServer(r.status())) << r.status().toString();
  EXPECT_LT(secondsSince(start), 2.0);
}

TEST(HttpClientTimeoutsTest, StreamResponseHeadersAreBoundedByTheRequestTimeout) {
  SilentListener silent;
  Client client(silent.url(), {}, quick());
  const auto start = Clock::now();
  auto r = client.stream("GET", "/api/v1/pods?watch=true", [](std::string_view) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 504);
  EXPECT_LT(secondsSince(start), 2.0);
}

TEST(HttpClientTimeoutsTest, SlowButAliveStreamOutlivesTheRequestTimeout) {
  // Four chunks 400 ms apart: each gap is longer than the 300 ms request timeout.
  Server server([](const Request&, ResponseWriter& w) {
    w.beginStream(200, {{"Content-Type", "text/plain"}});
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(400ms);
      if (!w.write("tick" + std::to_string(i) + "\n")) return;
    }
    w.end();
  });
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client client("http://127.0.0.1:" + std::to_string(server.port()), {}, quick());
  std::string received;
  auto r = client.stream("GET", "/watch", [&](std::string_view d) {
    received.append(d);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(received, "tick0\ntick1\ntick2\ntick3\n");
  server.stop();
}

TEST(HttpClientTimeoutsTest, CloseFromAnotherThreadWakesARequestWithoutATimeout) {
  SilentListener silent;
  ClientTimeouts none;
  none.request = 0ms;  // no limit: only close() ends the wait
  Client client(silent.url(), {}, none);
  std::thread closer([&] {
    std::this_thread::sleep_for(200ms);
    client.close();
  });
  const auto start = Clock::now();
  auto r = client.get("/api");
  closer.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 503);
  EXPECT_LT(secondsSince(start), 2.0);
}

// The kernel's view of our connection to `port` (/proc/net/tcp): the "tr" field, 2 when the
// keepalive timer is armed; -1 when there is no such established connection.
int timerOfConnectionTo(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, ":%04X", port);
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer;
    fields >> slot >> local >> remote >> state >> queues >> timer;
    if (state == "01" && remote.size() > 5 && remote.substr(remote.size() - 5) == wanted) {
      return std::stoi(timer.substr(0, 2), nullptr, 16);
    }
  }
  return -1;
}

TEST(HttpClientTimeoutsTest, QuietConnectionsCarryKeepaliveProbesUnlessDisabled) {
  for (bool enabled : {true, false}) {
    SilentListener silent;  // the request is taken by the kernel; the connection then idles
    ClientTimeouts t;
    t.request = 0ms;
    t.deadPeer = enabled ? 4s : 0s;
    Client client(silent.url(), {}, t);
    std::thread waiting([&] { (void)client.get("/watch"); });
    int timer = -1;
    for (int i = 0; i < 25 && timer <= 0; ++i) {
      std::this_thread::sleep_for(20ms);
      timer = timerOfConnectionTo(silent.port);
    }
    EXPECT_EQ(timer, enabled ? 2 : 0) << (enabled ? "keepalive armed" : "kernel default: none");
    client.close();
    waiting.join();
  }
}

TEST(HttpClientTimeoutsTest, AStreamCutBeforeItsEndIsUnavailable) {
  SilentListener listener;
  std::thread server([&] {
    int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
    char buf[4096];
    (void)::recv(fd, buf, sizeof buf, 0);
    const std::string head =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nevent\n\r\n";
    ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    ::close(fd);  // dies before the last chunk
  });
  Client client(listener.url(), {}, quick());
  std::string received;
  auto r = client.stream("GET", "/watch", [&](std::string_view d) {
    received.append(d);
    return true;
  });
  server.join();
  EXPECT_EQ(received, "event\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 503);
  EXPECT_NE(r.status().message().find("broke"), std::string::npos) << r.status().toString();
}

TEST(HttpClientTimeoutsTest, AStreamAnsweredWithAContentLengthBodyGivesItsStatusAndBody) {
  // A watch refused with a Status (403, 410 ...) is a plain answer with a Content-Length.
  SilentListener listener;
  const std::string body = R"({"kind":"Status","code":403,"reason":"Forbidden"})";
  std::thread server([&] {
    int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
    char buf[4096];
    (void)::recv(fd, buf, sizeof buf, 0);
    const std::string answer =
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    char rest[16];
    (void)::recv(fd, rest, sizeof rest, 0);  // until the client closes
    ::close(fd);
  });
  Client client(listener.url(), {}, quick());
  std::string received;
  auto r = client.stream("GET", "/watch", [&](std::string_view d) {
    received.append(d);
    return true;
  });
  server.join();
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(received, body);
}

struct ServerPki {
  pki::KeyAndCert ca, server;
};

const ServerPki& serverPki() {
  static const ServerPki p = [] {
    ServerPki t;
    t.ca = pki::createCA("test-ca").value();
    pki::CertSpec server;
    server.commonName = "server";
    server.ipAddresses = {"127.0.0.1"};
    server.serverAuth = true;
    t.server = pki::issue(t.ca, server).value();
    return t;
  }();
  return p;
}

TEST(HttpClientTimeoutsTest, TlsRequestsUnderTheTimeoutCarryLargeBodiesAndSlowOnesFail) {
  // "/slow" answers after 1 s; every other path echoes the body size and sends 1 MiB back.
  Server server([](const Request& req, ResponseWriter& w) {
    if (req.path == "/slow") std::this_thread::sleep_for(1000ms);
    w.send(Response::text(200,
                          std::to_string(req.body.size()) + "\n" + std::string(1024 * 1024, 'x')));
  });
  TlsServerConfig serving;
  serving.certPem = serverPki().server.certPem;
  serving.keyPem = serverPki().server.keyPem;
  ASSERT_TRUE(server.enableTls(serving).ok());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  TlsClientConfig tls;
  tls.caPem = serverPki().ca.certPem;
  Client client("https://127.0.0.1:" + std::to_string(server.port()), tls, quick());
  for (int i = 0; i < 3; ++i) {  // keep-alive reuse across large TLS answers
    auto r = client.request("POST", "/echo", std::string(600 * 1024, 'y'));
    ASSERT_TRUE(r.ok()) << r.status().toString();
    EXPECT_EQ(r->body.size(), std::string("614400\n").size() + 1024 * 1024);
    EXPECT_EQ(r->body.substr(0, 7), "614400\n");
  }
  const auto start = Clock::now();
  auto slow = client.get("/slow");
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), 504);
  EXPECT_LT(secondsSince(start), 0.9);
  auto after = client.get("/echo");  // a fresh connection works again
  ASSERT_TRUE(after.ok()) << after.status().toString();
  server.stop();
}

// A raw HTTP server whose connections each answer `answered` requests with keep-alive and then
// either close at once (closeAfterAnswers) or read one more request and close without answering.
class ScriptedServer {
 public:
  ScriptedServer(int answered, bool closeAfterAnswers)
      : answered_(answered), closeAfterAnswers_(closeAfterAnswers) {
    thread_ = std::thread([this] { run(); });
  }
  ~ScriptedServer() {
    stopping_ = true;
    ::shutdown(listener_.fd, SHUT_RDWR);
    thread_.join();
  }
  std::string url() const { return listener_.url(); }
  std::vector<std::string> methods() {
    std::lock_guard lock(mu_);
    return methods_;
  }
  int connections() const { return connections_; }

 private:
  // The next request's method, or "" when the peer closed.
  static std::string readRequest(int fd) {
    std::string data;
    char buf[4096];
    size_t headerEnd;
    while ((headerEnd = data.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return "";
      data.append(buf, static_cast<size_t>(n));
    }
    size_t length = 0;
    if (size_t cl = data.find("Content-Length: "); cl != std::string::npos && cl < headerEnd) {
      length = std::stoul(data.substr(cl + 16));
    }
    while (data.size() < headerEnd + 4 + length) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return "";
      data.append(buf, static_cast<size_t>(n));
    }
    return data.substr(0, data.find(' '));
  }

  void run() {
    while (!stopping_) {
      int fd = ::accept4(listener_.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      ++connections_;
      for (int i = 0;; ++i) {
        std::string method = readRequest(fd);
        if (method.empty()) break;
        {
          std::lock_guard lock(mu_);
          methods_.push_back(method);
        }
        if (i >= answered_) break;  // read, never answered
        const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
        if (closeAfterAnswers_ && i + 1 == answered_) break;
      }
      ::close(fd);
    }
  }

  SilentListener listener_;
  const int answered_;
  const bool closeAfterAnswers_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::string> methods_;
  std::thread thread_;
};

TEST(HttpClientReplayTest, AKeepAliveConnectionTheServerClosedIsReplacedBeforeSending) {
  ScriptedServer server(1, /*closeAfterAnswers=*/true);
  Client client(server.url(), {}, quick());
  ASSERT_TRUE(client.get("/a").ok());
  std::this_thread::sleep_for(100ms);  // the server's FIN arrives
  auto post = client.request("POST", "/b", "{}");
  ASSERT_TRUE(post.ok()) << post.status().toString();
  EXPECT_EQ(post->body, "ok");
  EXPECT_EQ(server.methods(), (std::vector<std::string>{"GET", "POST"}));
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientReplayTest, AGetIsRepeatedWhenAReusedConnectionBreaksBeforeTheAnswer) {
  ScriptedServer server(1, /*closeAfterAnswers=*/false);
  Client client(server.url(), {}, quick());
  ASSERT_TRUE(client.get("/a").ok());
  auto again = client.get("/b");  // read by the first connection, answered on a second one
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(server.methods(), (std::vector<std::string>{"GET", "GET", "GET"}));
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientReplayTest, APostIsNotRepeatedWhenTheConnectionBreaksBeforeTheAnswer) {
  ScriptedServer server(1, /*closeAfterAnswers=*/false);
  Client client(server.url(), {}, quick());
  ASSERT_TRUE(client.get("/a").ok());
  auto post = client.request("POST", "/b", "{}");
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.status().code(), 503);
  EXPECT_FALSE(neverReachedServer(post.status()));
  EXPECT_EQ(server.methods(), (std::vector<std::string>{"GET", "POST"}));
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClientReplayTest, NeverReachedServerNamesOnlyFailuresBeforeSending) {
  EXPECT_TRUE(neverReachedServer(Status::Unavailable("cannot connect to 10.0.0.1:6443: refused")));
  EXPECT_TRUE(neverReachedServer(Status::Unavailable("cannot resolve nowhere: unknown")));
  EXPECT_TRUE(neverReachedServer(Status::Unavailable("TLS handshake failed: timed out")));
  EXPECT_TRUE(neverReachedServer(Status::Timeout("cannot send POST /x: no progress")));
  EXPECT_FALSE(neverReachedServer(Status::Unavailable("reading the response of POST /x: eof")));
  EXPECT_FALSE(neverReachedServer(Status::Timeout("waiting for the answer to POST /x")));
  EXPECT_FALSE(neverReachedServer(Status::Ok()));
}

}  // namespace
}  // namespace minik8s::http
