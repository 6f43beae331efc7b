// RestClient on the in-process transport (client/in_process_server.h): against the real handler
// of an API server with x509-style identities and RBAC, and against fake handlers for what a
// real server does rarely (Retry-After, a streamed answer, a throwing handler).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "auth_user.h"
#include "client/in_process_server.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "eventually.h"
#include "in_process_api_server.h"

namespace minik8s::client {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

http::PeerCertificate certificate(std::string user, std::vector<std::string> groups = {}) {
  return http::PeerCertificate{std::move(user), std::move(groups), true};
}

json configMap(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"data", {{"k", "v"}}}};
}

// An API server as `minik8s server` sets one up for its components: no anonymous requests,
// RBAC with the bootstrap policy, an admin token for the HTTP side of the comparisons. Served
// both over HTTP and in-process, from one handler.
class InProcessClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_
                    .start(
                        [](apiserver::Registry& registry, apiserver::ApiServerOptions& options) {
                          options.tokenAuthenticators = {
                              std::make_shared<apiserver::auth::StaticTokenAuthenticator>(
                                  std::map<std::string, apiserver::auth::UserInfo>{
                                      {"admin-token",
                                       testing::user("kubernetes-admin", {"system:masters"})}})};
                          options.allowAnonymous = false;
                          options.authorizer =
                              apiserver::auth::RbacAuthorizer::fromRegistry(registry, 100ms);
                        },
                        /*bootstrapPolicy=*/true)
                    .ok());
    url_ = server_.url();
    inProcess_ = std::make_shared<InProcessServer>();
    inProcess_->setHandler(server_.handler());
  }

  void TearDown() override {
    inProcess_->stop();
    server_.stop();
  }

  std::unique_ptr<RestClient> inProcessAs(std::optional<http::PeerCertificate> identity,
                                          std::string bearerToken = "") {
    ClientConfig config;
    config.servers = url_;  // never dialled
    config.inProcess = inProcess_;
    config.inProcessIdentity = std::move(identity);
    config.bearerToken = std::move(bearerToken);
    return std::make_unique<RestClient>(config);
  }
  std::unique_ptr<RestClient> overHttpAsAdmin() {
    ClientConfig config;
    config.servers = url_;
    config.bearerToken = "admin-token";
    return std::make_unique<RestClient>(config);
  }

  testing::InProcessApiServer server_;
  std::string url_;
  std::shared_ptr<InProcessServer> inProcess_;
};

TEST_F(InProcessClientTest, ErrorsComeBackAsTheSameStatusAsOverHttp) {
  auto local = inProcessAs(certificate("admin", {"system:masters"}));
  auto remote = overHttpAsAdmin();
  ASSERT_TRUE(local->inProcess());
  ASSERT_FALSE(remote->inProcess());

  auto same = [](const Status& a, const Status& b) {
    EXPECT_EQ(a.code(), b.code());
    EXPECT_EQ(a.reason(), b.reason());
    EXPECT_EQ(a.message(), b.message());
  };
  // Not found.
  auto missingA = local->get(resources::kConfigMaps, "default", "missing");
  auto missingB = remote->get(resources::kConfigMaps, "default", "missing");
  ASSERT_FALSE(missingA.ok());
  EXPECT_EQ(missingA.status().code(), 404);
  same(missingA.status(), missingB.status());

  // Created, then AlreadyExists.
  auto created = local->create(resources::kConfigMaps, "default", configMap("a"));
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ((*created)["data"]["k"], "v");
  ASSERT_TRUE(remote->create(resources::kConfigMaps, "default", configMap("b")).ok());
  auto existsA = local->create(resources::kConfigMaps, "default", configMap("b"));
  auto existsB = remote->create(resources::kConfigMaps, "default", configMap("a"));
  EXPECT_EQ(existsA.status().code(), 409);
  EXPECT_EQ(existsA.status().reason(), "AlreadyExists");
  EXPECT_EQ(existsB.status().reason(), "AlreadyExists");

  // An update from a stale resourceVersion: Conflict, with the same message both ways.
  json stale = *created;
  json fresh = *created;
  fresh["data"]["k"] = "w";
  ASSERT_TRUE(local->update(resources::kConfigMaps, fresh).ok());
  stale["data"]["k"] = "x";
  auto conflictA = local->update(resources::kConfigMaps, stale);
  auto conflictB = remote->update(resources::kConfigMaps, stale);
  EXPECT_EQ(conflictA.status().code(), 409);
  EXPECT_EQ(conflictA.status().reason(), "Conflict");
  same(conflictA.status(), conflictB.status());

  // Invalid: a name no object may have.
  auto invalidA = local->create(resources::kConfigMaps, "default", configMap("Not_A_Name"));
  auto invalidB = remote->create(resources::kConfigMaps, "default", configMap("Not_A_Name"));
  EXPECT_EQ(invalidA.status().code(), 422);
  same(invalidA.status(), invalidB.status());

  // What one wrote the other reads.
  auto read = remote->get(resources::kConfigMaps, "default", "a");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)["data"]["k"], "w");
  auto list = local->list(resources::kConfigMaps, "default");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["items"].size(), 2u);
}

