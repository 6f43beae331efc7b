// The overload protection inside a real ApiServer: a user whose requests hold every workload seat
// gets 429 TooManyRequests with Retry-After, while watches, health checks, system:masters, the
// control plane and the other budget are still served, and the rejections are counted.
#include <gtest/gtest.h>
#include <strings.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/metrics.h"
#include "eventually.h"
#include "storage/store.h"

namespace minik8s::apiserver {
namespace {

using namespace std::chrono_literals;

class OverloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ =
        std::filesystem::temp_directory_path() /
        ("minik8s-overload-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir_);
    auto s = storage::openStore("sqlite://" + dir_.string() + "/state.db");
    ASSERT_TRUE(s.ok());
    store_ = std::move(s.value());
    ApiServerOptions options;
    auto user = [](std::string name, std::vector<std::string> groups = {}) {
      return auth::UserInfo{std::move(name), "", std::move(groups), {}};
    };
    options.tokenAuthenticators = {
        std::make_shared<auth::StaticTokenAuthenticator>(std::map<std::string, auth::UserInfo>{
            {"admin", user("kubernetes-admin", {"system:masters"})},
            {"alice", user("alice")},
            {"bob", user("bob")},
            {"cm", user("system:kube-controller-manager")}})};
    options.allowAnonymous = false;
    // Read-only: 1 seat for users, 1 reserved for the control plane; no queues.
    options.flowControl.maxRequestsInflight = 2;
    options.flowControl.maxMutatingRequestsInflight = 2;
    options.flowControl.queueLengthPerFlow = 0;
    // A read that holds its seat until the test lets it go.
    options.pathHandlers["/test/hold"] = [this](const http::Request&, http::ResponseWriter& w) {
      std::unique_lock lock(mu_);
      ++holding_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      w.send(http::Response::text(200, "done"));
    };
    api_ = std::make_unique<ApiServer>(*store_, api::Scheme::builtin(), options);
    ASSERT_TRUE(api_->start().ok());
    server_ = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { api_->handle(req, w); });
    ASSERT_TRUE(server_->start("127.0.0.1:0").ok());
    url_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }

  void TearDown() override {
    release();
    server_->stop();
    api_->stop();
    std::filesystem::remove_all(dir_);
  }

  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

  bool waitHolding(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return holding_ >= n; });
  }

  Result<http::Response> call(const std::string& token, const std::string& method,
                              const std::string& target, const std::string& body = "") {
    http::Client c(url_);
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Authorization", "Bearer " + token}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return c.request(method, target, body, headers);
  }

  std::filesystem::path dir_;
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<http::Server> server_;
  std::string url_;
  std::mutex mu_;
  std::condition_variable cv_;
  int holding_ = 0;
  bool released_ = false;
};

std::string header(const http::Response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  }
  return "";
}

TEST_F(OverloadTest, PastTheLimitUsersGet429WhileOthersAreServed) {
  std::thread holder([&] { (void)call("alice", "GET", "/test/hold"); });
  ASSERT_TRUE(waitHolding(1));

  // Alice, then bob: the one workload read seat is taken.
  for (const char* token : {"alice", "bob"}) {
    auto r = call(token, "GET", "/api/v1/namespaces/default/configmaps");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 429) << token;
    EXPECT_EQ(header(*r, "Retry-After"), "1");
    json body = json::parse(r->body);
    EXPECT_EQ(body["reason"], "TooManyRequests");
    EXPECT_EQ(body["message"], "Too many requests, please try again later.");
    EXPECT_EQ(body["details"]["retryAfterSeconds"], 1);
  }
  // The mutating budget is separate.
  auto created = call("bob", "POST", "/api/v1/namespaces/default/configmaps",
                      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->status, 201) << created->body;
  // The control plane has its reserved seat; system:masters and health checks are never limited.
  auto cm = call("cm", "GET", "/api/v1/namespaces/default/configmaps");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(cm->status, 200);
  auto admin = call("admin", "GET", "/api/v1/namespaces/default/configmaps");
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->status, 200);
  auto health = http::Client(url_).get("/readyz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  // A watch is long-running: it takes no seat and is not refused.
  auto watch = call("bob", "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1");
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(watch->status, 200);
  // Credentials are checked first: a bad token is 401, not 429.
  auto bad = call("nobody", "GET", "/api/v1/namespaces/default/configmaps");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 401);

  const std::string text = metrics::defaultRegistry().exposition();
  EXPECT_NE(text.find("apiserver_dropped_requests_total{request_kind=\"readOnly\"}"),
            std::string::npos);
  EXPECT_NE(text.find("apiserver_flowcontrol_rejected_requests_total{flow_schema=\"global-"
                      "default\",priority_level=\"workload\",reason=\"concurrency-limit\"}"),
            std::string::npos);

  release();
  holder.join();
  // The seat is free again, once the held request's handler has returned: the holder's client
  // can have its response a moment before the server lets the seat go.
  Result<http::Response> after = Status::Unavailable("not asked yet");
  testing::eventually([&] {
    after = call("bob", "GET", "/api/v1/namespaces/default/configmaps");
    return !after.ok() || after->status != 429;
  });
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, 200);
}

}  // namespace
}  // namespace minik8s::apiserver
