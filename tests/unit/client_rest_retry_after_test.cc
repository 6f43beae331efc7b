// RestClient honours Retry-After as client-go does: an overloaded server's 429 (or a 5xx that
// carries Retry-After) is sent again after the delay it asks for, a bounded number of times.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "client/rest_client.h"
#include "common/http.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;

// A server that answers the first `rejections` requests with `code` and `Retry-After:
// retryAfter` (no header when retryAfter is empty), then 200 with a ConfigMap.
class OverloadedServer {
 public:
  OverloadedServer(int rejections, std::string retryAfter, int code = 429)
      : server_([this, rejections, retryAfter, code](const http::Request& req,
                                                     http::ResponseWriter& w) {
          lastMethod_ = req.method;
          if (requests_++ < rejections) {
            http::Response r = http::Response::json(
                code, {{"kind", "Status"},
                       {"apiVersion", "v1"},
                       {"status", "Failure"},
                       {"message", "Too many requests, please try again later."},
                       {"reason", "TooManyRequests"},
                       {"details", {{"retryAfterSeconds", 1}}},
                       {"code", code}});
            if (!retryAfter.empty()) r.headers.emplace_back("Retry-After", retryAfter);
            return w.send(std::move(r));
          }
          w.send(http::Response::json(
              200, {{"kind", "ConfigMap"}, {"apiVersion", "v1"}, {"metadata", {{"name", "c"}}}}));
        }) {
    EXPECT_TRUE(server_.start("127.0.0.1:0").ok());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_.port()); }
  int requests() const { return requests_; }
  std::string lastMethod() const { return lastMethod_; }

 private:
  std::atomic<int> requests_{0};
  std::string lastMethod_;
  http::Server server_;
};

TEST(RestClientRetryAfterTest, RetriesA429AfterTheDelayItAsksFor) {
  OverloadedServer server(1, "1");
  RestClient rest(server.url());
  const auto start = std::chrono::steady_clock::now();
  auto got = rest.get(resources::kConfigMaps, "default", "c");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ((*got)["metadata"]["name"], "c");
  EXPECT_EQ(server.requests(), 2);
  EXPECT_GE(took, 950ms);  // Retry-After: 1
  EXPECT_LT(took, 5s);
}

TEST(RestClientRetryAfterTest, RetriesWritesToo) {
  // The server did not act on a request it answered 429: a POST is safe to send again.
  OverloadedServer server(3, "0");
  RestClient rest(server.url());
  auto got = rest.create(resources::kConfigMaps, "default", {{"metadata", {{"name", "c"}}}});
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ(server.requests(), 4);
  EXPECT_EQ(server.lastMethod(), "POST");
}

TEST(RestClientRetryAfterTest, GivesUpAfterMaxRetries) {
  OverloadedServer server(100, "0");
  ClientConfig config;
  config.servers = server.url();
  config.maxRetries = 3;
  RestClient rest(config);
  auto got = rest.get(resources::kConfigMaps, "default", "c");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), 429);
  EXPECT_EQ(got.status().reason(), "TooManyRequests");
  EXPECT_EQ(server.requests(), 4);  // the first try and 3 retries
}

TEST(RestClientRetryAfterTest, WithoutRetryAfterTheAnswerIsReturnedAtOnce) {
  OverloadedServer server(1, "");
  RestClient rest(server.url());
  EXPECT_EQ(rest.get(resources::kConfigMaps, "default", "c").status().code(), 429);
  EXPECT_EQ(server.requests(), 1);
  // A 503 with Retry-After is retried (client-go retries 5xx answers that carry it) ...
  OverloadedServer unavailable(1, "0", 503);
  RestClient rest2(unavailable.url());
  EXPECT_TRUE(rest2.get(resources::kConfigMaps, "default", "c").ok());
  EXPECT_EQ(unavailable.requests(), 2);
  // ... a 4xx other than 429 is not.
  OverloadedServer conflict(1, "0", 409);
  RestClient rest3(conflict.url());
  EXPECT_EQ(rest3.get(resources::kConfigMaps, "default", "c").status().code(), 409);
  EXPECT_EQ(conflict.requests(), 1);
}

TEST(RestClientRetryAfterTest, StopRetryingEndsTheWait) {
  OverloadedServer server(100, "5");
  RestClient rest(server.url());
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    rest.stopRetrying();
  });
  const auto start = std::chrono::steady_clock::now();
  auto got = rest.get(resources::kConfigMaps, "default", "c");
  stopper.join();
  EXPECT_EQ(got.status().code(), 429);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_EQ(server.requests(), 1);
}

}  // namespace
}  // namespace minik8s::client
