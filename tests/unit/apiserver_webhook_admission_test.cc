// The admission chain and the webhook plugins against a real HTTPS webhook (our own server with
// a test CA): matching rules and selectors, AdmissionReview v1 in and out, refusals worded as
// kube-apiserver words them, JSONPatch mutation, failure policies and the plugin order.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <mutex>

#include "api/scheme.h"
#include "apiserver/admission/admission_chain.h"
#include "apiserver/admission/webhook_admission.h"
#include "common/base64.h"
#include "common/http.h"
#include "common/pki.h"
#include "fake_store.h"

namespace minik8s::apiserver::admission {
namespace {

class WebhookAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = pki::createCA("webhook-ca");
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    pki::CertSpec spec;
    spec.commonName = "127.0.0.1";
    spec.ipAddresses = {"127.0.0.1"};
    spec.serverAuth = true;
    auto serving = pki::issue(ca_, spec);
    ASSERT_TRUE(serving.ok());
    server_ = std::make_unique<http::Server>(
        [this](const http::Request& req, http::ResponseWriter& w) { serve(req, w); });
    ASSERT_TRUE(server_->enableTls({serving->certPem, serving->keyPem, "", false}).ok());
    ASSERT_TRUE(server_->start("127.0.0.1:0").ok());
    registry_ = std::make_unique<Registry>(store_, api::Scheme::builtin());
  }
  void TearDown() override { server_->stop(); }

  void serve(const http::Request& req, http::ResponseWriter& w) {
    json review = json::parse(req.body);
    {
      std::lock_guard lock(mu_);
      reviews_.push_back(review);
    }
    const json& r = review["request"];
    json response = {{"uid", r["uid"]}, {"allowed", true}};
    if (req.path == "/deny") {
      response["allowed"] = false;
      response["status"] = {{"code", 403}, {"reason", "Forbidden"}, {"message", "no way"}};
    } else if (req.path == "/patch") {
      json ops = json::array({{{"op", "add"}, {"path", "/data/added"}, {"value", "yes"}}});
      response["patchType"] = "JSONPatch";
      response["patch"] = base64::encode(ops.dump());
    } else if (req.path == "/wrong-uid") {
      response["uid"] = "other";
    }
    w.send(http::Response::json(200, {{"apiVersion", "admission.k8s.io/v1"},
                                      {"kind", "AdmissionReview"},
                                      {"response", response}}));
  }

  json configuration(const std::string& kind, const std::string& path,
                     const std::string& policy = "Fail") {
    return {{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", kind},
            {"metadata", {{"name", "hooks"}}},
            {"webhooks",
             {{{"name", "hook.example.com"},
               {"clientConfig",
                {{"url", "https://127.0.0.1:" + std::to_string(server_->port()) + path},
                 {"caBundle", base64::encode(ca_.certPem)}}},
               {"rules",
                {{{"operations", {"CREATE"}},
                  {"apiGroups", {""}},
                  {"apiVersions", {"v1"}},
                  {"resources", {"configmaps"}}}}},
               {"objectSelector",
                {{"matchExpressions", {{{"key", "skip"}, {"operator", "DoesNotExist"}}}}}},
               {"admissionReviewVersions", {"v1"}},
               {"sideEffects", "None"},
               {"failurePolicy", policy},
               {"timeoutSeconds", 2}}}}};
  }

  void install(const json& config) {
    const std::string plural = config["kind"] == "MutatingWebhookConfiguration"
                                   ? "mutatingwebhookconfigurations"
                                   : "validatingwebhookconfigurations";
    const auto* info =
        api::Scheme::builtin().byResource("admissionregistration.k8s.io", "v1", plural);
    ASSERT_NE(info, nullptr);
    auto created = registry_->create(*info, "", config);
    ASSERT_TRUE(created.ok()) << created.status().message();
  }

  Status admitConfigMap(auth::AdmissionPlugin& plugin, json& cm) {
    ri_.isResourceRequest = true;
    ri_.verb = "create";
    ri_.version = "v1";
    ri_.resource = "configmaps";
    ri_.namespaceName = "default";
    ri_.info = api::Scheme::builtin().byResource("", "v1", "configmaps");
    auth::AdmissionRequest request{user_, ri_, "CREATE", nullptr, &cm, false};
    return plugin.admit(request);
  }

  json configMap(json labels = json::object()) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", "cm"}, {"namespace", "default"}, {"labels", labels}}},
            {"data", {{"a", "b"}}}};
  }

  pki::KeyAndCert ca_;
  std::unique_ptr<http::Server> server_;
  testing::FakeStore store_;
  std::unique_ptr<Registry> registry_;
  auth::UserInfo user_{"alice", "", {"devs"}, {}};
  RequestInfo ri_;
  std::mutex mu_;
  std::vector<json> reviews_;
};

