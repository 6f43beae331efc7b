// RestClient failover across three real in-process API servers sharing one datastore (as
// `cluster up --ha` runs them on etcd): the client leaves a dead server for the next one, comes
// back to a recovered one when the others fail in turn (circularly, never stuck), leaves a server
// that accepts connections but never answers, and repeats only requests no server can have
// acted on, or reads.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "common/stream.h"
#include "storage/store.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;

// Three API servers on one SQLite store, each behind its own HTTP listener that a test can stop
// (the server dies) and start again on the same port (it recovers).
class ThreeApiServers : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("minik8s-failover-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = storage::openStore("sqlite://" + dir_.string() + "/state.db");
    ASSERT_TRUE(store.ok()) << store.status().toString();
    store_ = std::move(store).value();
    for (size_t i = 0; i < kServers; ++i) {
      apis_[i] = std::make_unique<apiserver::ApiServer>(*store_, api::Scheme::builtin());
      ASSERT_TRUE(apis_[i]->start().ok());
      ports_[i] = 0;
      revive(i);
      ports_[i] = listeners_[i]->port();
    }
  }

  void TearDown() override {
    for (size_t i = 0; i < kServers; ++i) kill(i);
    for (auto& api : apis_) {
      if (api) api->stop();
      api.reset();
    }
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void kill(size_t i) {
    if (listeners_[i]) listeners_[i]->stop();
    listeners_[i].reset();
  }

  void revive(size_t i) {
    listeners_[i] = std::make_unique<http::Server>(
        [this, i](const http::Request& req, http::ResponseWriter& w) {
          ++hits_[i];
          apis_[i]->handle(req, w);
        });
    ASSERT_TRUE(listeners_[i]->start("127.0.0.1:" + std::to_string(ports_[i])).ok());
  }

  std::string url(size_t i) const { return "http://127.0.0.1:" + std::to_string(ports_[i]); }
  std::string allUrls() const { return url(0) + "," + url(1) + "," + url(2); }

  static json configMap(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", {{"k", "v"}}}};
  }

  static constexpr size_t kServers = 3;
  std::filesystem::path dir_;
  std::unique_ptr<storage::Store> store_;
  std::array<std::unique_ptr<apiserver::ApiServer>, kServers> apis_;
  std::array<std::unique_ptr<http::Server>, kServers> listeners_;
  std::array<int, kServers> ports_{};
  std::array<std::atomic<int>, kServers> hits_{};
};

TEST_F(ThreeApiServers, FailsOverCircularlyAndComesBackToARecoveredServer) {
  RestClient rest(allUrls());
  ASSERT_TRUE(rest.create(resources::kConfigMaps, "default", configMap("one")).ok());
  EXPECT_EQ(rest.currentUrl(), url(0));
  EXPECT_EQ(hits_[0].load(), 1);

  kill(0);  // A dies: B takes over, reads and writes alike
  auto read = rest.get(resources::kConfigMaps, "default", "one");
  ASSERT_TRUE(read.ok()) << read.status().toString();
  EXPECT_EQ(rest.currentUrl(), url(1));
  ASSERT_TRUE(rest.create(resources::kConfigMaps, "default", configMap("two")).ok());
  EXPECT_EQ(hits_[1].load(), 2);

  revive(0);  // A is back; B and C die: past C the client wraps around to A
  kill(1);
  kill(2);
  auto list = rest.list(resources::kConfigMaps, "default");
  ASSERT_TRUE(list.ok()) << list.status().toString();
  EXPECT_EQ(rest.currentUrl(), url(0));
  EXPECT_EQ((*list)["items"].size(), 2u);  // one datastore behind all three
  EXPECT_EQ(hits_[0].load(), 2);

  revive(2);  // A dies again with B still down: on to C
  kill(0);
  ASSERT_TRUE(rest.create(resources::kConfigMaps, "default", configMap("three")).ok());
  EXPECT_EQ(rest.currentUrl(), url(2));

  // It stays on a server that answers, even when an earlier one recovers.
  revive(0);
  revive(1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(rest.get(resources::kConfigMaps, "default", "one").ok());
  EXPECT_EQ(rest.currentUrl(), url(2));
  EXPECT_EQ(hits_[0].load(), 2);
  EXPECT_EQ(hits_[1].load(), 2);
}

TEST_F(ThreeApiServers, AllDownFailsThenTheFirstToRecoverIsUsed) {
  RestClient rest(allUrls());
  for (size_t i = 0; i < kServers; ++i) kill(i);
  auto down = rest.get(resources::kConfigMaps, "default", "x");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), 503);
  revive(1);
  auto created = rest.create(resources::kConfigMaps, "default", configMap("x"));
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ(rest.currentUrl(), url(1));
}

