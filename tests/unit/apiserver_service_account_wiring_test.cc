// Service accounts through a real API server: the TokenRequest handler, the token
// authenticator and the admission plugin wired into ApiServerOptions the way `minik8s server`
// wires them, driven over HTTP with the RestClient.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "apiserver/api_server.h"
#include "apiserver/auth/service_account_admission.h"
#include "apiserver/auth/service_account_token.h"
#include "client/rest_client.h"
#include "common/pki.h"

namespace minik8s::apiserver::auth {
namespace {

namespace res = client::resources;

class ServiceAccountWiringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("minik8s-sa-wiring-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto s = storage::openStore("sqlite://" + dir + "/state.db");
    ASSERT_TRUE(s.ok());
    store = std::move(s.value());
    const std::string key = *pki::generateRsaKey();
    // The authenticator and handler read through their own Registry on the same store: the
    // ApiServer's is created inside it, after the options.
    saRegistry = std::make_unique<Registry>(*store, api::Scheme::builtin());
    auto generator = std::make_shared<ServiceAccountTokenGenerator>(kServiceAccountIssuer, key);
    ApiServerOptions options;
    options.tokenAuthenticators.push_back(std::make_shared<ServiceAccountTokenAuthenticator>(
        kServiceAccountIssuer, std::vector<std::string>{*pki::publicKeyOf(key)}, *saRegistry));
    options.createOnlyHandlers["serviceaccounts/token"] =
        makeTokenRequestHandler(*saRegistry, generator);
    options.admissionPlugins.push_back(
        std::make_shared<ServiceAccountAdmission>(*saRegistry, std::chrono::milliseconds(0)));
    api = std::make_unique<ApiServer>(*store, api::Scheme::builtin(), options);
    ASSERT_TRUE(api->start().ok());
    server = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { api->handle(req, w); });
    ASSERT_TRUE(server->start("127.0.0.1:0").ok());
    url = "http://127.0.0.1:" + std::to_string(server->port());
    rest = std::make_unique<client::RestClient>(url);
    json sa = {{"metadata", {{"name", "builder"}}}};
    ASSERT_TRUE(rest->create(res::kServiceAccounts, "default", sa).ok());
  }
  void TearDown() override {
    server->stop();
    api->stop();
    server.reset();
    api.reset();
    store.reset();
    std::filesystem::remove_all(dir);
  }
  Result<json> whoAmI(const std::string& token) {
    client::RestClient as(url);
    as.setBearerToken(token);
    json review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
    return as.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review.dump());
  }

  std::string dir, url;
  std::unique_ptr<storage::Store> store;
  std::unique_ptr<Registry> saRegistry;
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<http::Server> server;
  std::unique_ptr<client::RestClient> rest;
};

TEST_F(ServiceAccountWiringTest, CreateTokenThenCallTheApiAsTheServiceAccount) {
  json request = {{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "TokenRequest"},
                  {"spec", {{"expirationSeconds", 600}}}};
  auto out = rest->createSubresource(res::kServiceAccounts, "default", "builder", "token", request);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ((*out)["kind"], "TokenRequest");
  EXPECT_EQ((*out)["spec"]["expirationSeconds"], 600);
  const std::string token = (*out)["status"]["token"];
  ASSERT_FALSE(token.empty());

  auto me = whoAmI(token);
  ASSERT_TRUE(me.ok()) << me.status().toString();
  const json user = (*me)["status"]["userInfo"];
  EXPECT_EQ(user["username"], "system:serviceaccount:default:builder");
  EXPECT_NE(std::find(user["groups"].begin(), user["groups"].end(), "system:serviceaccounts"),
            user["groups"].end());

  // A forged token of our issuer is refused with 401, not treated as anonymous.
  std::string forged = token;
  forged[forged.size() - 3] = forged[forged.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_EQ(whoAmI(forged).status().code(), 401);

  // Deleting the account revokes the token.
  ASSERT_TRUE(rest->remove(res::kServiceAccounts, "default", "builder").ok());
  EXPECT_EQ(whoAmI(token).status().code(), 401);
}

TEST_F(ServiceAccountWiringTest, PodsGetTheirAccountAndApiAccessVolume) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "web"}}},
              {"spec",
               {{"serviceAccountName", "builder"},
                {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  auto created = rest->create(res::kPods, "default", pod);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  const json& spec = (*created)["spec"];
  ASSERT_EQ(spec["volumes"].size(), 1u);
  EXPECT_EQ(spec["volumes"][0]["name"].get<std::string>().rfind("kube-api-access-", 0), 0u);
  EXPECT_EQ(spec["containers"][0]["volumeMounts"][0]["mountPath"],
            "/var/run/secrets/kubernetes.io/serviceaccount");

  json stranger = pod;
  stranger["metadata"]["name"] = "stranger";
  stranger["spec"]["serviceAccountName"] = "ghost";
  auto refused = rest->create(res::kPods, "default", stranger);
  EXPECT_EQ(refused.status().code(), 403);
  EXPECT_NE(refused.status().message().find("serviceaccount \"ghost\" not found"),
            std::string::npos);

  // A token bound to the pod carries its name.
  json request = {{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "TokenRequest"},
                  {"spec", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "web"}}}}}};
  auto out = rest->createSubresource(res::kServiceAccounts, "default", "builder", "token", request);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  auto me = whoAmI((*out)["status"]["token"]);
  ASSERT_TRUE(me.ok()) << me.status().toString();
  EXPECT_EQ((*me)["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"],
            json::array({"web"}));
}

}  // namespace
}  // namespace minik8s::apiserver::auth