TEST_F(WebhookAdmissionTest, ValidatingWebhookRefusesWithItsStatus) {
  install(configuration("ValidatingWebhookConfiguration", "/deny"));
  WebhookAdmission plugin(*registry_, WebhookAdmission::Kind::kValidating);
  json cm = configMap();
  Status s = admitConfigMap(plugin, cm);
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.message(), "admission webhook \"hook.example.com\" denied the request: no way");
  ASSERT_EQ(reviews_.size(), 1u);
  const json& r = reviews_[0]["request"];
  EXPECT_EQ(reviews_[0]["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(r["operation"], "CREATE");
  EXPECT_EQ(r["kind"], json({{"group", ""}, {"version", "v1"}, {"kind", "ConfigMap"}}));
  EXPECT_EQ(r["resource"]["resource"], "configmaps");
  EXPECT_EQ(r["namespace"], "default");
  EXPECT_EQ(r["name"], "cm");
  EXPECT_EQ(r["userInfo"]["username"], "alice");
  EXPECT_EQ(r["object"]["data"]["a"], "b");
  // objectSelector: a labelled object is not sent.
  json skipped = configMap({{"skip", "yes"}});
  EXPECT_TRUE(admitConfigMap(plugin, skipped).ok());
  EXPECT_EQ(reviews_.size(), 1u);
}

TEST_F(WebhookAdmissionTest, MutatingWebhookPatchesTheObject) {
  install(configuration("MutatingWebhookConfiguration", "/patch"));
  WebhookAdmission plugin(*registry_, WebhookAdmission::Kind::kMutating);
  json cm = configMap();
  ASSERT_TRUE(admitConfigMap(plugin, cm).ok());
  EXPECT_EQ(cm["data"]["added"], "yes");
  // A validating webhook may not patch.
  WebhookAdmission validating(*registry_, WebhookAdmission::Kind::kValidating);
  EXPECT_TRUE(admitConfigMap(validating, cm).ok());  // no validating configuration: not called
}

TEST_F(WebhookAdmissionTest, FailurePolicies) {
  install(configuration("ValidatingWebhookConfiguration", "/wrong-uid"));
  WebhookAdmission plugin(*registry_, WebhookAdmission::Kind::kValidating);
  json cm = configMap();
  Status s = admitConfigMap(plugin, cm);
  EXPECT_EQ(s.code(), 500);
  EXPECT_NE(s.message().find("failed calling webhook \"hook.example.com\": received invalid "
                             "webhook response: expected response.uid="),
            std::string::npos)
      << s.message();

  // Ignore: a webhook that cannot be reached is skipped.
  const auto* info = api::Scheme::builtin().byResource("admissionregistration.k8s.io", "v1",
                                                       "validatingwebhookconfigurations");
  ASSERT_TRUE(registry_->remove(*info, "", "hooks", {}).ok());
  plugin.resourceWritten(*info);
  json ignore = configuration("ValidatingWebhookConfiguration", "/deny", "Ignore");
  ignore["webhooks"][0]["clientConfig"]["url"] = "https://127.0.0.1:1/deny";
  install(ignore);
  plugin.resourceWritten(*info);
  EXPECT_TRUE(admitConfigMap(plugin, cm).ok());
}

TEST(AdmissionChainTest, FixedOrderAndSelection) {
  auto names = [](const std::vector<PluginInfo>& plugins) {
    std::vector<std::string> out;
    for (const auto& p : plugins) out.push_back(p.name + (p.mutating ? "(m)" : "(v)"));
    return out;
  };
  EXPECT_EQ(names(admissionPlugins()),
            (std::vector<std::string>{"MeshSidecarInjection(m)", "ServiceAccount(m)",
                                      "DefaultStorageClass(m)", "StorageObjectInUseProtection(m)",
                                      "MutatingAdmissionWebhook(m)", "LimitRanger(m)",
                                      "NodeRestriction(v)", "PodSecurity(v)",
                                      "ValidatingAdmissionWebhook(v)", "ResourceQuota(v)"}));
  EXPECT_EQ(selectAdmissionPlugins({}, {"NodeRestriction", "DefaultStorageClass"}),
            (std::vector<std::string>{"MeshSidecarInjection", "ServiceAccount",
                                      "StorageObjectInUseProtection", "MutatingAdmissionWebhook",
                                      "LimitRanger", "PodSecurity", "ValidatingAdmissionWebhook",
                                      "ResourceQuota"}));
  testing::FakeStore store;
  Registry registry(store, api::Scheme::builtin());
  auto chain = buildAdmissionChain({"ValidatingAdmissionWebhook", "ServiceAccount"}, registry);
  ASSERT_TRUE(chain.ok());
  ASSERT_EQ(chain->size(), 2u);
  EXPECT_NE(dynamic_cast<WebhookAdmission*>((*chain)[1].get()), nullptr);  // order kept
  auto unknown = buildAdmissionChain({"AlwaysPullImages"}, registry);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown admission plugin \"AlwaysPullImages\""),
            std::string::npos);
}

}  // namespace
}  // namespace minik8s::apiserver::admission
