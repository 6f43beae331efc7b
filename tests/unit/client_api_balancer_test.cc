// ApiBalancer on loopback: connections go round robin over the backends, a refusing backend is
// skipped, bytes are copied both ways unchanged (with half-closes passed on), and when either
// side closes or the balancer stops, both sides are closed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "client/api_balancer.h"
#include "common/http.h"
#include "common/http_client.h"
#include "raw_exchange.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;
using minik8s::testing::connectTo;

// An HTTP server answering every request with its name.
struct NamedBackend {
  explicit NamedBackend(std::string n)
      : name(std::move(n)), server([this](const http::Request&, http::ResponseWriter& w) {
          w.send(http::Response::text(200, name));
        }) {
    EXPECT_TRUE(server.start("127.0.0.1:0").ok());
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server.port()); }
  std::string name;
  http::Server server;
};

// A loopback listener whose accepted connections the test drives by hand.
struct RawBackend {
  RawBackend()
      : listener(minik8s::testing::listenOnLoopback()), fd(listener.fd), port(listener.port) {}
  ~RawBackend() { ::close(fd); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  int acceptOne() const { return ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC); }
  minik8s::testing::LoopbackListener listener;
  int fd = -1;
  int port = 0;
};

// A port nobody listens on.
std::string refusingAddress() {
  RawBackend gone;
  return gone.address();  // closed when `gone` goes away
}

void sendAll(int fd, const std::string& data) {
  for (size_t sent = 0; sent < data.size();) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    sent += static_cast<size_t>(n);
  }
}

// Everything `fd` receives until the peer's end of stream; "<timeout>" appended when it does not
// come within 3 s.
std::string readToEnd(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 3000) <= 0) return out + "<timeout>";
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::unique_ptr<ApiBalancer> startBalancer(std::vector<std::string> backends) {
  ApiBalancerOptions options;
  options.listen = "127.0.0.1:0";
  options.backends = std::move(backends);
  options.connectTimeout = 500ms;
  auto balancer = std::make_unique<ApiBalancer>(options);
  Status s = balancer->start();
  EXPECT_TRUE(s.ok()) << s.toString();
  return balancer;
}

std::string askName(int port) {
  http::Client c("http://127.0.0.1:" + std::to_string(port));  // one connection each
  auto r = c.get("/");
  return r.ok() ? r->body : r.status().toString();
}

TEST(ApiBalancerTest, ConnectionsGoRoundRobin) {
  NamedBackend a("a"), b("b"), c("c");
  auto balancer = startBalancer({a.address(), "https://" + b.address(), "http://" + c.address()});
  std::string order;
  for (int i = 0; i < 6; ++i) order += askName(balancer->port());
  EXPECT_EQ(order, "abcabc");
}

TEST(ApiBalancerTest, SkipsABackendThatRefuses) {
  NamedBackend b("b");
  auto balancer = startBalancer({refusingAddress(), b.address()});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(askName(balancer->port()), "b");
}

TEST(ApiBalancerTest, ClosesTheClientWhenNoBackendAnswers) {
  auto balancer = startBalancer({refusingAddress(), refusingAddress()});
  int client = connectTo(balancer->port());
  EXPECT_EQ(readToEnd(client), "");
  ::close(client);
}

TEST(ApiBalancerTest, CopiesBytesBothWaysAndPassesHalfClosesOn) {
  RawBackend backend;
  auto balancer = startBalancer({backend.address()});
  int client = connectTo(balancer->port());
  int server = backend.acceptOne();
  ASSERT_GE(server, 0);
  std::string upload(3 * 1024 * 1024 + 7, '\0');
  for (size_t i = 0; i < upload.size(); ++i) upload[i] = static_cast<char>(i * 31 % 251);
  std::thread writer([&] {
    sendAll(client, upload);
    ::shutdown(client, SHUT_WR);  // the client is done sending ...
  });
  EXPECT_EQ(readToEnd(server), upload);  // ... and the backend sees the end of it
  writer.join();
  // The answer still flows after the client's half-close.
  const std::string answer = "answer after half-close\n";
  sendAll(server, answer);
  ::close(server);
  EXPECT_EQ(readToEnd(client), answer);
  ::close(client);
}

TEST(ApiBalancerTest, ABackendThatGoesAwayClosesTheClient) {
  RawBackend backend;
  auto balancer = startBalancer({backend.address()});
  int client = connectTo(balancer->port());
  int server = backend.acceptOne();
  ASSERT_GE(server, 0);
  sendAll(client, "ping");
  char buf[4];
  ASSERT_EQ(::recv(server, buf, sizeof buf, MSG_WAITALL), 4);
  ::close(server);  // the API server died
  EXPECT_EQ(readToEnd(client), "");
  ::close(client);
}

TEST(ApiBalancerTest, AClientThatGoesAwayClosesTheBackend) {
  RawBackend backend;
  auto balancer = startBalancer({backend.address()});
  int client = connectTo(balancer->port());
  int server = backend.acceptOne();
  ASSERT_GE(server, 0);
  sendAll(server, "hello");
  char buf[5];
  ASSERT_EQ(::recv(client, buf, sizeof buf, MSG_WAITALL), 5);
  ::close(client);
  EXPECT_EQ(readToEnd(server), "");
  ::close(server);
}

TEST(ApiBalancerTest, StopClosesOpenConnections) {
  RawBackend backend;
  auto balancer = startBalancer({backend.address()});
  int client = connectTo(balancer->port());
  int server = backend.acceptOne();
  ASSERT_GE(server, 0);
  balancer->stop();
  EXPECT_EQ(readToEnd(client), "");
  EXPECT_EQ(readToEnd(server), "");
  ::close(client);
  ::close(server);
  int late = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // no longer listening
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(balancer->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_NE(::connect(late, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(late);
}

TEST(ApiBalancerTest, RefusesUnusableOptions) {
  ApiBalancer noBackend({"127.0.0.1:0", {}, 500ms});
  EXPECT_EQ(noBackend.start().code(), 400);
  ApiBalancer badListen({"localhost:0", {"127.0.0.1:1"}, 500ms});
  EXPECT_EQ(badListen.start().code(), 400);
  ApiBalancer badBackend({"127.0.0.1:0", {"no-port"}, 500ms});
  EXPECT_EQ(badBackend.start().code(), 400);
}

}  // namespace
}  // namespace minik8s::client
