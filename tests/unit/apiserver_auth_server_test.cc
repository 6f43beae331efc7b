// API security end to end inside one process: a real ApiServer with static tokens, the Node and
// RBAC authorizers, node restriction and the bootstrap policy, driven by RestClient and by the
// real kubectl (protobuf request bodies, Kubernetes' messages).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/auth/node_restriction.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "auth_user.h"
#include "client/rest_client.h"
#include "common/base64.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/pki.h"
#include "eventually.h"
#include "in_process_api_server.h"
#include "rbac_resources.h"

namespace minik8s::apiserver {
namespace {

using namespace std::chrono_literals;

using testing::kClusterRoleBindings;
using testing::kClusterRoles;
using testing::kRoleBindings;
using testing::kRoles;
const client::Resource kCsrs{"certificates.k8s.io", "v1", "certificatesigningrequests", false};

using testing::user;

using testing::eventually;

class AuthServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        server_
            .start(
                [](Registry& registry, ApiServerOptions& options) {
                  options.tokenAuthenticators = {std::make_shared<auth::StaticTokenAuthenticator>(
                      std::map<std::string, auth::UserInfo>{
                          {"admin-token", user("kubernetes-admin", {"system:masters"})},
                          {"alice-token", user("alice")},
                          {"n1-token", user("system:node:n1", {"system:nodes"})}})};
                  options.bearerTokens = {"abcdef.0123456789abcdef"};
                  options.allowAnonymous = false;
                  options.authorizer = std::make_shared<auth::UnionAuthorizer>(
                      std::vector<std::shared_ptr<auth::Authorizer>>{
                          std::make_shared<auth::NodeAuthorizer>(&registry),
                          auth::RbacAuthorizer::fromRegistry(registry, 100ms)});
                  options.admissionPlugins = {std::make_shared<auth::NodeRestriction>(&registry)};
                  options.caPem = "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n";
                },
                /*bootstrapPolicy=*/true)
            .ok());
    url_ = server_.url();
    dir_ = server_.dir();
  }
  void TearDown() override {
    if (tlsServer_) tlsServer_->stop();
    tlsServer_.reset();
    server_.stop();
  }

  std::unique_ptr<client::RestClient> as(const std::string& token) {
    auto c = std::make_unique<client::RestClient>(url_);
    if (!token.empty()) c->setBearerToken(token);
    return c;
  }

  // Serves the same ApiServer over TLS (kubectl sends bearer tokens only over https), with
  // client certificates verified against the test CA; writes ca.crt for kubectl.
  void startTls() {
    auto ca = pki::createCA("minik8s-test-ca");
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    pki::CertSpec serving;
    serving.commonName = "kube-apiserver";
    serving.ipAddresses = {"127.0.0.1"};
    serving.serverAuth = true;
    auto cert = pki::issue(ca_, serving);
    ASSERT_TRUE(cert.ok());
    tlsServer_ = std::make_unique<http::Server>(server_.handler());
    ASSERT_TRUE(tlsServer_->enableTls({cert->certPem, cert->keyPem, ca_.certPem, false}).ok());
    ASSERT_TRUE(tlsServer_->start("127.0.0.1:0").ok());
    tlsUrl_ = "https://127.0.0.1:" + std::to_string(tlsServer_->port());
    std::ofstream((dir_ / "ca.crt").string()) << ca_.certPem;
    std::ofstream((dir_ / "kubeconfig").string()) << "";
  }

  // Runs the real kubectl against the TLS server with `credentials` ("--token T" or client
  // certificate flags); returns its output (stdout and stderr) and sets `exitCode`.
  std::string kubectl(const std::string& credentials, const std::string& args,
                      int* exitCode = nullptr) {
    std::string cmd = "KUBECONFIG=" + (dir_ / "kubeconfig").string() + " kubectl --server " +
                      tlsUrl_ + " --certificate-authority " + (dir_ / "ca.crt").string() + " " +
                      credentials + " " + args + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return "";
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    int rc = ::pclose(p);
    if (exitCode) *exitCode = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
  }

  json grantAlice(const std::string& ns, json rules, const std::string& name = "alice") {
    auto admin = as("admin-token");
    json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                 {"kind", "Role"},
                 {"metadata", {{"name", name}}},
                 {"rules", rules}};
    EXPECT_TRUE(admin->create(kRoles, ns, role).ok());
    json binding = {
        {"apiVersion", "rbac.authorization.k8s.io/v1"},
        {"kind", "RoleBinding"},
        {"metadata", {{"name", name}}},
        {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
        {"subjects",
         json::array(
             {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", "alice"}}})}};
    auto created = admin->create(kRoleBindings, ns, binding);
    EXPECT_TRUE(created.ok()) << created.status().toString();
    return created.ok() ? *created : json();
  }

  testing::InProcessApiServer server_;
  std::filesystem::path dir_;  // the server's
  std::string url_;
  pki::KeyAndCert ca_;
  std::unique_ptr<http::Server> tlsServer_;
  std::string tlsUrl_;
};

TEST_F(AuthServerTest, UnauthenticatedRequestsGet401ExceptHealthAndCa) {
  auto anonymous = as("");
  auto list = anonymous->list(client::resources::kPods, "default");
  EXPECT_EQ(list.status().code(), 401);
  EXPECT_EQ(list.status().reason(), "Unauthorized");
  EXPECT_EQ(list.status().message(), "Unauthorized");
  EXPECT_EQ(as("wrong-token")->list(client::resources::kPods, "default").status().code(), 401);
  http::Client plain(url_);
  auto health = plain.get("/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  auto resp = plain.get("/cacerts");
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 200);
  EXPECT_NE(resp->body.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_TRUE(as("admin-token")->list(client::resources::kPods, "default").ok());
}

TEST_F(AuthServerTest, RbacDecidesWithKubernetesMessages) {
  auto alice = as("alice-token");
  auto denied = alice->list(client::resources::kPods, "default");
  EXPECT_EQ(denied.status().code(), 403);
  EXPECT_EQ(denied.status().message(),
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in "
            "the namespace \"default\"");
  grantAlice(
      "default",
      json::array({{{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}},
                   {{"verbs", {"get"}},
                    {"apiGroups", {""}},
                    {"resources", {"configmaps"}},
                    {"resourceNames", {"settings"}}}}));
  // Seen within a second of the binding's creation.
  EXPECT_TRUE(eventually([&] { return alice->list(client::resources::kPods, "default").ok(); }));
  EXPECT_EQ(alice->list(client::resources::kPods, "kube-system").status().code(), 403);
  auto admin = as("admin-token");
  for (const char* name : {"settings", "other"}) {
    ASSERT_TRUE(admin
                    ->create(client::resources::kConfigMaps, "default",
                             {{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}})
                    .ok());
  }
  EXPECT_TRUE(alice->get(client::resources::kConfigMaps, "default", "settings").ok());
  auto other = alice->get(client::resources::kConfigMaps, "default", "other");
  EXPECT_EQ(other.status().message(),
            "configmaps \"other\" is forbidden: User \"alice\" cannot get resource \"configmaps\" "
            "in API group \"\" in the namespace \"default\"");
  EXPECT_EQ(alice->list(client::resources::kConfigMaps, "default").status().code(), 403);
  // Cluster-scoped wording, and the bootstrap roles exist.
  EXPECT_EQ(alice->list(kClusterRoles, "").status().message(),
            "clusterroles.rbac.authorization.k8s.io is forbidden: User \"alice\" cannot list "
            "resource \"clusterroles\" in API group \"rbac.authorization.k8s.io\" at the cluster "
            "scope");
  EXPECT_TRUE(admin->get(kClusterRoles, "", "system:node-bootstrapper").ok());
}

TEST_F(AuthServerTest, MetricsNeedAnRbacGrantOfTheNonResourceUrl) {
  EXPECT_EQ(as("alice-token")->list(client::resources::kPods, "default").status().code(), 403);
  http::Client plain(url_);
  auto get = [&](const std::string& token) {
    auto r = plain.request("GET", "/metrics", "", {{"Authorization", "Bearer " + token}});
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : http::Response{};
  };
  EXPECT_EQ(plain.get("/metrics")->status, 401);
  http::Response denied = get("alice-token");
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(json::parse(denied.body)["message"],
            "forbidden: User \"alice\" cannot get path \"/metrics\"");
  http::Response allowed = get("admin-token");  // cluster-admin: every non-resource URL
  EXPECT_EQ(allowed.status, 200);
  std::string contentType;
  for (const auto& [k, v] : allowed.headers) {
    if (k == "Content-Type") contentType = v;
  }
  EXPECT_EQ(contentType, "text/plain; version=0.0.4; charset=utf-8");
  // Alice's refused list, with kube-apiserver's labels.
  EXPECT_NE(allowed.body.find("\napiserver_request_total{verb=\"LIST\",group=\"\",version=\"v1\","
                              "resource=\"pods\",subresource=\"\",scope=\"namespace\","
                              "component=\"apiserver\",code=\"403\"} "),
            std::string::npos)
      << allowed.body;
  EXPECT_NE(allowed.body.find("\n# TYPE apiserver_request_duration_seconds histogram\n"),
            std::string::npos);
  EXPECT_NE(allowed.body.find("\n# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  // A role granting GET /metrics (as Kubernetes' system:monitoring) lets alice scrape.
  auto admin = as("admin-token");
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "ClusterRole"},
               {"metadata", {{"name", "monitoring"}}},
               {"rules", json::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/metrics"}}}})}};
  ASSERT_TRUE(admin->create(kClusterRoles, "", role).ok());
  json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", {{"name", "monitoring"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"},
        {"kind", "ClusterRole"},
        {"name", "monitoring"}}},
      {"subjects",
       json::array(
           {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", "alice"}}})}};
  ASSERT_TRUE(admin->create(kClusterRoleBindings, "", binding).ok());
  EXPECT_TRUE(eventually([&] { return get("alice-token").status == 200; }));
}

TEST_F(AuthServerTest, RoleRefIsImmutable) {
  json binding = grantAlice(
      "default", json::array({{{"verbs", {"get"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}}));
  binding["roleRef"]["name"] = "someone-else";
  auto updated = as("admin-token")->update(kRoleBindings, binding);
  EXPECT_EQ(updated.status().code(), 422);
  EXPECT_NE(updated.status().message().find("cannot change roleRef"), std::string::npos);
}

TEST_F(AuthServerTest, Reviews) {
  auto alice = as("alice-token");
  json review = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SelfSubjectAccessReview"},
                 {"spec",
                  {{"resourceAttributes",
                    {{"namespace", "default"}, {"verb", "list"}, {"resource", "pods"}}}}}};
  auto answer = alice->request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                               review.dump());
  ASSERT_TRUE(answer.ok()) << answer.status().toString();
  EXPECT_EQ((*answer)["status"]["allowed"], false);
  EXPECT_EQ((*answer)["kind"], "SelfSubjectAccessReview");

  auto whoami =
      alice->request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                     R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_TRUE(whoami.ok()) << whoami.status().toString();
  EXPECT_EQ((*whoami)["status"]["userInfo"]["username"], "alice");
  EXPECT_EQ((*whoami)["status"]["userInfo"]["groups"], json::array({"system:authenticated"}));

  // SubjectAccessReview and TokenReview: admin only.
  json sar = {{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SubjectAccessReview"},
              {"spec",
               {{"user", "bob"},
                {"groups", {"system:masters"}},
                {"resourceAttributes", {{"verb", "delete"}, {"resource", "nodes"}}}}}};
  EXPECT_EQ(alice->request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar.dump())
                .status()
                .code(),
            403);
  auto admin = as("admin-token");
  auto sarAnswer =
      admin->request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar.dump());
  ASSERT_TRUE(sarAnswer.ok()) << sarAnswer.status().toString();
  EXPECT_EQ((*sarAnswer)["status"]["allowed"], true);
  json noSpec = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SubjectAccessReview"},
                 {"spec", {{"user", "bob"}}}};
  EXPECT_EQ(
      admin->request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", noSpec.dump())
          .status()
          .code(),
      422);

  json tr = {{"apiVersion", "authentication.k8s.io/v1"},
             {"kind", "TokenReview"},
             {"spec", {{"token", "abcdef.0123456789abcdef"}}}};
  auto trAnswer = admin->request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", tr.dump());
  ASSERT_TRUE(trAnswer.ok()) << trAnswer.status().toString();
  EXPECT_EQ((*trAnswer)["status"]["authenticated"], true);
  EXPECT_EQ((*trAnswer)["status"]["user"]["username"], "system:bootstrap:abcdef");
  tr["spec"]["token"] = "nope";
  EXPECT_EQ(admin->request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", tr.dump())
                ->value("/status/authenticated"_json_pointer, true),
            false);

  json local = {
      {"apiVersion", "authorization.k8s.io/v1"},
      {"kind", "LocalSubjectAccessReview"},
      {"spec",
       {{"user", "alice"},
        {"resourceAttributes", {{"namespace", "other"}, {"verb", "get"}, {"resource", "pods"}}}}}};
  EXPECT_EQ(admin
                ->request("POST",
                          "/apis/authorization.k8s.io/v1/namespaces/default/"
                          "localsubjectaccessreviews",
                          local.dump())
                .status()
                .code(),
            422);

  grantAlice("default",
             json::array({{{"verbs", {"list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}}));
  EXPECT_TRUE(eventually([&] {
    auto a = alice->request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                            review.dump());
    return a.ok() && (*a)["status"]["allowed"] == true;
  }));
  json rules = {{"apiVersion", "authorization.k8s.io/v1"},
                {"kind", "SelfSubjectRulesReview"},
                {"spec", {{"namespace", "default"}}}};
  auto rulesAnswer =
      alice->request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", rules.dump());
  ASSERT_TRUE(rulesAnswer.ok()) << rulesAnswer.status().toString();
  bool listsPods = false;
  for (const auto& r : (*rulesAnswer)["status"]["resourceRules"]) {
    if (r["resources"] == json::array({"pods"}) && r["verbs"] == json::array({"list"})) {
      listsPods = true;
    }
  }
  EXPECT_TRUE(listsPods) << rulesAnswer->dump();
  EXPECT_FALSE((*rulesAnswer)["status"]["nonResourceRules"].empty());  // system:discovery
}

TEST_F(AuthServerTest, NodesAreRestrictedToTheirOwnObjects) {
  auto n1 = as("n1-token");
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}};
  auto created = n1->create(client::resources::kNodes, "", node);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  node["metadata"]["name"] = "n2";
  auto other = n1->create(client::resources::kNodes, "", node);
  EXPECT_EQ(other.status().code(), 403);
  EXPECT_EQ(other.status().message(),
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"");
  auto labelled =
      n1->patch(client::resources::kNodes, "", "n1",
                {{"metadata", {{"labels", {{"node-restriction.kubernetes.io/x", "y"}}}}}});
  EXPECT_EQ(labelled.status().code(), 403);
  EXPECT_TRUE(
      n1->patch(client::resources::kNodes, "", "n1", {{"metadata", {{"labels", {{"team", "a"}}}}}})
          .ok());

  auto admin = as("admin-token");
  for (const char* name : {"mine", "theirs"}) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"nodeName", std::string(name) == "mine" ? "n1" : "n2"},
                  {"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
    ASSERT_TRUE(admin->create(client::resources::kPods, "default", pod).ok());
  }
  json status = {{"status", {{"phase", "Running"}}}};
  EXPECT_TRUE(
      n1->patch(client::resources::kPods, "default", "mine", status, "merge", "status").ok());
  auto theirs = n1->patch(client::resources::kPods, "default", "theirs", status, "merge", "status");
  EXPECT_EQ(theirs.status().code(), 403);
  EXPECT_EQ(theirs.status().message(),
            "pods \"theirs\" is forbidden: node \"n1\" can only update pod status for pods with "
            "spec.nodeName set to itself");
  // RBAC gives nodes nothing here: a Deployment is out of reach (node authorizer: no opinion).
  EXPECT_EQ(
      n1->list(client::Resource{"apps", "v1", "deployments", true}, "default").status().code(),
      403);
}

TEST_F(AuthServerTest, CsrCreateRecordsRequesterAndApprovalSetsConditions) {
  auto boot = as("abcdef.0123456789abcdef");
  const std::string pem =
      "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
  // base64 of `pem`, computed by the shell-free way: the server only checks the PEM block.
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  for (size_t i = 0; i < pem.size(); i += 3) {
    uint32_t n = uint8_t(pem[i]) << 16;
    if (i + 1 < pem.size()) n |= uint8_t(pem[i + 1]) << 8;
    if (i + 2 < pem.size()) n |= uint8_t(pem[i + 2]);
    b64.push_back(t[(n >> 18) & 63]);
    b64.push_back(t[(n >> 12) & 63]);
    b64.push_back(i + 1 < pem.size() ? t[(n >> 6) & 63] : '=');
    b64.push_back(i + 2 < pem.size() ? t[n & 63] : '=');
  }
  json csr = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", "node-csr-n1"}}},
              {"spec",
               {{"request", b64},
                {"signerName", "kubernetes.io/kube-apiserver-client-kubelet"},
                {"usages", {"digital signature", "client auth"}},
                {"username", "someone-else"}}}};
  auto created = boot->create(kCsrs, "", csr);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ((*created)["spec"]["username"], "system:bootstrap:abcdef");
  EXPECT_EQ((*created)["spec"]["groups"],
            json::array({"system:bootstrappers", "system:authenticated"}));
  // Bootstrappers cannot approve their own request.
  json approved = *created;
  approved["status"]["conditions"] = json::array(
      {{{"type", "Approved"}, {"status", "True"}, {"reason", "Test"}, {"message", "ok"}}});
  EXPECT_EQ(boot->update(kCsrs, approved, "approval").status().code(), 403);
  auto done = as("admin-token")->update(kCsrs, approved, "approval");
  ASSERT_TRUE(done.ok()) << done.status().toString();
  EXPECT_EQ((*done)["status"]["conditions"][0]["type"], "Approved");
  EXPECT_EQ((*done)["spec"]["username"], "system:bootstrap:abcdef");
}

TEST_F(AuthServerTest, RealKubectl) {
  startTls();
  int rc = 0;
  std::string out = kubectl("--token alice-token", "auth can-i list pods -n default", &rc);
  EXPECT_EQ(out, "no\n");
  EXPECT_EQ(rc, 1);
  out = kubectl("--token alice-token", "get pods -n default", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("Error from server (Forbidden): pods is forbidden: User \"alice\" cannot "
                     "list resource \"pods\" in API group \"\" in the namespace \"default\""),
            std::string::npos)
      << out;
  out = kubectl("--token wrong-token", "get pods", &rc);
  EXPECT_NE(out.find("error: You must be logged in to the server (Unauthorized)"),
            std::string::npos)
      << out;
  out = kubectl("--token admin-token", "auth can-i '*' '*' --all-namespaces", &rc);
  EXPECT_EQ(out, "yes\n");
  // kubectl create rolebinding posts protobuf.
  out = kubectl("--token admin-token",
                "create rolebinding alice-view --clusterrole=view --user=alice -n default", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(eventually([&] {
    return kubectl("--token alice-token", "auth can-i list pods -n default") == "yes\n";
  }));
  EXPECT_EQ(kubectl("--token alice-token", "auth can-i create pods -n default"), "no\n");
  out = kubectl("--token alice-token", "auth whoami -o jsonpath={.status.userInfo.username}", &rc);
  EXPECT_EQ(out, "alice") << out;
  out = kubectl("--token alice-token", "auth can-i --list -n default", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("pods"), std::string::npos) << out;
  EXPECT_NE(out.find("selfsubjectaccessreviews.authorization.k8s.io"), std::string::npos) << out;
  // A client certificate: user CN, groups O.
  pki::CertSpec carol;
  carol.commonName = "carol";
  carol.organizations = {"system:masters"};
  carol.clientAuth = true;
  auto carolCert = pki::issue(ca_, carol);
  ASSERT_TRUE(carolCert.ok());
  std::ofstream((dir_ / "carol.crt").string()) << carolCert->certPem;
  std::ofstream((dir_ / "carol.key").string()) << carolCert->keyPem;
  const std::string carolFlags = "--client-certificate " + (dir_ / "carol.crt").string() +
                                 " --client-key " + (dir_ / "carol.key").string();
  out = kubectl(carolFlags, "auth whoami -o jsonpath={.status.userInfo.username}", &rc);
  EXPECT_EQ(out, "carol") << out;
  out = kubectl(carolFlags, "auth can-i delete nodes/n1");
  EXPECT_TRUE(out.ends_with("yes\n")) << out;

  // kubectl certificate approve: a protobuf PUT to certificatesigningrequests/approval.
  auto key = pki::generateKey();
  ASSERT_TRUE(key.ok());
  pki::CertSpec node;
  node.commonName = "system:node:n9";
  node.organizations = {"system:nodes"};
  auto csrPem = pki::createCsr(*key, node);
  ASSERT_TRUE(csrPem.ok());
  json csr = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", "node-csr-n9"}}},
              {"spec",
               {{"request", base64::encode(*csrPem)},
                {"signerName", "kubernetes.io/kube-apiserver-client-kubelet"},
                {"usages", {"digital signature", "client auth"}}}}};
  std::ofstream((dir_ / "csr.json").string()) << csr.dump();
  out = kubectl("--token admin-token", "create -f " + (dir_ / "csr.json").string(), &rc);
  EXPECT_EQ(rc, 0) << out;
  out = kubectl("--token admin-token", "certificate approve node-csr-n9", &rc);
  EXPECT_EQ(out, "certificatesigningrequest.certificates.k8s.io/node-csr-n9 approved\n");
  out = kubectl("--token admin-token",
                "get csr node-csr-n9 -o jsonpath={.status.conditions[0].type}", &rc);
  EXPECT_EQ(out, "Approved");
  out = kubectl("--token admin-token", "get clusterroles,clusterrolebindings,rolebindings -A", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("clusterrolebinding.rbac.authorization.k8s.io/cluster-admin"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace minik8s::apiserver
