// RBAC escalation prevention: the Covers rules and Kubernetes' wording alone, then an in-process
// ApiServer (static tokens, Node+RBAC authorizers, the bootstrap policy) where alice may write
// Roles and bindings but cannot grant through them what she does not hold, with RestClient and
// with the real kubectl.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/scheme.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/rbac_escalation.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "client/rest_client.h"
#include "common/http.h"
#include "common/pki.h"
#include "in_process_api_server.h"
#include "rbac_resources.h"

namespace minik8s::apiserver {
namespace {

using namespace std::chrono_literals;
using auth::PolicyRule;

using testing::kClusterRoleBindings;
using testing::kClusterRoles;
using testing::kRoleBindings;
using testing::kRoles;
const std::string kHeld = "is attempting to grant RBAC permissions not currently held:\n";

json rule(std::vector<std::string> verbs, std::vector<std::string> groups,
          std::vector<std::string> resources, std::vector<std::string> names = {}) {
  json r = {{"verbs", verbs}, {"apiGroups", groups}, {"resources", resources}};
  if (!names.empty()) r["resourceNames"] = names;
  return r;
}

json urlRule(std::vector<std::string> verbs, std::vector<std::string> urls) {
  return {{"verbs", verbs}, {"nonResourceURLs", urls}};
}

PolicyRule policy(const json& r) { return PolicyRule::fromJson(r); }

std::vector<PolicyRule> policies(const json& rules) {
  std::vector<PolicyRule> out;
  for (const auto& r : rules) out.push_back(policy(r));
  return out;
}

bool covers(const json& owner, const json& servant) {
  return auth::uncoveredRules(policies(owner), policies(servant)).empty();
}

// ---- Covers, compaction and wording, without a server ----

TEST(RbacCovers, VerbsGroupsAndResourcesWithWildcards) {
  EXPECT_TRUE(covers(json::array({rule({"get"}, {""}, {"pods"})}),
                     json::array({rule({"get"}, {""}, {"pods"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"pods"})}),
                      json::array({rule({"get", "delete"}, {""}, {"pods"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"pods"})}),
                      json::array({rule({"get"}, {"apps"}, {"pods"})})));
  EXPECT_TRUE(covers(json::array({rule({"*"}, {"*"}, {"*"})}),
                     json::array({rule({"escalate", "bind"}, {"rbac.authorization.k8s.io"},
                                       {"roles", "clusterroles"})})));
  // A wildcard is only covered by a wildcard.
  EXPECT_FALSE(covers(json::array({rule({"get", "list"}, {""}, {"pods"})}),
                      json::array({rule({"*"}, {""}, {"pods"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"pods", "services"})}),
                      json::array({rule({"get"}, {""}, {"*"})})));
  // The union of several owner rules covers a rule none covers alone.
  const json owner = json::array({rule({"get"}, {""}, {"pods"}), rule({"list"}, {""}, {"pods"}),
                                  rule({"get", "list"}, {"apps"}, {"deployments"})});
  EXPECT_TRUE(covers(owner, json::array({rule({"get", "list"}, {""}, {"pods"}),
                                         rule({"list"}, {"apps"}, {"deployments"})})));
  // A rule grants every combination of its groups and resources: "" deployments is not held.
  EXPECT_FALSE(covers(owner, json::array({rule({"get"}, {"", "apps"}, {"pods", "deployments"})})));
}

TEST(RbacCovers, SubresourcesAndResourceNames) {
  EXPECT_TRUE(covers(json::array({rule({"get"}, {""}, {"*/log"})}),
                     json::array({rule({"get"}, {""}, {"pods/log"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"*/log"})}),
                      json::array({rule({"get"}, {""}, {"pods"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"pods"})}),
                      json::array({rule({"get"}, {""}, {"pods/log"})})));
  // No names on the owner covers any name; names on the owner cover only those names.
  EXPECT_TRUE(covers(json::array({rule({"get"}, {""}, {"secrets"})}),
                     json::array({rule({"get"}, {""}, {"secrets"}, {"a", "b"})})));
  EXPECT_TRUE(covers(json::array({rule({"get"}, {""}, {"secrets"}, {"a", "b"})}),
                     json::array({rule({"get"}, {""}, {"secrets"}, {"b"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"secrets"}, {"a"})}),
                      json::array({rule({"get"}, {""}, {"secrets"}, {"a", "c"})})));
  EXPECT_FALSE(covers(json::array({rule({"get"}, {""}, {"secrets"}, {"a"})}),
                      json::array({rule({"get"}, {""}, {"secrets"})})));
}

TEST(RbacCovers, NonResourceUrlsWithTrailingStar) {
  EXPECT_TRUE(covers(json::array({urlRule({"get"}, {"/metrics"})}),
                     json::array({urlRule({"get"}, {"/metrics"})})));
  EXPECT_TRUE(covers(json::array({urlRule({"get"}, {"/apis/*"})}),
                     json::array({urlRule({"get"}, {"/apis/apps", "/apis/"})})));
  EXPECT_FALSE(covers(json::array({urlRule({"get"}, {"/apis/*"})}),
                      json::array({urlRule({"get"}, {"/api"})})));
  EXPECT_TRUE(covers(json::array({urlRule({"*"}, {"*"})}),
                     json::array({urlRule({"get", "post"}, {"/healthz", "/logs/*"})})));
  EXPECT_FALSE(covers(json::array({urlRule({"get"}, {"/healthz"})}),
                      json::array({urlRule({"post"}, {"/healthz"})})));
  // Resource rules do not cover URLs, nor URL rules resources.
  EXPECT_FALSE(covers(json::array({rule({"*"}, {"*"}, {"*"})}),
                      json::array({urlRule({"get"}, {"/metrics"})})));
  EXPECT_FALSE(
      covers(json::array({urlRule({"*"}, {"*"})}), json::array({rule({"get"}, {""}, {"pods"})})));
}

TEST(RbacCovers, MissingRulesAreCompactedSortedAndWordedLikeKubernetes) {
  auth::UserInfo alice{"alice", "", {"g1", "system:authenticated"}, {}};
  const auto owner = policies(json::array({rule({"get"}, {""}, {"pods"})}));
  EXPECT_EQ(
      auth::escalationError(alice, owner, policies(json::array({rule({"get"}, {""}, {"pods"})}))),
      "");
  const auto wanted = policies(json::array({
      rule({"get", "delete"}, {"apps", ""}, {"deployments"}),
      rule({"get"}, {""}, {"secrets"}, {"db", "web"}),
      urlRule({"get"}, {"/metrics"}),
  }));
  EXPECT_EQ(auth::escalationError(alice, owner, wanted),
            "user \"alice\" (groups=[\"g1\" \"system:authenticated\"]) " + kHeld +
                "{APIGroups:[\"\"], Resources:[\"deployments\"], Verbs:[\"get\" \"delete\"]}\n"
                "{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"db\"], "
                "Verbs:[\"get\"]}\n"
                "{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"web\"], "
                "Verbs:[\"get\"]}\n"
                "{APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"get\" \"delete\"]}\n"
                "{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}");
  auth::UserInfo nobody{"we\"ird", "", {}, {}};
  EXPECT_EQ(
      auth::escalationError(nobody, {}, policies(json::array({urlRule({"get"}, {"/x"})}))),
      "user \"we\\\"ird\" (groups=[]) " + kHeld + "{NonResourceURLs:[\"/x\"], Verbs:[\"get\"]}");
}

// ---- Through the API server ----

class RbacEscalationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_
                    .start(
                        [](Registry& registry, ApiServerOptions& options) {
                          auth::UserInfo admin{"kubernetes-admin", "", {"system:masters"}, {}};
                          options.tokenAuthenticators = {
                              std::make_shared<auth::StaticTokenAuthenticator>(
                                  std::map<std::string, auth::UserInfo>{
                                      {"admin-token", admin},
                                      {"alice-token", auth::UserInfo{"alice", "", {}, {}}},
                                      {"carol-token", auth::UserInfo{"carol", "", {}, {}}}})};
                          options.allowAnonymous = false;
                          // No staleness: what the admin grants counts for alice's next request.
                          options.authorizer = std::make_shared<auth::UnionAuthorizer>(
                              std::vector<std::shared_ptr<auth::Authorizer>>{
                                  std::make_shared<auth::NodeAuthorizer>(&registry),
                                  auth::RbacAuthorizer::fromRegistry(registry, 0ms)});
                        },
                        /*bootstrapPolicy=*/true)
                    .ok());
    url_ = server_.url();
    dir_ = server_.dir();
    admin_ = as("admin-token");
    alice_ = as("alice-token");
    for (const char* ns : {"dev", "prod"}) {
      ASSERT_TRUE(
          admin_
              ->create(client::resources::kNamespaces, "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
              .ok());
    }
  }
  void TearDown() override {
    if (tlsServer_) tlsServer_->stop();
    tlsServer_.reset();
    server_.stop();
  }

