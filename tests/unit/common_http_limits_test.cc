// Hostile input against the HTTP server, on real loopback sockets: oversized bodies and headers
// get 413/431 with a Status, JSON nested too deep gets 400 from the API server, slow and silent
// clients are dropped after their deadline while others are served, the number of connections is
// bounded, and long-lived streams keep working past every read timeout.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/http.h"
#include "common/http_client.h"
#include "common/json_depth.h"
#include "in_process_api_server.h"

namespace minik8s::http {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A plain loopback TCP connection for sending exactly the bytes a hostile client would send.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Everything the server sends until it closes the connection or `timeout` passes.
  std::string readUntilClosed(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left <= 0ms) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    if (closed) *closed = false;
    return out;
  }
  // True when the server closed the connection within `timeout` (reading and dropping data).
  bool closedWithin(std::chrono::milliseconds timeout) {
    bool closed = false;
    readUntilClosed(timeout, &closed);
    return closed;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

Handler echoHandler() {
  return [](const Request& req, ResponseWriter& w) {
    w.send(Response::text(200, "got " + std::to_string(req.body.size())));
  };
}

std::string url(const Server& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

TEST(HttpLimitsTest, DefaultsFollowKubeApiserver) {
  ServerLimits limits;
  EXPECT_EQ(limits.maxBodyBytes, 3u * 1024 * 1024);
  EXPECT_EQ(limits.maxHeaderBytes, 1024u * 1024);
  EXPECT_EQ(limits.headerTimeout, 32s);
  EXPECT_EQ(limits.idleTimeout, 90s);
}

TEST(HttpLimitsTest, BodyOverTheDefaultLimitGets413WithAStatus) {
  Server server(echoHandler());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client client(url(server));
  auto ok = client.request("POST", "/x", std::string(3 * 1024 * 1024, 'a'));
  ASSERT_TRUE(ok.ok()) << ok.status().toString();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "got 3145728");

  Client big(url(server));
  auto r = big.request("POST", "/x", std::string(4 * 1024 * 1024, 'a'));
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 413);
  json status = json::parse(r->body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["code"], 413);
  EXPECT_EQ(status["reason"], "RequestEntityTooLarge");
  EXPECT_EQ(status["message"], "Request entity too large: limit is 3145728");
}

TEST(HttpLimitsTest, BodyLimitIsExactAndAppliesToChunkedBodies) {
  ServerLimits limits;
  limits.maxBodyBytes = 1000;
  Server server(echoHandler(), limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client client(url(server));
  auto atLimit = client.request("POST", "/x", std::string(1000, 'b'));
  ASSERT_TRUE(atLimit.ok());
  EXPECT_EQ(atLimit->status, 200);
  auto over = client.request("POST", "/x", std::string(1001, 'b'));
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over->status, 413);

  // No Content-Length: the limit is found while reading the chunks.
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.connected());
  std::string chunk(600, 'c');
  ASSERT_TRUE(raw.send("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n" +
                       chunk + "\r\n258\r\n" + chunk + "\r\n0\r\n\r\n"));
  std::string answer = raw.readUntilClosed(5s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
}

TEST(HttpLimitsTest, HeaderOverTheLimitGets431) {
  ServerLimits limits;
  limits.maxHeaderBytes = 4096;
  Server server(echoHandler(), limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client client(url(server));
  auto small = client.request("GET", "/x", "", {{"X-Pad", std::string(3000, 'p')}});
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->status, 200);
  auto big = client.request("GET", "/x", "", {{"X-Pad", std::string(5000, 'p')}});
  ASSERT_TRUE(big.ok()) << big.status().toString();
  EXPECT_EQ(big->status, 431);
  EXPECT_EQ(json::parse(big->body)["reason"], "RequestHeaderFieldsTooLarge");
}

TEST(HttpLimitsTest, MalformedRequestGets400) {
  Server server(echoHandler());
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.send("GET /x HTTP/1.1\r\nHost: a\r\nContent-Length: x7\r\n\r\n"));
  std::string answer = raw.readUntilClosed(5s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
}

