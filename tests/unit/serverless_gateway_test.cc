// The gateway: routing helpers, instance picking, and the activator against a real in-process
// API server (the Function CRD, a labelled Deployment and Endpoints) with a fake instance: a
// request at zero instances is held, scales the Deployment up and is answered once an Endpoints
// update brings a ready address; an import error answers 500 at once; idle goes back to zero.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/http_client.h"
#include "in_process_api_server.h"
#include "serverless/gateway.h"

namespace minik8s::serverless {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(GatewayRouting, PathAndHost) {
  auto r = routeRequest("/function/apps/hello", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ns, "apps");
  EXPECT_EQ(r->name, "hello");
  EXPECT_EQ(r->target, "/");
  r = routeRequest("/function/apps/hello/v1/items?x=1&y=2", "gw:30080");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->target, "/v1/items?x=1&y=2");
  r = routeRequest("/function/apps/hello?x=1", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->target, "/?x=1");
  r = routeRequest("/items?a=b", "Hello.Apps.fn.cluster.local:80");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ns, "apps");
  EXPECT_EQ(r->name, "hello");
  EXPECT_EQ(r->target, "/items?a=b");
  for (auto [target, host] :
       std::vector<std::pair<const char*, const char*>>{{"/", ""},
                                                        {"/function/apps", ""},
                                                        {"/function//hello", ""},
                                                        {"/function/apps/", ""},
                                                        {"/", "hello.fn.cluster.local"},
                                                        {"/", "a.b.c.fn.cluster.local"},
                                                        {"/", "hello.apps.svc.cluster.local"}}) {
    EXPECT_FALSE(routeRequest(target, host)) << target << " " << host;
  }
}

TEST(GatewayRouting, ReadyAddressesOnly) {
  json ep = json::parse(R"({"subsets": [
      {"addresses": [{"ip": "10.244.1.7"}, {"ip": "10.244.0.3"}],
       "notReadyAddresses": [{"ip": "10.244.1.9"}], "ports": [{"port": 8080}]},
      {"addresses": [{"ip": "10.244.0.3"}]}]})");
  EXPECT_EQ(endpointAddresses(ep), (std::vector<std::string>{"10.244.0.3", "10.244.1.7"}));
  EXPECT_EQ(endpointAddresses(ep, "notReadyAddresses"), std::vector<std::string>{"10.244.1.9"});
  EXPECT_TRUE(endpointAddresses(json::object()).empty());
}

TEST(GatewayRouting, LeastInFlightWithTiesInTurnAndALimit) {
  EXPECT_EQ(pickLeastInFlight({3, 1, 2}, 0, 0), 1);
  EXPECT_EQ(pickLeastInFlight({1, 1, 1}, 0, 0), 0);
  EXPECT_EQ(pickLeastInFlight({1, 1, 1}, 0, 1), 1);
  EXPECT_EQ(pickLeastInFlight({1, 1, 1}, 0, 5), 2);
  EXPECT_EQ(pickLeastInFlight({2, 2}, 2, 0), -1);  // both at containerConcurrency
  EXPECT_EQ(pickLeastInFlight({2, 1}, 2, 0), 1);
  EXPECT_EQ(pickLeastInFlight({}, 0, 0), -1);
}

// Records scale requests, applies them to the Deployment and, when asked for instances, makes
// the fake instance ready after `startDelay` (as the kubelet and endpoints controller would).
class FakeCluster : public Scaler {
 public:
  // `list`: where the instance appears, "addresses" (ready) or "notReadyAddresses" (starting).
  FakeCluster(client::RestClient& rest, milliseconds startDelay, std::string list)
      : rest_(rest), real_(restScaler(rest)), startDelay_(startDelay), list_(std::move(list)) {}
  ~FakeCluster() override {
    for (auto& t : threads_) t.join();
  }
  Status scale(const std::string& ns, const std::string& deployment, int replicas) override {
    {
      std::lock_guard lock(mu_);
      calls_.push_back(replicas);
    }
    Status s = real_->scale(ns, deployment, replicas);
    if (!s.ok()) return s;
    threads_.emplace_back([this, ns, replicas] {
      std::this_thread::sleep_for(replicas > 0 ? startDelay_ : milliseconds(0));
      json subsets = json::array();
      if (replicas > 0) {
        subsets.push_back({{list_, {{{"ip", "10.244.0.9"}}}}, {"ports", {{{"port", 8080}}}}});
      }
      auto ep = rest_.get(client::resources::kEndpoints, ns, "hello");
      if (!ep.ok()) return;
      (*ep)["subsets"] = subsets;
      auto u = rest_.update(client::resources::kEndpoints, *ep);
      if (!u.ok()) ADD_FAILURE() << u.status().toString();
    });
    return s;
  }
  std::vector<int> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<int> calls_;
  client::RestClient& rest_;
  std::unique_ptr<Scaler> real_;
  milliseconds startDelay_;
  std::string list_;
  std::vector<std::thread> threads_;
};

class GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.start().ok());
    rest_ = std::make_unique<client::RestClient>(api_.url());
    ASSERT_TRUE(ensureFunctionCrd(*rest_).ok());
    instance_ =
        std::make_unique<http::Server>([this](const http::Request& req, http::ResponseWriter& w) {
          if (req.path == "/healthz") return w.send(http::Response::json(200, {{"status", "ok"}}));
          ++served_;
          w.send(http::Response::json(200, {{"echo", req.body}, {"path", req.target}}));
        });
    ASSERT_TRUE(instance_->start("127.0.0.1:0").ok());
  }
  void TearDown() override {
    if (gateway_) gateway_->stop();
    gateway_.reset();
    cluster_.reset();
    instance_->stop();
    api_.stop();
  }

  void createFunction(const json& scale, const json& status = nullptr) {
    json fn = {{"apiVersion", kApiVersion},
               {"kind", "Function"},
               {"metadata", {{"name", "hello"}, {"namespace", "default"}}},
               {"spec",
                {{"handler", "hello.handle"},
                 {"code", {{"configMap", "hello-code"}}},
                 {"timeoutSeconds", 5},
                 {"scale", scale}}}};
    auto created = rest_->create(kFunctions, "default", fn);
    ASSERT_TRUE(created.ok()) << created.status().toString();
    if (!status.is_null()) {
      ASSERT_TRUE(
          rest_->patch(kFunctions, "default", "hello", {{"status", status}}, "merge", "status")
              .ok());
    }
    auto spec = parseFunctionSpec(*created);
    ASSERT_TRUE(spec.ok());
    json d = functionDeployment(*created, *spec, kDefaultRuntimeImage, "1", 0);
    ASSERT_TRUE(rest_->create(client::resources::kDeployments, "default", d).ok());
    json ep = {{"apiVersion", "v1"},
               {"kind", "Endpoints"},
               {"metadata", {{"name", "hello"}, {"labels", {{kFunctionLabel, "hello"}}}}},
               {"subsets", json::array()}};
    ASSERT_TRUE(rest_->create(client::resources::kEndpoints, "default", ep).ok());
  }

  void startGateway(milliseconds startDelay, const std::string& list = "addresses") {
    cluster_ = std::make_unique<FakeCluster>(*rest_, startDelay, list);
    GatewayOptions o;
    o.listen = "127.0.0.1:0";
    o.instancePort = instance_->port();
    o.dialHost = "127.0.0.1";  // the fake instance behind the pod IP 10.244.0.9
    o.sampleInterval = milliseconds(100);
    auto* cluster = cluster_.get();
    struct Borrowed : Scaler {
      Scaler& s;
      explicit Borrowed(Scaler& s) : s(s) {}
      Status scale(const std::string& ns, const std::string& d, int n) override {
        return s.scale(ns, d, n);
      }
    };
    gateway_ = std::make_unique<Gateway>(*rest_, std::make_unique<Borrowed>(*cluster), o);
    Status s = gateway_->start();
    ASSERT_TRUE(s.ok()) << s.toString();
  }

  Result<http::Response> post(const std::string& target, const std::string& body,
                              const std::string& host = "") {
    http::Client c("http://127.0.0.1:" + std::to_string(gateway_->port()));
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", "application/json"}};
    if (!host.empty()) headers.emplace_back("Host", host);
    return c.request("POST", target, body, headers);
  }

  int replicas() {
    auto d = rest_->get(client::resources::kDeployments, "default", "hello-fn");
    return d.ok() ? d->value("/spec/replicas"_json_pointer, -1) : -1;
  }

  testing::InProcessApiServer api_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<http::Server> instance_;
  std::atomic<int> served_{0};
  std::unique_ptr<FakeCluster> cluster_;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(GatewayTest, ColdStartHoldsTheRequestUntilAnInstanceIsReady) {
  createFunction({{"scaleToZeroAfter", "1s"}});
  startGateway(milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  auto r = post("/function/default/hello/items?x=1", R"({"name": "a"})");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  auto body = json::parse(r->body);
  EXPECT_EQ(body["echo"], R"({"name": "a"})");
  EXPECT_EQ(body["path"], "/items?x=1");
  EXPECT_GE(took, milliseconds(300));  // held while the instance started
  EXPECT_EQ(cluster_->calls().front(), 1);
  EXPECT_EQ(replicas(), 1);

  // Warm: straight through, also by Host.
  r = post("/", "{}", "hello.default.fn.cluster.local");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(served_, 2);

  // Idle for the window: back to zero.
  for (int i = 0; i < 50 && replicas() != 0; ++i) std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(replicas(), 0);
  EXPECT_EQ(cluster_->calls().back(), 0);
}

TEST_F(GatewayTest, AStartingInstanceIsUsedAsSoonAsItAnswersHealthz) {
  // The Endpoints never call it ready (the kubelet's probe has not run yet): the activator's own
  // /healthz probe lets the held request through.
  createFunction(json::object());
  startGateway(milliseconds(100), "notReadyAddresses");
  auto r = post("/function/default/hello", "{}");
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(served_, 1);
}

TEST_F(GatewayTest, UnknownFunctionsAndRoutesAre404) {
  createFunction(json::object());
  startGateway(milliseconds(0));
  auto r = post("/function/default/nope", "{}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["error"], "function default/nope not found");
  r = post("/elsewhere", "{}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  http::Client c("http://127.0.0.1:" + std::to_string(gateway_->port()));
  auto health = c.get("/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
}

TEST_F(GatewayTest, AnImportErrorAnswers500AtOnce) {
  json status = {{"conditions",
                  {{{"type", "Ready"},
                    {"status", "False"},
                    {"reason", "ImportFailed"},
                    {"message", "cannot import handler hello.handle: SyntaxError: x"}}}}};
  createFunction(json::object(), status);
  startGateway(milliseconds(60'000));  // never ready
  auto r = post("/function/default/hello", "{}");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("SyntaxError"), std::string::npos);
}

TEST_F(GatewayTest, ABodyOverTheLimitIs413) {
  createFunction(json::object());
  startGateway(milliseconds(0));
  auto r = post("/function/default/hello", std::string(7 * 1024 * 1024, 'x'));
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(served_, 0);
}

}  // namespace
}  // namespace minik8s::serverless