TEST_F(InProcessClientTest, TheUserIsTheOneGiven) {
  // No grants: RBAC refuses with the user's name, as over HTTPS with this certificate.
  auto alice = inProcessAs(certificate("alice"));
  auto denied = alice->list(resources::kPods, "default");
  EXPECT_EQ(denied.status().code(), 403);
  EXPECT_EQ(denied.status().message(),
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in "
            "the namespace \"default\"");
  // A watch is authorised the same way.
  Status watchDenied =
      alice->watch(resources::kPods, "default", {}, 5, [](const WatchEvent&) { return true; });
  EXPECT_EQ(watchDenied.code(), 403);
  EXPECT_NE(watchDenied.message().find("User \"alice\" cannot watch"), std::string::npos)
      << watchDenied.toString();

  // The scheduler's bootstrap role lets it read everything, not create ConfigMaps.
  auto scheduler = inProcessAs(certificate("system:kube-scheduler"));
  EXPECT_TRUE(scheduler->list(resources::kPods, "").ok());
  auto write = scheduler->create(resources::kConfigMaps, "default", configMap("c"));
  EXPECT_EQ(write.status().code(), 403);
  EXPECT_NE(write.status().message().find("User \"system:kube-scheduler\" cannot create"),
            std::string::npos)
      << write.status().toString();

  // No identity and no token: anonymous, refused (401) as a plain request without credentials.
  auto nobody = inProcessAs(std::nullopt);
  EXPECT_EQ(nobody->list(resources::kPods, "").status().code(), 401);
  // No certificate but the admin token (a server without TLS): the token's user.
  auto admin = inProcessAs(std::nullopt, "admin-token");
  EXPECT_TRUE(admin->list(resources::kSecrets, "default").ok());
}

TEST_F(InProcessClientTest, AWatchDeliversEventsAndACancelEndsItPromptly) {
  auto client = inProcessAs(certificate("system:kube-controller-manager"));
  std::mutex mu;
  std::vector<std::string> seen;
  WatchCanceller canceller;
  auto watching = std::async(std::launch::async, [&] {
    return client->watch(
        resources::kConfigMaps, "default", {}, 300,
        [&](const WatchEvent& ev) {
          std::lock_guard lock(mu);
          seen.push_back(ev.type + " " + ev.object["metadata"].value("name", ""));
          return true;
        },
        &canceller);
  });
  ASSERT_TRUE(client->create(resources::kConfigMaps, "default", configMap("one")).ok());
  auto one = client->get(resources::kConfigMaps, "default", "one");
  ASSERT_TRUE(one.ok());
  json changed = *one;
  changed["data"]["k"] = "changed";
  ASSERT_TRUE(client->update(resources::kConfigMaps, changed).ok());
  ASSERT_TRUE(client->remove(resources::kConfigMaps, "default", "one").ok());
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return seen.size() >= 3;
  }));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"ADDED one", "MODIFIED one", "DELETED one"}));
  }
  // The API server checks for a gone client between events (every 500 ms): a cancel ends the
  // watch then, not at its 300 s timeout.
  const auto start = std::chrono::steady_clock::now();
  canceller.cancel();
  ASSERT_EQ(watching.wait_for(10s), std::future_status::ready);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(watching.get().ok());
  EXPECT_LT(took, 5s);
  std::printf(
      "in-process watch ended %lld ms after its cancel\n",
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  // A cancelled canceller ends the next watch at once.
  EXPECT_TRUE(client
                  ->watch(
                      resources::kConfigMaps, "default", {}, 300,
                      [](const WatchEvent&) { return true; }, &canceller)
                  .ok());
}