  // Runs the real kubectl as `token` against the same ApiServer served over TLS (kubectl sends
  // bearer tokens only over https); returns stdout and stderr together and sets `exitCode`.
  std::string kubectl(const std::string& token, const std::string& args, int* exitCode) {
    if (!tlsServer_) {
      auto ca = pki::createCA("minik8s-test-ca");
      EXPECT_TRUE(ca.ok());
      if (!ca.ok()) return "";
      pki::CertSpec serving;
      serving.commonName = "kube-apiserver";
      serving.ipAddresses = {"127.0.0.1"};
      serving.serverAuth = true;
      auto cert = pki::issue(*ca, serving);
      EXPECT_TRUE(cert.ok());
      if (!cert.ok()) return "";
      tlsServer_ = std::make_unique<http::Server>(server_.handler());
      EXPECT_TRUE(tlsServer_->enableTls({cert->certPem, cert->keyPem, ca->certPem, false}).ok());
      EXPECT_TRUE(tlsServer_->start("127.0.0.1:0").ok());
      std::ofstream((dir_ / "ca.crt").string()) << ca->certPem;
    }
    const std::string cmd = "kubectl --kubeconfig /dev/null --server https://127.0.0.1:" +
                            std::to_string(tlsServer_->port()) + " --certificate-authority " +
                            (dir_ / "ca.crt").string() + " --token " + token + " " + args + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return "";
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = ::pclose(p);
    *exitCode = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return out;
  }