TEST(HttpLimitsTest, SlowHeaderClientIsDroppedWhileOthersAreServed) {
  ServerLimits limits;
  limits.headerTimeout = 400ms;
  Server server(echoHandler(), limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());

  RawConnection silent(server.port());  // never sends a byte
  RawConnection slow(server.port());    // sends its header one byte every 50 ms
  ASSERT_TRUE(silent.connected() && slow.connected());
  const auto start = Clock::now();
  std::atomic<bool> slowWriteFailed{false};
  std::thread trickle([&] {
    const std::string header = "GET /x HTTP/1.1\r\nHost: a\r\nX-Pad: " + std::string(100, 'p');
    for (char c : header) {
      if (!slow.send(std::string(1, c))) {
        slowWriteFailed = true;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
  });
  // Meanwhile a normal client is served at once.
  Client client(url(server));
  auto r = client.request("GET", "/x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(Clock::now() - start, 300ms);

  EXPECT_TRUE(silent.closedWithin(3s));
  EXPECT_TRUE(slow.closedWithin(3s));
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 380ms);
  EXPECT_LT(elapsed, 2s);
  trickle.join();
  EXPECT_TRUE(slowWriteFailed);
}

TEST(HttpLimitsTest, SlowBodyIsDropped) {
  ServerLimits limits;
  limits.bodyTimeout = 300ms;
  std::atomic<int> handled{0};
  Server server(
      [&](const Request&, ResponseWriter& w) {
        ++handled;
        w.send(Response::text(200, "ok"));
      },
      limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc"));
  const auto start = Clock::now();
  EXPECT_TRUE(raw.closedWithin(3s));
  EXPECT_GE(Clock::now() - start, 250ms);
  EXPECT_EQ(handled, 0);
}

TEST(HttpLimitsTest, IdleKeepAliveConnectionIsClosedAndTheClientReconnects) {
  ServerLimits limits;
  limits.idleTimeout = 300ms;
  Server server(echoHandler(), limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n"));
  const auto start = Clock::now();
  bool closed = false;
  std::string answer = raw.readUntilClosed(3s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_GE(Clock::now() - start, 250ms);

  // The shared client retries on a fresh connection when its idle one was closed.
  Client client(url(server));
  ASSERT_TRUE(client.request("GET", "/x").ok());
  std::this_thread::sleep_for(500ms);
  auto again = client.request("GET", "/x");
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(again->status, 200);
}

TEST(HttpLimitsTest, ConnectionsAreBoundedAndFreedSlotsAreReused) {
  ServerLimits limits;
  limits.maxConnections = 3;
  Server server(echoHandler(), limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->connected());
  }
  std::this_thread::sleep_for(100ms);  // let the server accept them

  RawConnection extra(server.port());
  bool closed = false;
  std::string answer = extra.readUntilClosed(3s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 429", 0), 0u) << answer;
  EXPECT_NE(answer.find("Retry-After: 1"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"reason\":\"TooManyRequests\""), std::string::npos) << answer;

  held.pop_back();  // frees one slot
  std::this_thread::sleep_for(100ms);
  Client client(url(server));
  auto r = client.request("GET", "/x");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
}

TEST(HttpLimitsTest, LongStreamsOutliveEveryReadTimeout) {
  ServerLimits limits;
  limits.headerTimeout = 100ms;
  limits.bodyTimeout = 100ms;
  limits.idleTimeout = 100ms;
  Server server(
      [](const Request&, ResponseWriter& w) {
        w.beginStream(200, {{"Content-Type", "application/json"}});
        for (int i = 0; i < 8; ++i) {
          std::this_thread::sleep_for(100ms);
          if (!w.write("{\"n\":" + std::to_string(i) + "}\n")) return;
        }
        w.end();
      },
      limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  Client client(url(server));
  std::string got;
  auto r = client.stream("GET", "/watch", [&](std::string_view d) {
    got.append(d);
    return true;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 8) << got;
}

TEST(HttpLimitsTest, AStreamToAClientThatStopsReadingEndsAfterTheWriteTimeout) {
  ServerLimits limits;
  limits.writeTimeout = 300ms;
  std::atomic<bool> handlerDone{false};
  Server server(
      [&](const Request&, ResponseWriter& w) {
        w.beginStream(200, {});
        const std::string chunk(64 * 1024, 'x');
        while (w.write(chunk)) {
        }
        handlerDone = true;
      },
      limits);
  ASSERT_TRUE(server.start("127.0.0.1:0").ok());
  RawConnection raw(server.port());
  ASSERT_TRUE(raw.send("GET /logs HTTP/1.1\r\nHost: a\r\n\r\n"));  // and never reads
  const auto deadline = Clock::now() + 5s;
  while (!handlerDone && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(handlerDone);
}

TEST(JsonDepthTest, CountsNestingOutsideStringsOnly) {
  EXPECT_TRUE(checkJsonDepth("{\"a\":[[1]]}", 3).ok());
  EXPECT_FALSE(checkJsonDepth("{\"a\":[[[1]]]}", 3).ok());
  EXPECT_TRUE(checkJsonDepth("[1],[2],[[3]]", 2).ok());
  EXPECT_TRUE(checkJsonDepth("{\"a\":\"[[[[{{{{\"}", 1).ok());
  EXPECT_TRUE(checkJsonDepth(R"({"a":"\"[[[["})", 1).ok());
  EXPECT_TRUE(checkJsonDepth(R"({"a\\":1})", 1).ok());
  EXPECT_FALSE(checkJsonDepth(R"({"a\\":[1]})", 1).ok());
  EXPECT_TRUE(checkJsonDepth("]]]][", 1).ok());
  Status deep = checkJsonDepth(std::string(1001, '['));
  EXPECT_EQ(deep.code(), 400);
  EXPECT_EQ(deep.message(), "the JSON document nests deeper than the limit of 1000 levels");
  EXPECT_TRUE(checkJsonDepth(std::string(1000, '[')).ok());
}

TEST(JsonDepthTest, ApiServerRefusesDeepJsonWith400) {
  testing::InProcessApiServer api;
  ASSERT_TRUE(api.start().ok());
  Client client(api.url());
  const std::string deep =
      "{\"metadata\":{\"name\":\"x\",\"annotations\":" + std::string(100000, '[') +
      std::string(100000, ']') + "}}";
  auto r = client.request("POST", "/api/v1/namespaces/default/configmaps", deep,
                          {{"Content-Type", "application/json"}});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 400);
  json status = json::parse(r->body);
  EXPECT_EQ(status["reason"], "BadRequest");
  EXPECT_EQ(status["message"], "the JSON document nests deeper than the limit of 1000 levels");

  // A patch body is checked the same way.
  auto patch =
      client.request("PATCH", "/api/v1/namespaces/default/configmaps/x", std::string(5000, '{'),
                     {{"Content-Type", "application/merge-patch+json"}});
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(patch->status, 400);

  // Ordinary objects are unaffected.
  auto ok = client.request("POST", "/api/v1/namespaces/default/configmaps",
                           R"({"metadata":{"name":"fine"},"data":{"k":"[[[["}})",
                           {{"Content-Type", "application/json"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 201) << ok->body;
}

}  // namespace
}  // namespace minik8s::http