TEST_F(InProcessClientTest, AnEventHandlerCanEndAWatchAndABadOneIsRefused) {
  auto client = inProcessAs(certificate("admin", {"system:masters"}));
  ASSERT_TRUE(client->create(resources::kConfigMaps, "default", configMap("x")).ok());
  // onEvent returning false ends the watch, as a client that went away.
  ListParams fromStart;
  Status ended = client->watch(resources::kConfigMaps, "default", fromStart, 300,
                               [](const WatchEvent& ev) { return ev.type != "ADDED"; });
  EXPECT_TRUE(ended.ok()) << ended.toString();
  // An invalid resourceVersion: the server's 400 comes back as the Status.
  ListParams bad;
  bad.resourceVersion = "not-a-number";
  Status invalid = client->watch(resources::kConfigMaps, "default", bad, 5,
                                 [](const WatchEvent&) { return true; });
  EXPECT_EQ(invalid.code(), 400);
}

TEST_F(InProcessClientTest, AnInformerSyncsFollowsAndStops) {
  auto client = inProcessAs(certificate("system:kube-controller-manager"));
  ASSERT_TRUE(client->create(resources::kConfigMaps, "default", configMap("before")).ok());
  Informer informer(*client, resources::kConfigMaps, "default");
  informer.start();
  ASSERT_TRUE(informer.waitForSync(5s));
  EXPECT_TRUE(informer.get("default/before").has_value());
  ASSERT_TRUE(client->create(resources::kConfigMaps, "default", configMap("after")).ok());
  EXPECT_TRUE(eventually([&] { return informer.get("default/after").has_value(); }));
  const auto start = std::chrono::steady_clock::now();
  informer.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(InProcessClientTest, StopStreamsEndsTheWatchesInFlightAndStopRefusesRequests) {
  auto client = inProcessAs(certificate("system:kube-controller-manager"));
  std::atomic<int> events{0};
  auto watching = std::async(std::launch::async, [&] {
    return client->watch(resources::kConfigMaps, "default", {}, 300, [&](const WatchEvent&) {
      ++events;
      return true;
    });
  });
  ASSERT_TRUE(client->create(resources::kConfigMaps, "default", configMap("one")).ok());
  EXPECT_TRUE(eventually([&] { return events.load() >= 1; }));
  inProcess_->stopStreams();
  ASSERT_EQ(watching.wait_for(10s), std::future_status::ready);
  // As a server that closed the connection: the informer backs off and tries again.
  EXPECT_EQ(watching.get().code(), 503);
  // Requests are still served (a component stopping releases its Lease), until stop().
  EXPECT_TRUE(client->get(resources::kConfigMaps, "default", "one").ok());
  inProcess_->stop();
  EXPECT_EQ(client->get(resources::kConfigMaps, "default", "one").status().code(), 503);
  // A watch without a canceller fails at once; one with a canceller (an informer's) waits for
  // its cancel, so that informers stopped one after another neither spin nor back off meanwhile.
  EXPECT_EQ(client
                ->watch(resources::kConfigMaps, "default", {}, 300,
                        [](const WatchEvent&) { return true; })
                .code(),
            503);
  WatchCanceller canceller;
  auto waiting = std::async(std::launch::async, [&] {
    return client->watch(
        resources::kConfigMaps, "default", {}, 300, [](const WatchEvent&) { return true; },
        &canceller);
  });
  EXPECT_EQ(waiting.wait_for(100ms), std::future_status::timeout);
  canceller.cancel();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get().ok());
}