  std::unique_ptr<client::RestClient> as(const std::string& token) {
    auto c = std::make_unique<client::RestClient>(url_);
    c->setBearerToken(token);
    return c;
  }

  static json role(const std::string& name, json rules, const std::string& kind = "Role") {
    return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", kind},
            {"metadata", {{"name", name}}},
            {"rules", std::move(rules)}};
  }

  static json binding(const std::string& name, const std::string& roleKind,
                      const std::string& roleName, const std::string& user,
                      const std::string& kind = "RoleBinding") {
    return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", kind},
            {"metadata", {{"name", name}}},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", roleKind}, {"name", roleName}}},
            {"subjects",
             json::array(
                 {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", user}}})}};
  }

  // The admin gives alice `rules` in `ns` through Role and RoleBinding `name`.
  void grantAlice(const std::string& ns, const std::string& name, json rules) {
    auto r = admin_->create(kRoles, ns, role(name, std::move(rules)));
    ASSERT_TRUE(r.ok()) << r.status().toString();
    auto b = admin_->create(kRoleBindings, ns, binding(name, "Role", name, "alice"));
    ASSERT_TRUE(b.ok()) << b.status().toString();
  }

  // alice may read and write Roles and RoleBindings in `ns`.
  void makeAliceRoleWriter(const std::string& ns) {
    grantAlice(ns, "rbac-writer",
               json::array({rule({"get", "list", "create", "update", "patch"},
                                 {"rbac.authorization.k8s.io"}, {"roles", "rolebindings"})}));
  }

  static std::string aliceGrants(const std::string& what, const std::string& name,
                                 const std::string& missing) {
    return what + ".rbac.authorization.k8s.io \"" + name +
           "\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) " + kHeld + missing;
  }

  testing::InProcessApiServer server_;
  std::filesystem::path dir_;  // the server's
  std::string url_;
  std::unique_ptr<client::RestClient> admin_, alice_;
  std::unique_ptr<http::Server> tlsServer_;
};

TEST_F(RbacEscalationTest, RoleGrantsOnlyWhatTheWriterHolds) {
  makeAliceRoleWriter("dev");
  const json getPods = json::array({rule({"get"}, {""}, {"pods"})});
  auto refused = alice_->create(kRoles, "dev", role("pod-getter", getPods));
  EXPECT_EQ(refused.status().code(), 403);
  EXPECT_EQ(refused.status().reason(), "Forbidden");
  EXPECT_EQ(refused.status().message(),
            aliceGrants("roles", "pod-getter",
                        "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}"));
  EXPECT_EQ(admin_->get(kRoles, "dev", "pod-getter").status().code(), 404);

  grantAlice("dev", "pods", getPods);
  auto created = alice_->create(kRoles, "dev", role("pod-getter", getPods));
  EXPECT_TRUE(created.ok()) << created.status().toString();

  auto deleter = alice_->create(
      kRoles, "dev", role("deleter", json::array({rule({"delete"}, {"apps"}, {"deployments"})})));
  EXPECT_EQ(deleter.status().code(), 403);
  EXPECT_EQ(deleter.status().message(),
            aliceGrants("roles", "deleter",
                        "{APIGroups:[\"apps\"], Resources:[\"deployments\"], "
                        "Verbs:[\"delete\"]}"));
  // Server-side apply creating the role is checked the same way.
  auto applied = alice_->request(
      "PATCH",
      "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles/"
      "deleter?fieldManager=test",
      role("deleter", json::array({rule({"delete"}, {"apps"}, {"deployments"})})).dump(),
      "application/apply-patch+yaml");
  EXPECT_EQ(applied.status().code(), 403);
  EXPECT_NE(applied.status().message().find(kHeld), std::string::npos);
}

TEST_F(RbacEscalationTest, KubectlShowsKubernetesRefusal) {
  makeAliceRoleWriter("dev");
  int rc = 0;
  std::string out = kubectl(
      "alice-token", "-n dev create role deleter --verb=delete --resource=deployments.apps", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("Error from server (Forbidden): " +
                     aliceGrants("roles", "deleter",
                                 "{APIGroups:[\"apps\"], Resources:[\"deployments\"], "
                                 "Verbs:[\"delete\"]}")),
            std::string::npos)
      << out;
  grantAlice("dev", "escalate",
             json::array({rule({"escalate"}, {"rbac.authorization.k8s.io"}, {"roles"})}));
  out = kubectl("alice-token",
                "-n dev create role deleter --verb=delete --resource=deployments.apps", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("role.rbac.authorization.k8s.io/deleter created"), std::string::npos) << out;
  out = kubectl("alice-token", "-n dev create rolebinding bob --role=deleter --user=bob", &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("rolebindings.rbac.authorization.k8s.io \"bob\" is forbidden: user "
                     "\"alice\""),
            std::string::npos)
      << out;
}

TEST_F(RbacEscalationTest, RulesCountOnlyInTheirNamespace) {
  // edit (a ClusterRole, with view aggregated into it) bound to alice in dev only.
  ASSERT_TRUE(
      admin_->create(kRoleBindings, "dev", binding("alice-edit", "ClusterRole", "edit", "alice"))
          .ok());
  makeAliceRoleWriter("dev");
  makeAliceRoleWriter("prod");
  const json deleteDeployments = json::array({rule({"delete"}, {"apps"}, {"deployments"})});
  EXPECT_TRUE(alice_->create(kRoles, "dev", role("deleter", deleteDeployments)).ok());
  auto prod = alice_->create(kRoles, "prod", role("deleter", deleteDeployments));
  EXPECT_EQ(prod.status().code(), 403);
  // She holds all of edit in dev, so she may bind it there, not in prod.
  auto bound =
      alice_->create(kRoleBindings, "dev", binding("bob-edit", "ClusterRole", "edit", "bob"));
  EXPECT_TRUE(bound.ok()) << bound.status().toString();
  EXPECT_EQ(alice_->create(kRoleBindings, "prod", binding("bob-edit", "ClusterRole", "edit", "bob"))
                .status()
                .code(),
            403);
  // admin has more than edit (roles and rolebindings beyond hers).
  auto admin =
      alice_->create(kRoleBindings, "dev", binding("bob-admin", "ClusterRole", "admin", "bob"));
  EXPECT_EQ(admin.status().code(), 403);
  EXPECT_NE(admin.status().message().find("rolebindings.rbac.authorization.k8s.io \"bob-admin\" "
                                          "is forbidden: user \"alice\""),
            std::string::npos);
}

TEST_F(RbacEscalationTest, EscalateVerbAllowsGrantingMore) {
  makeAliceRoleWriter("dev");
  const json deleteDeployments = json::array({rule({"delete"}, {"apps"}, {"deployments"})});
  EXPECT_EQ(alice_->create(kRoles, "dev", role("deleter", deleteDeployments)).status().code(), 403);
  // escalate limited to other names does not cover a create (the request has no name yet).
  grantAlice(
      "dev", "escalate-some",
      json::array({rule({"escalate"}, {"rbac.authorization.k8s.io"}, {"roles"}, {"deleter"})}));
  EXPECT_EQ(alice_->create(kRoles, "dev", role("deleter", deleteDeployments)).status().code(), 403);
  // escalate on clusterroles says nothing about roles.
  grantAlice("dev", "escalate-cluster",
             json::array({rule({"escalate"}, {"rbac.authorization.k8s.io"}, {"clusterroles"})}));
  EXPECT_EQ(alice_->create(kRoles, "dev", role("deleter", deleteDeployments)).status().code(), 403);
  grantAlice("dev", "escalate",
             json::array({rule({"escalate"}, {"rbac.authorization.k8s.io"}, {"roles"})}));
  auto created = alice_->create(kRoles, "dev", role("deleter", deleteDeployments));
  EXPECT_TRUE(created.ok()) << created.status().toString();
  // Escalate does not let her bind it: binding needs the rules or `bind`.
  EXPECT_EQ(alice_->create(kRoleBindings, "dev", binding("bob", "Role", "deleter", "bob"))
                .status()
                .code(),
            403);
}

TEST_F(RbacEscalationTest, BindingNeedsTheRoleRulesOrBind) {
  makeAliceRoleWriter("dev");
  ASSERT_TRUE(
      admin_
          ->create(kRoles, "dev",
                   role("deployer", json::array({rule({"delete"}, {"apps"}, {"deployments"})})))
          .ok());
  auto refused =
      alice_->create(kRoleBindings, "dev", binding("bob-deployer", "Role", "deployer", "bob"));
  EXPECT_EQ(refused.status().code(), 403);
  EXPECT_EQ(refused.status().message(),
            aliceGrants("rolebindings", "bob-deployer",
                        "{APIGroups:[\"apps\"], Resources:[\"deployments\"], "
                        "Verbs:[\"delete\"]}"));
  auto missing = alice_->create(kRoleBindings, "dev", binding("bob-nope", "Role", "nope", "bob"));
  EXPECT_EQ(missing.status().code(), 404);
  EXPECT_EQ(missing.status().message(), "roles.rbac.authorization.k8s.io \"nope\" not found");

  // `bind` on another role name does not help; on this one it does.
  grantAlice("dev", "bind-other",
             json::array({rule({"bind"}, {"rbac.authorization.k8s.io"}, {"roles"}, {"other"})}));
  EXPECT_EQ(alice_->create(kRoleBindings, "dev", binding("bob-deployer", "Role", "deployer", "bob"))
                .status()
                .code(),
            403);
  grantAlice("dev", "bind-deployer",
             json::array({rule({"bind"}, {"rbac.authorization.k8s.io"}, {"roles"}, {"deployer"})}));
  auto bound =
      alice_->create(kRoleBindings, "dev", binding("bob-deployer", "Role", "deployer", "bob"));
  EXPECT_TRUE(bound.ok()) << bound.status().toString();

  // A role she holds every rule of she may bind without `bind`.
  grantAlice("dev", "pods", json::array({rule({"get", "list"}, {""}, {"pods"})}));
  ASSERT_TRUE(
      admin_
          ->create(kRoles, "dev", role("pod-reader", json::array({rule({"get"}, {""}, {"pods"})})))
          .ok());
  auto held =
      alice_->create(kRoleBindings, "dev", binding("bob-reader", "Role", "pod-reader", "bob"));
  EXPECT_TRUE(held.ok()) << held.status().toString();
  // Changing who the binding names is an update of the binding, checked the same way.
  auto changed = *held;
  changed["subjects"][0]["name"] = "dave";
  EXPECT_TRUE(alice_->update(kRoleBindings, changed).ok());
}

TEST_F(RbacEscalationTest, ClusterRoleUpdatesAreChecked) {
  ASSERT_TRUE(admin_
                  ->create(kClusterRoles, "",
                           role("clusterrole-writer",
                                json::array({rule({"get", "list", "create", "update", "patch"},
                                                  {"rbac.authorization.k8s.io"},
                                                  {"clusterroles", "clusterrolebindings"}),
                                             rule({"get"}, {""}, {"pods"})}),
                                "ClusterRole"))
                  .ok());
  ASSERT_TRUE(admin_
                  ->create(kClusterRoleBindings, "",
                           binding("alice", "ClusterRole", "clusterrole-writer", "alice",
                                   "ClusterRoleBinding"))
                  .ok());
  auto mine = alice_->create(
      kClusterRoles, "", role("mine", json::array({rule({"get"}, {""}, {"pods"})}), "ClusterRole"));
  ASSERT_TRUE(mine.ok()) << mine.status().toString();

  json more = *mine;
  more["rules"].push_back(rule({"list"}, {""}, {"secrets"}));
  auto updated = alice_->update(kClusterRoles, more);
  EXPECT_EQ(updated.status().code(), 403);
  EXPECT_EQ(updated.status().message(),
            aliceGrants("clusterroles", "mine",
                        "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"list\"]}"));
  auto patched = alice_->patch(
      kClusterRoles, "", "mine",
      {{"rules", json::array({rule({"get"}, {""}, {"pods"}), urlRule({"get"}, {"/metrics"})})}});
  EXPECT_EQ(patched.status().code(), 403);
  EXPECT_EQ(
      patched.status().message(),
      aliceGrants("clusterroles", "mine", "{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"));
  EXPECT_EQ(admin_->get(kClusterRoles, "", "mine")->at("rules").size(), 1u);

  // An aggregationRule can gather anything: only with every permission.
  json aggregated = role("gathers", json::array(), "ClusterRole");
  aggregated["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"team", "x"}}}}})}};
  auto agg = alice_->create(kClusterRoles, "", aggregated);
  EXPECT_EQ(agg.status().code(), 403);
  EXPECT_EQ(agg.status().message(),
            "clusterroles.rbac.authorization.k8s.io \"gathers\" is forbidden: must have "
            "cluster-admin privileges to use the aggregationRule");

  // A ClusterRoleBinding counts only her cluster-wide rules.
  EXPECT_TRUE(alice_
                  ->create(kClusterRoleBindings, "",
                           binding("bob-mine", "ClusterRole", "mine", "bob", "ClusterRoleBinding"))
                  .ok());
  EXPECT_EQ(alice_
                ->create(kClusterRoleBindings, "",
                         binding("bob-view", "ClusterRole", "view", "bob", "ClusterRoleBinding"))
                .status()
                .code(),
            403);
}

TEST_F(RbacEscalationTest, UpdatesAreCheckedUnlessOnlyGarbageCollectorFieldsChange) {
  makeAliceRoleWriter("dev");
  auto big = admin_->create(
      kRoles, "dev", role("big", json::array({rule({"delete"}, {"apps"}, {"deployments"})})));
  ASSERT_TRUE(big.ok());
  // The same object back, and finalizers or ownerReferences: allowed as in Kubernetes.
  auto same = alice_->update(kRoles, *big);
  EXPECT_TRUE(same.ok()) << same.status().toString();
  auto finalizer = alice_->patch(kRoles, "dev", "big",
                                 {{"metadata", {{"finalizers", json::array({"example.com/x"})}}}});
  EXPECT_TRUE(finalizer.ok()) << finalizer.status().toString();
  // Anything else: the new object's rules must be held, changed or not.
  auto label = alice_->patch(kRoles, "dev", "big", {{"metadata", {{"labels", {{"a", "b"}}}}}});
  EXPECT_EQ(label.status().code(), 403);
  EXPECT_EQ(label.status().message(),
            aliceGrants("roles", "big",
                        "{APIGroups:[\"apps\"], Resources:[\"deployments\"], "
                        "Verbs:[\"delete\"]}"));
}

TEST_F(RbacEscalationTest, SystemMastersAndClusterAdminsGrantAnything) {
  json everything = role(
      "everything", json::array({rule({"*"}, {"*"}, {"*"}), urlRule({"*"}, {"*"})}), "ClusterRole");
  everything["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"team", "x"}}}}})}};
  EXPECT_TRUE(admin_->create(kClusterRoles, "", everything).ok());
  EXPECT_TRUE(
      admin_
          ->create(kClusterRoleBindings, "",
                   binding("carol", "ClusterRole", "cluster-admin", "carol", "ClusterRoleBinding"))
          .ok());
  // carol is not in system:masters but holds cluster-admin: she holds everything.
  auto carol = as("carol-token");
  everything["metadata"]["name"] = "everything-too";
  auto created = carol->create(kClusterRoles, "", everything);
  EXPECT_TRUE(created.ok()) << created.status().toString();
  EXPECT_TRUE(
      carol
          ->create(kClusterRoleBindings, "",
                   binding("dave", "ClusterRole", "everything-too", "dave", "ClusterRoleBinding"))
          .ok());
  EXPECT_TRUE(
      carol->create(kRoles, "dev", role("any", json::array({rule({"*"}, {"*"}, {"*"})}))).ok());
}

}  // namespace
}  // namespace minik8s::apiserver