TEST_F(ThreeApiServers, TheNextWatchAfterADeadServerGoesToTheNextServer) {
  RestClient rest(allUrls());
  auto list = rest.list(resources::kConfigMaps, "default");
  ASSERT_TRUE(list.ok());
  kill(0);
  ListParams params;
  params.resourceVersion = (*list)["metadata"]["resourceVersion"].get<std::string>();
  Status first = rest.watch(resources::kConfigMaps, "default", params, 1,
                            [](const WatchEvent&) { return true; });
  EXPECT_FALSE(first.ok());  // refused by A
  std::atomic<bool> sawAdded{false};
  std::thread writer([&] {
    std::this_thread::sleep_for(200ms);
    RestClient other(url(2));
    EXPECT_TRUE(other.create(resources::kConfigMaps, "default", configMap("seen")).ok());
  });
  Status second =
      rest.watch(resources::kConfigMaps, "default", params, 2, [&](const WatchEvent& e) {
        if (e.type == "ADDED" && e.object["metadata"]["name"] == "seen") {
          sawAdded = true;
          return false;
        }
        return true;
      });
  writer.join();
  EXPECT_TRUE(second.ok()) << second.toString();
  EXPECT_TRUE(sawAdded.load());
  EXPECT_EQ(rest.currentUrl(), url(1));
}

// A server whose watches send one event and then break off (the server died mid-watch).
struct BreaksWatches {
  BreaksWatches() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    thread = std::thread([this] {
      int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);
      const std::string event =
          R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"x"}}})"
          "\n";
      char size[16];
      std::snprintf(size, sizeof size, "%zx", event.size());
      const std::string answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                 std::string(size) + "\r\n" + event + "\r\n";
      ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }
  ~BreaksWatches() {
    ::shutdown(fd, SHUT_RDWR);
    thread.join();
    ::close(fd);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  int fd = -1;
  int port = 0;
  std::thread thread;
};

TEST_F(ThreeApiServers, AWatchThatBreaksOffSendsTheNextOneToTheNextServer) {
  BreaksWatches dying;
  RestClient rest(dying.url() + "," + url(1));
  int events = 0;
  Status s = rest.watch(resources::kConfigMaps, "default", {}, 5, [&](const WatchEvent& e) {
    events += e.type == "ADDED";
    return true;
  });
  EXPECT_EQ(events, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), 503);
  EXPECT_EQ(rest.currentUrl(), url(1));
  // A cancelled watch is not a failure and moves nothing.
  WatchCanceller canceller;
  std::thread cancel([&] {
    std::this_thread::sleep_for(200ms);
    canceller.cancel();
  });
  Status cancelled = rest.watch(
      resources::kConfigMaps, "default", {}, 5, [](const WatchEvent&) { return true; }, &canceller);
  cancel.join();
  EXPECT_TRUE(cancelled.ok()) << cancelled.toString();
  EXPECT_EQ(rest.currentUrl(), url(1));
}

// A server that takes each connection and drops it without answering: it died in the middle of
// the request, which it may or may not have applied.
struct DropsRequests {
  DropsRequests()
      : server([this](const http::Request&, http::ResponseWriter& w) {
          ++requests;
          w.takeStream().reset();
        }) {
    EXPECT_TRUE(server.start("127.0.0.1:0").ok());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server.port()); }
  std::atomic<int> requests{0};
  http::Server server;
};

TEST_F(ThreeApiServers, AWriteThatReachedADyingServerIsNotRepeatedElsewhere) {
  DropsRequests dying;
  RestClient rest(dying.url() + "," + url(1));
  auto created = rest.create(resources::kConfigMaps, "default", configMap("once"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), 503);
  EXPECT_EQ(dying.requests.load(), 1);
  EXPECT_EQ(hits_[1].load(), 0);         // not sent again to B ...
  EXPECT_EQ(rest.currentUrl(), url(1));  // ... but the next request goes there
  auto missing = rest.get(resources::kConfigMaps, "default", "once");
  EXPECT_EQ(missing.status().code(), 404);
  EXPECT_EQ(hits_[1].load(), 1);

  RestClient reader(dying.url() + "," + url(1));  // a read is repeated on B at once
  auto read = reader.list(resources::kConfigMaps, "default");
  ASSERT_TRUE(read.ok()) << read.status().toString();
  EXPECT_EQ(dying.requests.load(), 2);
}

// A loopback listener nobody accepts on: connections complete, requests are never answered.
struct HungServer {
  HungServer() {
    http::Server probe([](const http::Request&, http::ResponseWriter& w) {
      w.send(http::Response::text(200, ""));
    });
    EXPECT_TRUE(probe.start("127.0.0.1:0").ok());
    port = probe.port();
    probe.stop();
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd, 16), 0);
  }
  ~HungServer() { ::close(fd); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  int fd = -1;
  int port = 0;
};

TEST_F(ThreeApiServers, AServerThatStopsAnsweringIsLeftAfterTheRequestTimeout) {
  HungServer hung;
  ClientConfig config;
  config.servers = hung.url() + "," + url(1);
  config.timeouts.request = 300ms;
  RestClient rest(config);
  const auto start = std::chrono::steady_clock::now();
  auto read = rest.list(resources::kConfigMaps, "default");
  ASSERT_TRUE(read.ok()) << read.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(rest.currentUrl(), url(1));

  RestClient writer(ClientConfig{hung.url() + "," + url(1), {}, "", config.timeouts});
  auto created = writer.create(resources::kConfigMaps, "default", configMap("maybe"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), 504);  // sent: the hung server may still apply it
  EXPECT_EQ(writer.currentUrl(), url(1));
  EXPECT_TRUE(writer.create(resources::kConfigMaps, "default", configMap("maybe")).ok());
}

}  // namespace
}  // namespace minik8s::client
