// RestClient with several API servers: it moves to the next server when one cannot be reached,
// repeats only what is safe to repeat, and keeps the one-server behaviour unchanged.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "client/rest_client.h"
#include "common/http.h"

namespace minik8s::client {
namespace {

// A fake API server that answers every request with its name and counts the requests.
struct NamedServer {
  explicit NamedServer(std::string n)
      : name(std::move(n)), server([this](const http::Request& req, http::ResponseWriter& w) {
          ++requests;
          w.send(http::Response::json(200, json{{"server", name}, {"method", req.method}}));
        }) {
    EXPECT_TRUE(server.start("127.0.0.1:0").ok());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server.port()); }

  std::string name;
  std::atomic<int> requests{0};
  http::Server server;
};

// A URL nobody listens on (a port that was just free).
std::string deadUrl() {
  http::Server s(
      [](const http::Request&, http::ResponseWriter& w) { w.send(http::Response::text(200, "")); });
  EXPECT_TRUE(s.start("127.0.0.1:0").ok());
  const int port = s.port();
  s.stop();
  return "http://127.0.0.1:" + std::to_string(port);
}

TEST(RestClientFailoverTest, OneServerBehavesAsBefore) {
  NamedServer a("a");
  RestClient rest(a.url());
  EXPECT_EQ(rest.baseUrl(), a.url());
  EXPECT_EQ(rest.currentUrl(), a.url());
  auto r = rest.request("GET", "/version");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ((*r)["server"], "a");

  const std::string dead = deadUrl();
  RestClient down(dead);
  auto failed = down.request("GET", "/version");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), 503);
  EXPECT_EQ(down.currentUrl(), dead);
}

TEST(RestClientFailoverTest, MovesToTheNextServerWhenOneRefusesConnections) {
  NamedServer b("b");
  const std::string dead = deadUrl();
  RestClient rest(dead + "," + b.url());
  EXPECT_EQ(rest.baseUrl(), dead + "," + b.url());
  EXPECT_EQ(rest.currentUrl(), dead);
  auto r = rest.request("GET", "/version");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ((*r)["server"], "b");
  EXPECT_EQ(rest.currentUrl(), b.url());
  // A refused connection never reached a server: a write is safe to send elsewhere too.
  RestClient writer(dead + "," + b.url());
  auto created =
      writer.create(resources::kConfigMaps, "default", json{{"metadata", {{"name", "x"}}}});
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ((*created)["method"], "POST");
  EXPECT_EQ(b.requests.load(), 2);
}

TEST(RestClientFailoverTest, StaysOnAWorkingServerAndLeavesItWhenItDies) {
  auto a = std::make_unique<NamedServer>("a");
  NamedServer b("b");
  RestClient rest(a->url() + "," + b.url());
  for (int i = 0; i < 3; ++i) {
    auto r = rest.request("GET", "/version");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)["server"], "a");
  }
  EXPECT_EQ(b.requests.load(), 0);
  a->server.stop();  // also closes the pooled keep-alive connection
  auto r = rest.request("GET", "/version");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ((*r)["server"], "b");
  auto again = rest.request("GET", "/version");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["server"], "b");
  EXPECT_EQ(b.requests.load(), 2);
}

TEST(RestClientFailoverTest, AllServersDownReturnsUnavailable) {
  const std::string d1 = deadUrl(), d2 = deadUrl();
  RestClient rest(d1 + "," + d2);
  auto r = rest.request("GET", "/version");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), 503);
}

TEST(RestClientFailoverTest, AFailedWatchSendsTheNextWatchToTheNextServer) {
  NamedServer b("b");
  const std::string dead = deadUrl();
  RestClient rest(dead + "," + b.url());
  Status s = rest.watch(resources::kPods, "", {}, 1, [](const WatchEvent&) { return true; });
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(rest.currentUrl(), b.url());
}

}  // namespace
}  // namespace minik8s::client
