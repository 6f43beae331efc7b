// LimitRanger and ResourceQuota in a real API server over HTTP (SQLite store): defaults on the
// stored pod, 403 Status objects, dry runs that charge nothing, and concurrent creates from many
// clients racing for the last units of a quota.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "apiserver/admission/limit_ranger.h"
#include "apiserver/admission/resource_quota_admission.h"
#include "apiserver/api_server.h"
#include "common/http_client.h"

namespace minik8s::apiserver::admission {
namespace {

const std::vector<std::pair<std::string, std::string>> kJson = {
    {"Content-Type", "application/json"}};

json podWithResources(const std::string& name, json resources = json::object()) {
  json c = {{"name", "c"}, {"image", "busybox"}};
  if (!resources.empty()) c["resources"] = resources;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", {{"containers", json::array({c})}}}};
}

class QuotaServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("minik8s-quota-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto s = storage::openStore("sqlite://" + dir + "/state.db");
    ASSERT_TRUE(s.ok());
    store = std::move(s.value());
    pluginRegistry = std::make_unique<Registry>(*store, api::Scheme::builtin());
    ApiServerOptions options;
    options.admissionPlugins = {std::make_shared<LimitRanger>(*pluginRegistry),
                                std::make_shared<ResourceQuotaAdmission>(*pluginRegistry)};
    api = std::make_unique<ApiServer>(*store, api::Scheme::builtin(), options);
    ASSERT_TRUE(api->start().ok());
    server = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { api->handle(req, w); });
    ASSERT_TRUE(server->start("127.0.0.1:0").ok());
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}};
    auto nsCreated = client().request("POST", "/api/v1/namespaces", ns.dump(), kJson);
    ASSERT_EQ(nsCreated->status, 201) << nsCreated->body;
  }
  void TearDown() override {
    server->stop();
    api->stop();
    std::filesystem::remove_all(dir);
  }
  http::Client client() {
    return http::Client("http://127.0.0.1:" + std::to_string(server->port()));
  }
  // A quota whose status the controller would have written: hard = spec.hard, used zero.
  void addQuota(json hard) {
    json quota = {{"apiVersion", "v1"},
                  {"kind", "ResourceQuota"},
                  {"metadata", {{"name", "compute"}}},
                  {"spec", {{"hard", hard}}}};
    auto created =
        client().request("POST", "/api/v1/namespaces/team/resourcequotas", quota.dump(), kJson);
    ASSERT_EQ(created->status, 201) << created->body;
    json q = json::parse(created->body);
    q["status"]["hard"] = hard;
    for (const auto& [k, v] : hard.items()) q["status"]["used"][k] = "0";
    auto put = client().request("PUT", "/api/v1/namespaces/team/resourcequotas/compute/status",
                                q.dump(), kJson);
    ASSERT_EQ(put->status, 200) << put->body;
  }
  json used() {
    auto got = client().request("GET", "/api/v1/namespaces/team/resourcequotas/compute");
    return json::parse(got->body)["status"]["used"];
  }

  std::string dir;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<Registry> pluginRegistry;
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<http::Server> server;
};

TEST_F(QuotaServerTest, LimitRangeDefaultsAndRefusalsOverHttp) {
  json lr = {{"apiVersion", "v1"},
             {"kind", "LimitRange"},
             {"metadata", {{"name", "limits"}}},
             {"spec",
              {{"limits", json::array({{{"type", "Container"},
                                        {"max", {{"cpu", "500m"}}},
                                        {"defaultRequest", {{"cpu", "100m"}}}}})}}}};
  auto created = client().request("POST", "/api/v1/namespaces/team/limitranges", lr.dump(), kJson);
  ASSERT_EQ(created->status, 201) << created->body;
  // Stored with its defaults: default from max.
  EXPECT_EQ(json::parse(created->body)["spec"]["limits"][0]["default"], (json{{"cpu", "500m"}}));
  auto p = client().request("POST", "/api/v1/namespaces/team/pods", podWithResources("web").dump(),
                            kJson);
  ASSERT_EQ(p->status, 201) << p->body;
  EXPECT_EQ(json::parse(p->body)["spec"]["containers"][0]["resources"],
            (json{{"limits", {{"cpu", "500m"}}}, {"requests", {{"cpu", "100m"}}}}));
  auto big = client().request("POST", "/api/v1/namespaces/team/pods",
                              podWithResources("big", {{"limits", {{"cpu", "1"}}}}).dump(), kJson);
  EXPECT_EQ(big->status, 403);
  json status = json::parse(big->body);
  EXPECT_EQ(status["reason"], "Forbidden");
  EXPECT_EQ(status["message"],
            "pods \"big\" is forbidden: maximum cpu usage per Container is 500m, but limit is 1");
}

TEST_F(QuotaServerTest, ConcurrentCreatesTakeExactlyTheQuota) {
  addQuota({{"pods", "3"}, {"requests.cpu", "1"}});
  // A dry run is checked but charges nothing.
  auto dry =
      client().request("POST", "/api/v1/namespaces/team/pods?dryRun=All",
                       podWithResources("dry", {{"requests", {{"cpu", "100m"}}}}).dump(), kJson);
  ASSERT_EQ(dry->status, 201) << dry->body;
  EXPECT_EQ(used(), (json{{"pods", "0"}, {"requests.cpu", "0"}}));

  std::atomic<int> created{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      http::Client c = client();
      for (int i = 0; i < 2; ++i) {
        json p = podWithResources("p" + std::to_string(t) + "-" + std::to_string(i),
                                  {{"requests", {{"cpu", "100m"}}}});
        auto r = c.request("POST", "/api/v1/namespaces/team/pods", p.dump(), kJson);
        if (r.ok() && r->status == 201) {
          created++;
        } else if (r.ok() && r->status == 403) {
          refused++;
          EXPECT_NE(r->body.find("exceeded quota: compute, requested: pods=1, used: pods=3, "
                                 "limited: pods=3"),
                    std::string::npos)
              << r->body;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 3);
  EXPECT_EQ(refused.load(), 9);
  EXPECT_EQ(used(), (json{{"pods", "3"}, {"requests.cpu", "300m"}}));
  auto list = client().request("GET", "/api/v1/namespaces/team/pods");
  EXPECT_EQ(json::parse(list->body)["items"].size(), 3u);
}

}  // namespace
}  // namespace minik8s::apiserver::admission
