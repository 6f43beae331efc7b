// Pure pieces of API security: RBAC rule matching, the node authorizer, 403 wording, static
// token files, node restriction admission, and validation of RBAC and CSR objects.
#include <gtest/gtest.h>

#include "api/scheme.h"
#include "api/validation.h"
#include "apiserver/auth/authentication.h"
#include "apiserver/auth/authorization.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/node_authorizer.h"
#include "apiserver/auth/node_restriction.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/static_token_authenticator.h"
#include "auth_user.h"

namespace minik8s::apiserver::auth {
namespace {

using testing::user;

Attributes resource(const UserInfo& u, const std::string& verb, const std::string& group,
                    const std::string& res, const std::string& ns, const std::string& name = "",
                    const std::string& sub = "") {
  Attributes a;
  a.user = u;
  a.verb = verb;
  a.resourceRequest = true;
  a.apiGroup = group;
  a.apiVersion = "v1";
  a.resource = res;
  a.subresource = sub;
  a.namespaceName = ns;
  a.name = name;
  return a;
}

Attributes path(const UserInfo& u, const std::string& verb, const std::string& p) {
  Attributes a;
  a.user = u;
  a.verb = verb;
  a.path = p;
  return a;
}

json role(const std::string& kind, const std::string& ns, const std::string& name, json rules) {
  json r = {{"kind", kind}, {"metadata", {{"name", name}}}, {"rules", rules}};
  if (!ns.empty()) r["metadata"]["namespace"] = ns;
  return r;
}

json bindingOf(const std::string& ns, const std::string& name, const std::string& roleKind,
               const std::string& roleName, json subjects) {
  json b = {{"metadata", {{"name", name}}},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", roleKind}, {"name", roleName}}},
            {"subjects", subjects}};
  if (!ns.empty()) b["metadata"]["namespace"] = ns;
  return b;
}

json subj(const std::string& kind, const std::string& name, const std::string& ns = "") {
  json s = {{"kind", kind}, {"name", name}};
  if (!ns.empty()) s["namespace"] = ns;
  return s;
}

TEST(PolicyRuleTest, MatchesVerbsGroupsResourcesAndNames) {
  auto alice = user("alice");
  PolicyRule r = PolicyRule::fromJson(
      {{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods", "pods/log"}}});
  EXPECT_TRUE(r.allows(resource(alice, "get", "", "pods", "default", "web")));
  EXPECT_TRUE(r.allows(resource(alice, "list", "", "pods", "default")));
  EXPECT_FALSE(r.allows(resource(alice, "delete", "", "pods", "default", "web")));
  EXPECT_FALSE(r.allows(resource(alice, "get", "apps", "pods", "default", "web")));
  EXPECT_TRUE(r.allows(resource(alice, "get", "", "pods", "default", "web", "log")));
  EXPECT_FALSE(r.allows(resource(alice, "get", "", "pods", "default", "web", "exec")));

  PolicyRule named = PolicyRule::fromJson({{"verbs", {"get", "list"}},
                                           {"apiGroups", {""}},
                                           {"resources", {"configmaps"}},
                                           {"resourceNames", {"settings"}}});
  EXPECT_TRUE(named.allows(resource(alice, "get", "", "configmaps", "d", "settings")));
  EXPECT_FALSE(named.allows(resource(alice, "get", "", "configmaps", "d", "other")));
  EXPECT_FALSE(named.allows(resource(alice, "list", "", "configmaps", "d")));

  PolicyRule wild =
      PolicyRule::fromJson({{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}});
  EXPECT_TRUE(wild.allows(resource(alice, "deletecollection", "apps", "deployments", "x")));
  EXPECT_TRUE(wild.allows(resource(alice, "update", "apps", "deployments", "x", "d", "scale")));
  EXPECT_FALSE(wild.allows(path(alice, "get", "/healthz")));

  PolicyRule anyScale = PolicyRule::fromJson(
      {{"verbs", {"update"}}, {"apiGroups", {"apps"}}, {"resources", {"*/scale"}}});
  EXPECT_TRUE(anyScale.allows(resource(alice, "update", "apps", "deployments", "x", "d", "scale")));
  EXPECT_FALSE(anyScale.allows(resource(alice, "update", "apps", "deployments", "x", "d")));

  PolicyRule urls =
      PolicyRule::fromJson({{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz", "/apis/*"}}});
  EXPECT_TRUE(urls.allows(path(alice, "get", "/healthz")));
  EXPECT_FALSE(urls.allows(path(alice, "get", "/healthz/etcd")));
  EXPECT_TRUE(urls.allows(path(alice, "get", "/apis/apps/v1")));
  EXPECT_FALSE(urls.allows(path(alice, "post", "/apis/apps/v1")));
  EXPECT_FALSE(urls.allows(resource(alice, "get", "", "pods", "d")));
}

TEST(RbacPolicyTest, BindingsGrantInTheirScope) {
  json readPods =
      json::array({{{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}});
  RbacPolicy policy(
      {role("ClusterRole", "", "pod-reader", readPods)},
      {role("Role", "team", "cm-writer",
            json::array(
                {{{"verbs", {"create"}}, {"apiGroups", {""}}, {"resources", {"configmaps"}}}}))},
      {bindingOf("", "ops-read", "ClusterRole", "pod-reader", json::array({subj("Group", "ops")}))},
      {bindingOf("team", "alice-read", "ClusterRole", "pod-reader",
                 json::array({subj("User", "alice")})),
       bindingOf("team", "sa-write", "Role", "cm-writer",
                 json::array({subj("ServiceAccount", "builder")})),
       bindingOf("other", "dangling", "Role", "cm-writer", json::array({subj("User", "alice")}))});

  auto alice = user("alice");
  auto bob = user("bob", {"ops"});
  auto sa = user("system:serviceaccount:team:builder");
  EXPECT_TRUE(policy.authorize(resource(alice, "list", "", "pods", "team")).allowed());
  EXPECT_FALSE(policy.authorize(resource(alice, "list", "", "pods", "default")).allowed());
  EXPECT_FALSE(policy.authorize(resource(alice, "list", "", "pods", "")).allowed());
  EXPECT_TRUE(policy.authorize(resource(bob, "list", "", "pods", "")).allowed());
  EXPECT_TRUE(policy.authorize(resource(bob, "get", "", "pods", "anywhere", "x")).allowed());
  EXPECT_TRUE(policy.authorize(resource(sa, "create", "", "configmaps", "team")).allowed());
  EXPECT_FALSE(policy.authorize(resource(sa, "create", "", "configmaps", "other")).allowed());
  // A RoleBinding to a Role of another namespace grants nothing (the Role must be its own).
  EXPECT_FALSE(policy.authorize(resource(alice, "create", "", "configmaps", "other")).allowed());
  auto decision = policy.authorize(resource(alice, "list", "", "pods", "team"));
  EXPECT_EQ(decision.reason, "RBAC: allowed by RoleBinding of ClusterRole \"pod-reader\"");
  EXPECT_EQ(policy.rulesFor(alice, "team").size(), 1u);
  EXPECT_EQ(policy.rulesFor(alice, "default").size(), 0u);
}

TEST(RbacPolicyTest, AggregatedClusterRolesGatherLabelledRules) {
  json agg = role("ClusterRole", "", "monitoring", json::array());
  agg["aggregationRule"] = {
      {"clusterRoleSelectors",
       json::array({{{"matchLabels", {{"aggregate-to-monitoring", "true"}}}}})}};
  json part = role("ClusterRole", "", "metrics-reader",
                   json::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/metrics"}}}}));
  part["metadata"]["labels"] = {{"aggregate-to-monitoring", "true"}};
  RbacPolicy policy(
      {agg, part}, {},
      {bindingOf("", "m", "ClusterRole", "monitoring", json::array({subj("User", "prom")}))}, {});
  EXPECT_TRUE(policy.authorize(path(user("prom"), "get", "/metrics")).allowed());
  EXPECT_FALSE(policy.authorize(path(user("prom"), "get", "/debug")).allowed());
}

TEST(RbacAuthorizerTest, ReloadsAfterStaleness) {
  int loads = 0;
  bool granted = false;
  RbacAuthorizer rbac(
      [&]() -> Result<RbacPolicy> {
        ++loads;
        json rules =
            json::array({{{"verbs", {"get"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}});
        std::vector<json> bindings;
        if (granted) {
          bindings.push_back(
              bindingOf("", "b", "ClusterRole", "r", json::array({subj("User", "alice")})));
        }
        return RbacPolicy({role("ClusterRole", "", "r", rules)}, {}, bindings, {});
      },
      std::chrono::milliseconds(50));
  auto a = resource(user("alice"), "get", "", "pods", "d", "p");
  EXPECT_FALSE(rbac.authorize(a).allowed());
  granted = true;
  EXPECT_FALSE(rbac.authorize(a).allowed());  // cached
  EXPECT_EQ(loads, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_TRUE(rbac.authorize(a).allowed());
  EXPECT_EQ(loads, 2);
}

TEST(ForbiddenTest, KubernetesWording) {
  auto alice = user("alice");
  Status s = forbidden(resource(alice, "list", "", "pods", "default"));
  EXPECT_EQ(s.code(), 403);
  EXPECT_EQ(s.reason(), "Forbidden");
  EXPECT_EQ(s.message(),
            "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in "
            "the namespace \"default\"");
  EXPECT_EQ(forbidden(resource(alice, "get", "apps", "deployments", "", "web")).message(),
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot get resource "
            "\"deployments\" in API group \"apps\" at the cluster scope");
  EXPECT_EQ(forbidden(resource(alice, "get", "", "pods", "d", "web", "log"), "no way").message(),
            "pods \"web\" is forbidden: User \"alice\" cannot get resource \"pods/log\" in API "
            "group \"\" in the namespace \"d\": no way");
  EXPECT_EQ(forbidden(path(alice, "get", "/metrics")).message(),
            "forbidden: User \"alice\" cannot get path \"/metrics\"");
  EXPECT_EQ(s.toJson()["details"]["kind"], "pods");
}

TEST(UnionAuthorizerTest, FirstDecisionWins) {
  struct Fixed : Authorizer {
    Decision d;
    explicit Fixed(Decision x) : d(std::move(x)) {}
    Decision authorize(const Attributes&) const override { return d; }
  };
  auto a = resource(user("u"), "get", "", "pods", "d");
  UnionAuthorizer denyFirst({std::make_shared<Fixed>(Decision::noOpinion("first")),
                             std::make_shared<Fixed>(Decision::deny("no")),
                             std::make_shared<Fixed>(Decision::allow())});
  EXPECT_EQ(denyFirst.authorize(a).kind, Decision::Kind::kDeny);
  UnionAuthorizer none({std::make_shared<Fixed>(Decision::noOpinion("first")),
                        std::make_shared<Fixed>(Decision::noOpinion("second"))});
  EXPECT_EQ(none.authorize(a).reason, "first, second");
  EXPECT_TRUE(none.rulesFor(user("u"), "d").incomplete);
}

TEST(NodeAuthorizerTest, KubeletPermissions) {
  NodeAuthorizer nodes;
  auto n1 = user("system:node:n1", {"system:nodes", "system:authenticated"});
  EXPECT_TRUE(nodes.authorize(resource(n1, "watch", "", "pods", "")).allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "patch", "", "pods", "d", "p", "status")).allowed());
  EXPECT_FALSE(nodes.authorize(resource(n1, "update", "", "pods", "d", "p")).allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "patch", "", "nodes", "", "n1", "status")).allowed());
  auto other = nodes.authorize(resource(n1, "patch", "", "nodes", "", "n2", "status"));
  EXPECT_FALSE(other.allowed());
  EXPECT_EQ(other.reason, "node 'n1' cannot modify node 'n2'");
  EXPECT_TRUE(nodes
                  .authorize(resource(n1, "update", "coordination.k8s.io", "leases",
                                      "kube-node-lease", "n1"))
                  .allowed());
  EXPECT_FALSE(nodes
                   .authorize(resource(n1, "update", "coordination.k8s.io", "leases",
                                       "kube-node-lease", "n2"))
                   .allowed());
  EXPECT_FALSE(
      nodes.authorize(resource(n1, "update", "coordination.k8s.io", "leases", "default", "n1"))
          .allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "create", "", "events", "d")).allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "get", "", "secrets", "d", "s")).allowed());
  EXPECT_FALSE(nodes.authorize(resource(n1, "create", "", "secrets", "d")).allowed());
  EXPECT_TRUE(nodes
                  .authorize(resource(n1, "create", "certificates.k8s.io",
                                      "certificatesigningrequests", ""))
                  .allowed());
  EXPECT_FALSE(nodes.authorize(resource(n1, "delete", "apps", "deployments", "d", "x")).allowed());
  // The node-local CSI provisioner: classes read, volumes created and deleted (admission checks
  // which), never updated.
  EXPECT_TRUE(
      nodes.authorize(resource(n1, "watch", "storage.k8s.io", "storageclasses", "")).allowed());
  EXPECT_FALSE(
      nodes.authorize(resource(n1, "create", "storage.k8s.io", "storageclasses", "")).allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "create", "", "persistentvolumes", "")).allowed());
  EXPECT_TRUE(nodes.authorize(resource(n1, "delete", "", "persistentvolumes", "", "pv")).allowed());
  EXPECT_FALSE(
      nodes.authorize(resource(n1, "update", "", "persistentvolumes", "", "pv")).allowed());
  EXPECT_FALSE(
      nodes.authorize(resource(n1, "update", "", "persistentvolumeclaims", "d", "c")).allowed());
  EXPECT_TRUE(
      nodes.authorize(resource(n1, "create", "storage.k8s.io", "csinodes", "", "")).allowed());
  EXPECT_TRUE(
      nodes.authorize(resource(n1, "update", "storage.k8s.io", "csinodes", "", "n1")).allowed());
  EXPECT_FALSE(
      nodes.authorize(resource(n1, "update", "storage.k8s.io", "csinodes", "", "n2")).allowed());
  // Not a node: no opinion at all; a node-like name without the group is not a node either.
  EXPECT_EQ(nodes.authorize(resource(user("alice"), "get", "", "pods", "d")).kind,
            Decision::Kind::kNoOpinion);
  EXPECT_FALSE(nodes.authorize(resource(user("system:node:n1"), "get", "", "pods", "d")).allowed());
}

TEST(StaticTokenTest, ParsesTokenFileAndBootstrapUsers) {
  auto users = StaticTokenAuthenticator::parseTokenFile(
      "# comment\n"
      "t1,alice,1001,\"dev,ops\"\n"
      "\n"
      "t2,bob\n");
  ASSERT_TRUE(users.ok()) << users.status().toString();
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ(users->at("t1").name, "alice");
  EXPECT_EQ(users->at("t1").uid, "1001");
  EXPECT_EQ(users->at("t1").groups, (std::vector<std::string>{"dev", "ops"}));
  EXPECT_TRUE(users->at("t2").groups.empty());
  EXPECT_FALSE(StaticTokenAuthenticator::parseTokenFile("onlytoken\n").ok());
  EXPECT_FALSE(StaticTokenAuthenticator::parseTokenFile("a,b\na,c\n").ok());

  TokenAuthenticators chain = {
      std::make_shared<StaticTokenAuthenticator>(*users),
      std::make_shared<StaticTokenAuthenticator>(
          StaticTokenAuthenticator::bootstrapUsers({"abcdef.0123456789abcdef"}))};
  auto alice = authenticateToken("t1", chain);
  ASSERT_TRUE(alice.ok());
  EXPECT_TRUE(alice->inGroup("system:authenticated"));
  auto boot = authenticateToken("abcdef.0123456789abcdef", chain);
  ASSERT_TRUE(boot.ok());
  EXPECT_EQ(boot->name, "system:bootstrap:abcdef");
  EXPECT_TRUE(boot->inGroup("system:bootstrappers"));
  auto wrong = authenticateToken("nope", chain);
  EXPECT_EQ(wrong.status().code(), 401);
  EXPECT_EQ(wrong.status().message(), "Unauthorized");
}

TEST(AuthenticationTest, CertificateTokenAnonymous) {
  TokenAuthenticators chain = {std::make_shared<StaticTokenAuthenticator>(
      std::map<std::string, UserInfo>{{"t", user("alice")}})};
  http::Request req;
  req.clientCertificate = http::PeerCertificate{"system:node:n1", {"system:nodes"}};
  auto fromCert = authenticateRequest(req, chain, false);
  ASSERT_TRUE(fromCert.ok());
  EXPECT_EQ(fromCert->name, "system:node:n1");
  EXPECT_EQ(fromCert->groups, (std::vector<std::string>{"system:nodes", "system:authenticated"}));

  http::Request bearer;
  bearer.headers["Authorization"] = "Bearer t";
  EXPECT_EQ(authenticateRequest(bearer, chain, false)->name, "alice");
  bearer.headers["Authorization"] = "Bearer wrong";
  EXPECT_EQ(authenticateRequest(bearer, chain, true).status().code(), 401);

  http::Request none;
  EXPECT_EQ(authenticateRequest(none, chain, false).status().reason(), "Unauthorized");
  auto anon = authenticateRequest(none, chain, true);
  ASSERT_TRUE(anon.ok());
  EXPECT_EQ(anon->name, "system:anonymous");
  EXPECT_EQ(anon->groups, (std::vector<std::string>{"system:unauthenticated"}));
}

struct AdmissionCase {
  NodeRestriction plugin;
  UserInfo node = user("system:node:n1", {"system:nodes"});
  RequestInfo ri;
  Status run(const std::string& op, const json* old, json* now) {
    AdmissionRequest r{node, ri, op, old, now, false};
    return plugin.admit(r);
  }
};

TEST(NodeRestrictionTest, OwnNodeAndLabels) {
  AdmissionCase c;
  c.ri.resource = "nodes";
  c.ri.verb = "create";
  json n1 = {
      {"metadata",
       {{"name", "n1"},
        {"labels",
         {{"kubernetes.io/hostname", "n1"}, {"node.kubernetes.io/pool", "a"}, {"team", "x"}}}}}};
  EXPECT_TRUE(c.run("CREATE", nullptr, &n1).ok());
  json n2 = {{"metadata", {{"name", "n2"}}}};
  Status other = c.run("CREATE", nullptr, &n2);
  EXPECT_EQ(other.code(), 403);
  EXPECT_EQ(other.message(),
            "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\"");
  json restricted = n1;
  restricted["metadata"]["labels"]["node-restriction.kubernetes.io/trusted"] = "true";
  restricted["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = "";
  EXPECT_EQ(c.run("CREATE", nullptr, &restricted).message(),
            "nodes \"n1\" is forbidden: node \"n1\" is not allowed to set the following labels: "
            "node-restriction.kubernetes.io/trusted, node-role.kubernetes.io/control-plane");

  c.ri.verb = "patch";
  c.ri.name = "n1";
  json stored = n1;
  stored["metadata"]["labels"]["node-restriction.kubernetes.io/trusted"] = "true";
  json changed = stored;
  changed["metadata"]["labels"]["team"] = "y";  // a free label: fine
  EXPECT_TRUE(c.run("UPDATE", &stored, &changed).ok());
  changed["metadata"]["labels"].erase("node-restriction.kubernetes.io/trusted");
  EXPECT_EQ(c.run("UPDATE", &stored, &changed).code(), 403);
  json tainted = stored;
  tainted["spec"]["taints"] = json::array({{{"key", "k"}, {"effect", "NoSchedule"}}});
  EXPECT_NE(c.run("UPDATE", &stored, &tainted).message().find("not allowed to modify taints"),
            std::string::npos);
  c.ri.name = "n2";
  EXPECT_EQ(c.run("UPDATE", &stored, &changed).code(), 403);
}

TEST(NodeRestrictionTest, PodsAndLeases) {
  AdmissionCase c;
  c.ri.resource = "pods";
  c.ri.namespaceName = "default";
  c.ri.name = "p";
  json mine = {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n1"}}}};
  json theirs = {{"metadata", {{"name", "p"}}}, {"spec", {{"nodeName", "n2"}}}};
  c.ri.subresource = "status";
  EXPECT_TRUE(c.run("UPDATE", &mine, &mine).ok());
  EXPECT_EQ(c.run("UPDATE", &theirs, &theirs).message(),
            "pods \"p\" is forbidden: node \"n1\" can only update pod status for pods with "
            "spec.nodeName set to itself");
  c.ri.subresource = "";
  EXPECT_EQ(c.run("UPDATE", &mine, &mine).code(), 403);
  EXPECT_TRUE(c.run("DELETE", &mine, nullptr).ok());
  EXPECT_EQ(c.run("DELETE", &theirs, nullptr).code(), 403);
  json plain = mine;
  EXPECT_NE(c.run("CREATE", nullptr, &plain).message().find("can only create mirror pods"),
            std::string::npos);
  json mirror = mine;
  mirror["metadata"]["annotations"] = {{"kubernetes.io/config.mirror", "x"}};
  EXPECT_TRUE(c.run("CREATE", nullptr, &mirror).ok());

  c.ri = RequestInfo{};
  c.ri.group = "coordination.k8s.io";
  c.ri.resource = "leases";
  c.ri.namespaceName = "kube-node-lease";
  json lease = {{"metadata", {{"name", "n1"}}}};
  EXPECT_TRUE(c.run("CREATE", nullptr, &lease).ok());
  json otherLease = {{"metadata", {{"name", "n2"}}}};
  EXPECT_EQ(c.run("CREATE", nullptr, &otherLease).code(), 403);

  // Other users pass.
  c.node = user("alice");
  EXPECT_TRUE(c.run("CREATE", nullptr, &otherLease).ok());
}

TEST(NodeRestrictionTest, OnlyNodeLocalVolumesAndCsiNodeOfItsOwn) {
  AdmissionCase c;
  c.ri.resource = "persistentvolumes";
  auto pinnedTo = [](const std::string& node) {
    return json{{"metadata", {{"name", "pvc-1"}}},
                {"spec",
                 {{"csi", {{"driver", "local.csi.minik8s.io"}, {"volumeHandle", "pvc-1"}}},
                  {"nodeAffinity",
                   {{"required",
                     {{"nodeSelectorTerms",
                       json::array({{{"matchExpressions",
                                      json::array({{{"key", "kubernetes.io/hostname"},
                                                    {"operator", "In"},
                                                    {"values", json::array({node})}}})}}})}}}}}}}};
  };
  json mine = pinnedTo("n1");
  json theirs = pinnedTo("n2");
  json unpinned = mine;
  unpinned["spec"].erase("nodeAffinity");
  json hostPath = mine;
  hostPath["spec"].erase("csi");
  hostPath["spec"]["hostPath"] = {{"path", "/"}};
  EXPECT_TRUE(c.run("CREATE", nullptr, &mine).ok());
  EXPECT_EQ(c.run("CREATE", nullptr, &theirs).message(),
            "persistentvolumes \"pvc-1\" is forbidden: node \"n1\" can only create CSI persistent "
            "volumes whose nodeAffinity requires kubernetes.io/hostname in [n1]");
  EXPECT_EQ(c.run("CREATE", nullptr, &unpinned).code(), 403);
  EXPECT_EQ(c.run("CREATE", nullptr, &hostPath).code(), 403);
  c.ri.name = "pvc-1";
  EXPECT_TRUE(c.run("DELETE", &mine, nullptr).ok());
  EXPECT_EQ(c.run("DELETE", &theirs, nullptr).code(), 403);
  EXPECT_EQ(c.run("DELETE", &unpinned, nullptr).code(), 403);
  EXPECT_EQ(c.run("UPDATE", &mine, &mine).code(), 403);
  c.node = user("system:kube-controller-manager");
  EXPECT_TRUE(c.run("DELETE", &theirs, nullptr).ok());

  AdmissionCase csi;
  csi.ri.group = "storage.k8s.io";
  csi.ri.resource = "csinodes";
  json own = {{"metadata", {{"name", "n1"}}}};
  json other = {{"metadata", {{"name", "n2"}}}};
  EXPECT_TRUE(csi.run("CREATE", nullptr, &own).ok());
  EXPECT_EQ(csi.run("CREATE", nullptr, &other).message(),
            "csinodes.storage.k8s.io \"n2\" is forbidden: node \"n1\" is not allowed to modify "
            "csinode \"n2\"");
}

TEST(BootstrapPolicyTest, GrantsWhatKubernetesGrants) {
  std::vector<json> none;
  RbacPolicy policy(bootstrapClusterRoles(), none, bootstrapClusterRoleBindings(), none);
  auto admin = user("kubernetes-admin", {"system:masters", "system:authenticated"});
  EXPECT_TRUE(
      policy.authorize(resource(admin, "delete", "apps", "deployments", "x", "d")).allowed());
  EXPECT_TRUE(policy.authorize(path(admin, "get", "/metrics")).allowed());
  auto someone = user("alice", {"system:authenticated"});
  EXPECT_FALSE(policy.authorize(resource(someone, "list", "", "pods", "default")).allowed());
  EXPECT_TRUE(policy
                  .authorize(resource(someone, "create", "authorization.k8s.io",
                                      "selfsubjectaccessreviews", ""))
                  .allowed());
  EXPECT_TRUE(policy.authorize(path(someone, "get", "/apis/apps/v1")).allowed());
  auto anonymous = user("system:anonymous", {"system:unauthenticated"});
  EXPECT_TRUE(policy.authorize(path(anonymous, "get", "/version")).allowed());
  EXPECT_FALSE(policy.authorize(path(anonymous, "get", "/apis")).allowed());
  auto boot = user("system:bootstrap:abcdef", {"system:bootstrappers", "system:authenticated"});
  EXPECT_TRUE(policy
                  .authorize(resource(boot, "create", "certificates.k8s.io",
                                      "certificatesigningrequests", ""))
                  .allowed());
  EXPECT_FALSE(policy.authorize(resource(boot, "list", "", "secrets", "")).allowed());
  auto scheduler = user("system:kube-scheduler", {"system:authenticated"});
  EXPECT_TRUE(
      policy.authorize(resource(scheduler, "create", "", "pods", "d", "p", "binding")).allowed());
  EXPECT_FALSE(policy.authorize(resource(scheduler, "create", "", "secrets", "d")).allowed());
  // view/edit/admin are granted through bindings only.
  RbacPolicy withView(
      bootstrapClusterRoles(), none, bootstrapClusterRoleBindings(),
      {bindingOf("team", "v", "ClusterRole", "view", json::array({subj("User", "alice")}))});
  EXPECT_TRUE(withView.authorize(resource(someone, "list", "", "pods", "team")).allowed());
  EXPECT_FALSE(withView.authorize(resource(someone, "get", "", "secrets", "team", "s")).allowed());
  EXPECT_FALSE(withView.authorize(resource(someone, "create", "", "pods", "team")).allowed());
}

std::vector<std::string> problems(const std::string& group, const std::string& plural,
                                  const json& obj, const json* old = nullptr) {
  const auto* info = api::Scheme::builtin().byResource(group, "v1", plural);
  EXPECT_NE(info, nullptr) << plural;
  std::vector<std::string> out;
  if (!info) return out;
  for (const auto& c : api::validate(*info, obj, old)) out.push_back(c.field + ": " + c.message);
  return out;
}

TEST(RbacValidationTest, RulesAndBindings) {
  const std::string g = "rbac.authorization.k8s.io";
  json good = {
      {"metadata", {{"name", "system:pod-reader"}, {"namespace", "d"}}},
      {"rules", json::array({{{"verbs", {"get"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}})}};
  EXPECT_TRUE(problems(g, "roles", good).empty());
  json bad = good;
  bad["rules"] =
      json::array({{{"verbs", json::array()}, {"nonResourceURLs", {"/x"}}}, {{"verbs", {"get"}}}});
  EXPECT_EQ(problems(g, "roles", bad),
            (std::vector<std::string>{
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].nonResourceURLs: Invalid value: [\"/x\"]: namespaced rules cannot apply "
                "to non-resource URLs",
                "rules[1].apiGroups: Required value: resource rules must supply at least one api "
                "group",
                "rules[1].resources: Required value: resource rules must supply at least one "
                "resource"}));
  json cr = {{"metadata", {{"name", "c"}}},
             {"rules", json::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz"}}}})}};
  EXPECT_TRUE(problems(g, "clusterroles", cr).empty());

  json rb = {{"metadata", {{"name", "b"}, {"namespace", "d"}}},
             {"roleRef", {{"apiGroup", g}, {"kind", "Role"}, {"name", "r"}}},
             {"subjects", json::array({{{"kind", "User"}, {"apiGroup", g}, {"name", "alice"}},
                                       {{"kind", "ServiceAccount"}, {"name", "default"}}})}};
  EXPECT_TRUE(problems(g, "rolebindings", rb).empty());
  json wrongSubject = rb;
  wrongSubject["subjects"].push_back({{"kind", "Robot"}, {"name", "r2"}});
  EXPECT_EQ(problems(g, "rolebindings", wrongSubject),
            (std::vector<std::string>{"subjects[2].kind: Unsupported value: \"Robot\": supported "
                                      "values: \"ServiceAccount\", \"User\", \"Group\""}));
  json changed = rb;
  changed["roleRef"]["name"] = "other";
  auto update = problems(g, "rolebindings", changed, &rb);
  ASSERT_EQ(update.size(), 1u);
  EXPECT_NE(update[0].find("roleRef: Invalid value"), std::string::npos);
  EXPECT_NE(update[0].find("cannot change roleRef"), std::string::npos);

  json crb = {{"metadata", {{"name", "b"}}},
              {"roleRef", {{"apiGroup", g}, {"kind", "Role"}, {"name", "r"}}},
              {"subjects", json::array({{{"kind", "ServiceAccount"}, {"name", "default"}}})}};
  EXPECT_EQ(problems(g, "clusterrolebindings", crb),
            (std::vector<std::string>{
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "subjects[0].namespace: Required value"}));
}

TEST(CsrValidationTest, RequestSignerUsages) {
  // base64 of a (truncated) PEM CSR: the validator checks the PEM block type only.
  const std::string pem =
      "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
  std::string b64;
  {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 2 < pem.size(); i += 3) {
      uint32_t n = (uint8_t(pem[i]) << 16) | (uint8_t(pem[i + 1]) << 8) | uint8_t(pem[i + 2]);
      for (int k = 18; k >= 0; k -= 6) b64.push_back(t[(n >> k) & 63]);
    }
    if (i < pem.size()) {
      uint32_t n = uint8_t(pem[i]) << 16;
      if (i + 1 < pem.size()) n |= uint8_t(pem[i + 1]) << 8;
      b64.push_back(t[(n >> 18) & 63]);
      b64.push_back(t[(n >> 12) & 63]);
      b64.push_back(i + 1 < pem.size() ? t[(n >> 6) & 63] : '=');
      b64.push_back('=');
    }
  }
  json csr = {{"metadata", {{"name", "node-csr-1"}}},
              {"spec",
               {{"request", b64},
                {"signerName", "kubernetes.io/kube-apiserver-client-kubelet"},
                {"usages", {"digital signature", "client auth"}}}}};
  const std::string g = "certificates.k8s.io";
  EXPECT_TRUE(problems(g, "certificatesigningrequests", csr).empty())
      << ::testing::PrintToString(problems(g, "certificatesigningrequests", csr));
  json bad = csr;
  bad["spec"]["request"] = "aGVsbG8=";  // "hello"
  bad["spec"]["signerName"] = "nosigner";
  bad["spec"]["usages"] = {"client auth", "flying"};
  bad["spec"]["expirationSeconds"] = 60;
  EXPECT_EQ(problems(g, "certificatesigningrequests", bad).size(), 4u);
  json approvedAndDenied = csr;
  approvedAndDenied["status"]["conditions"] = json::array(
      {{{"type", "Approved"}, {"status", "True"}}, {{"type", "Denied"}, {"status", "True"}}});
  auto both = problems(g, "certificatesigningrequests", approvedAndDenied);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_NE(both[0].find("mutually exclusive"), std::string::npos);
  json noRequest = csr;
  noRequest["spec"].erase("request");
  EXPECT_EQ(problems(g, "certificatesigningrequests", noRequest),
            (std::vector<std::string>{"spec.request: Required value"}));
}

}  // namespace
}  // namespace minik8s::apiserver::auth