// --- fake handlers ---

TEST(InProcessServerTest, RequestsCarryTheIdentityAndTheHeadersAnHttpClientSends) {
  auto server = std::make_shared<InProcessServer>();
  http::Request seen;
  server->setHandler([&](const http::Request& req, http::ResponseWriter& w) {
    seen = req;
    w.send(http::Response::json(200, json{{"ok", true}}));
  });
  ClientConfig config;
  config.servers = "https://10.0.0.1:6443";
  config.inProcess = server;
  config.inProcessIdentity = certificate("system:kube-scheduler", {"g1", "g2"});
  RestClient client(config);
  EXPECT_EQ(client.currentUrl(), "https://10.0.0.1:6443");  // for pods/exec, which cannot go here
  ListParams p;
  p.labelSelector = "app in (a,b)";
  ASSERT_TRUE(client.list(resources::kPods, "ns 1", p).ok());
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/api/v1/namespaces/ns 1/pods");
  EXPECT_EQ(seen.param("labelSelector").value_or(""), "app in (a,b)");
  EXPECT_TRUE(seen.tls);
  ASSERT_TRUE(seen.clientCertificate.has_value());
  EXPECT_EQ(seen.clientCertificate->commonName, "system:kube-scheduler");
  EXPECT_EQ(seen.clientCertificate->organizations, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_TRUE(seen.clientCertificate->verified);
  EXPECT_EQ(seen.header("Host"), "10.0.0.1:6443");
  EXPECT_EQ(seen.header("Accept"), "application/json");
  EXPECT_EQ(seen.header("Authorization"), "");
  ASSERT_TRUE(client.create(resources::kPods, "ns", json{{"metadata", {{"name", "p"}}}}).ok());
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.header("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(seen.body)["metadata"]["name"], "p");
}

TEST(InProcessServerTest, RetryAfterIsHonouredAsOverHttp) {
  auto server = std::make_shared<InProcessServer>();
  std::atomic<int> calls{0};
  server->setHandler([&](const http::Request&, http::ResponseWriter& w) {
    if (calls++ < 2) {
      http::Response r = http::Response::error(Status::TooManyRequests("busy"));
      r.headers.emplace_back("Retry-After", "0");
      return w.send(std::move(r));
    }
    w.send(http::Response::json(200, json{{"kind", "ConfigMap"}}));
  });
  ClientConfig config;
  config.servers = "https://127.0.0.1:1";
  config.inProcess = server;
  RestClient client(config);
  auto got = client.get(resources::kConfigMaps, "default", "x");
  ASSERT_TRUE(got.ok()) << got.status().toString();
  EXPECT_EQ(calls.load(), 3);
  config.maxRetries = 0;
  calls = 0;
  RestClient noRetries(config);
  EXPECT_EQ(noRetries.get(resources::kConfigMaps, "default", "x").status().code(), 429);
}

TEST(InProcessServerTest, StreamedAnswersAreAssembledAndBrokenHandlersAnswer500) {
  auto server = std::make_shared<InProcessServer>();
  ClientConfig config;
  config.servers = "https://127.0.0.1:1";
  config.inProcess = server;
  RestClient client(config);
  // Before the handler is set: as a server that cannot be reached.
  EXPECT_EQ(client.get(resources::kPods, "", "").status().code(), 503);

  server->setHandler([](const http::Request& req, http::ResponseWriter& w) {
    if (req.path == "/throws") throw std::runtime_error("boom");
    if (req.path == "/silent") return;
    w.beginStream(200, {{"Content-Type", "application/json"}});
    w.write("{\"items\":[");
    w.write("1,2,3");
    w.write("]}");
    w.end();
  });
  auto streamed = client.request("GET", "/list");
  ASSERT_TRUE(streamed.ok());
  EXPECT_EQ((*streamed)["items"], json::array({1, 2, 3}));
  auto threw = client.request("GET", "/throws");
  EXPECT_EQ(threw.status().code(), 500);
  EXPECT_EQ(threw.status().message(), "boom");
  EXPECT_EQ(client.request("GET", "/silent").status().code(), 500);
}

TEST(InProcessServerTest, AStreamSeesItsClientGoneOnCancelWhileWaiting) {
  // A handler that waits for events as serveWatch does: it polls clientGone() between waits.
  auto server = std::make_shared<InProcessServer>();
  server->setHandler([](const http::Request&, http::ResponseWriter& w) {
    w.beginStream(200, {});
    w.write("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n");
    while (!w.clientGone()) std::this_thread::sleep_for(5ms);
    EXPECT_FALSE(w.write("{\"type\":\"ADDED\",\"object\":{}}\n"));
    w.end();
  });
  ClientConfig config;
  config.servers = "https://127.0.0.1:1";
  config.inProcess = server;
  RestClient client(config);
  WatchCanceller canceller;
  std::atomic<int> events{0};
  auto watching = std::async(std::launch::async, [&] {
    return client.watch(
        resources::kPods, "", {}, 0,
        [&](const WatchEvent&) {
          ++events;
          return true;
        },
        &canceller);
  });
  EXPECT_TRUE(eventually([&] { return events.load() == 1; }));
  canceller.cancel();
  ASSERT_EQ(watching.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(watching.get().ok());
  EXPECT_EQ(events.load(), 1);
}

// What the API server answers by handing the connection over (a pod's log, exec, attach and
// port-forward through the agent, the proxy subresources) goes over the client's URL; the rest,
// a pod named "log" included, in-process.
TEST(InProcessServerTest, ConnectionHandOversGoOverTheUrl) {
  http::Server overHttp([](const http::Request& req, http::ResponseWriter& w) {
    w.send(http::Response::json(200, json{{"via", "http"}, {"path", req.path}}));
  });
  ASSERT_TRUE(overHttp.start("127.0.0.1:0").ok());
  auto server = std::make_shared<InProcessServer>();
  server->setHandler([](const http::Request& req, http::ResponseWriter& w) {
    w.send(http::Response::json(200, json{{"via", "in-process"}, {"path", req.path}}));
  });
  ClientConfig config;
  config.servers = "http://127.0.0.1:" + std::to_string(overHttp.port());
  config.inProcess = server;
  RestClient client(config);
  auto via = [&](const std::string& path) {
    auto r = client.requestText("GET", path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status().toString();
    return r.ok() ? json::parse(*r).value("via", "") : std::string();
  };
  for (const char* path :
       {"/api/v1/namespaces/d/pods/p/log?container=function&tailLines=50",
        "/api/v1/namespaces/d/pods/p/exec?command=ls", "/api/v1/namespaces/d/pods/p/attach",
        "/api/v1/namespaces/d/pods/p/portforward", "/api/v1/nodes/node-1/proxy/metrics",
        "/api/v1/namespaces/d/services/web:80/proxy/",
        "/apis/metrics.k8s.io/v1beta1/namespaces/d/pods/p/proxy"}) {
    EXPECT_EQ(via(path), "http") << path;
  }
  for (const char* path :
       {"/api/v1/namespaces/d/pods/log", "/api/v1/namespaces/d/pods/p",
        "/api/v1/namespaces/d/pods/p/status", "/api/v1/namespaces/d/pods/p/binding",
        "/api/v1/namespaces/d/finalize", "/api/v1/nodes/proxy", "/apis/apps/v1/deployments",
        "/version", "/api/v1/namespaces/log/pods?watch=false"}) {
    EXPECT_EQ(via(path), "in-process") << path;
  }
  overHttp.stop();
}

}  // namespace
}  // namespace minik8s::client
