// AuthorizationPolicy: parsing (field paths, what fails closed), Istio's decision order (DENY,
// then ALLOW, nothing applying allows), each kind of match, the HTTP-only fields on TCP, the
// wire form, and the sidecar's inbound listener enforcing them on real sockets (403 per HTTP
// request on a kept connection, a reset for a denied TCP connection).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "common/http.h"
#include "common/metrics.h"
#include "common/yaml_json.h"
#include "mesh/authorization_policy.h"
#include "mesh/mesh_config.h"
#include "mesh/mesh_config_wire.h"
#include "mesh/proxy/sidecar_proxy.h"
#include "mesh_scripted_backend.h"
#include "raw_exchange.h"

namespace minik8s::mesh {
namespace {

json authzYaml(const std::string& yaml) {
  auto parsed = parseYaml(yaml);
  EXPECT_TRUE(parsed.ok()) << parsed.status().toString();
  return parsed.ok() ? *parsed : json::object();
}

AuthorizationPolicy authzPolicy(const std::string& yaml) {
  auto p = parseAuthorizationPolicy(authzYaml(yaml));
  EXPECT_TRUE(p.ok()) << p.status().toString();
  return p.ok() ? *p : AuthorizationPolicy{};
}

AuthzRequest authzMtls(const std::string& principal, int port = 8080) {
  AuthzRequest r;
  r.principal = principal;
  r.sourceIp = "10.244.1.7";
  r.destinationIp = "10.244.2.9";
  r.destinationPort = port;
  return r;
}

AuthzRequest authzHttp(AuthzRequest r, std::string method, std::string path,
                       std::map<std::string, std::string> headers = {}) {
  r.http = true;
  r.method = std::move(method);
  r.path = std::move(path);
  r.host = "web.default.svc.cluster.local";
  r.header = [headers](std::string_view name) -> std::optional<std::string> {
    for (const auto& [k, v] : headers) {
      if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
    }
    return std::nullopt;
  };
  return r;
}

bool authzAllowed(const std::vector<AuthorizationPolicy>& policies, const AuthzRequest& r,
                  const std::map<std::string, std::string>& labels = {{"app", "web"}}) {
  return authorize(applicablePolicies(policies, "default", labels), r).allowed;
}

const std::string kAuthzSleep = "cluster.local/ns/default/sa/sleep";
const std::string kAuthzOther = "cluster.local/ns/other/sa/client";

TEST(AuthorizationPolicyParseTest, ErrorsNameTheField) {
  auto error = [](const std::string& yaml) {
    auto p = parseAuthorizationPolicy(authzYaml(yaml));
    return p.ok() ? std::string("ok") : p.status().message();
  };
  EXPECT_EQ(error("spec: {action: CUSTOM}"),
            "spec.action: Unsupported value: \"CUSTOM\": supported values: \"ALLOW\", \"DENY\", "
            "\"AUDIT\" (CUSTOM needs an external authorizer, not available here)");
  EXPECT_EQ(error("spec: {rules: [{from: [{source: {requestPrincipals: ['*']}}]}]}"),
            "spec.rules[0].from[0].source.requestPrincipals: not supported: JWT request "
            "principals (no RequestAuthentication here)");
  EXPECT_EQ(error("spec: {rules: [{}, {from: [{source: {ipBlocks: [10.0.0.0/33]}}]}]}"),
            "spec.rules[1].from[0].source.ipBlocks[0]: Invalid value: \"10.0.0.0/33\": want an "
            "IPv4 address or CIDR");
  EXPECT_EQ(error("spec: {rules: [{to: [{operation: {ports: ['80', http]}}]}]}"),
            "spec.rules[0].to[0].operation.ports[1]: Invalid value: \"http\": want a port "
            "number 1-65535");
  EXPECT_EQ(error("spec: {rules: [{when: [{key: 'request.auth.claims[iss]', values: [x]}]}]}"),
            "spec.rules[0].when[0].key: not supported: JWT claims (no RequestAuthentication "
            "here)");
  EXPECT_EQ(error("spec: {rules: [{when: [{key: source.user, values: [x]}]}]}").substr(0, 49),
            "spec.rules[0].when[0].key: Unsupported value: \"so");
  EXPECT_EQ(error("spec: {rules: [{when: [{key: source.ip}]}]}"),
            "spec.rules[0].when[0]: Required value: values or notValues");
  EXPECT_EQ(error("spec: {rules: [{to: [{operation: {methods: GET}}]}]}"),
            "spec.rules[0].to[0].operation.methods: must be a list of strings");
  EXPECT_EQ(error("metadata: {name: a, namespace: b}\nspec: {}"), "ok");
}

TEST(AuthorizationPolicyParseTest, WhatDoesNotParseFailsClosed) {
  std::string error;
  auto deny = authorizationPolicyOrClosed(
      authzYaml("metadata: {name: d, namespace: default}\n"
                "spec: {action: DENY, selector: {matchLabels: {app: web}}, "
                "rules: [{from: [{source: {requestPrincipals: ['*']}}]}]}"),
      &error);
  EXPECT_NE(error.find("requestPrincipals"), std::string::npos) << error;
  EXPECT_EQ(deny.action, AuthzAction::kDeny);
  EXPECT_EQ(deny.selector, (std::map<std::string, std::string>{{"app", "web"}}));
  EXPECT_FALSE(authzAllowed({deny}, authzMtls(kAuthzSleep)));
  EXPECT_TRUE(authzAllowed({deny}, authzMtls(kAuthzSleep), {{"app", "db"}}));  // selects web only

  auto allow = authorizationPolicyOrClosed(
      authzYaml("metadata: {name: a, namespace: default}\n"
                "spec: {rules: [{when: [{key: 'request.auth.claims[iss]', values: [x]}]}]}"),
      &error);
  EXPECT_EQ(allow.action, AuthzAction::kAllow);
  EXPECT_TRUE(allow.rules.empty());
  EXPECT_FALSE(authzAllowed({allow}, authzMtls(kAuthzSleep)));  // allows nothing...
  auto sleepOnly = authzPolicy(
      "metadata: {name: s, namespace: default}\n"
      "spec: {rules: [{from: [{source: {principals: [" +
      kAuthzSleep + "]}}]}]}");
  EXPECT_TRUE(authzAllowed({allow, sleepOnly}, authzMtls(kAuthzSleep)));  // ...but others still may
  EXPECT_FALSE(authzAllowed({allow, sleepOnly}, authzMtls(kAuthzOther)));
}

TEST(AuthorizationPolicyTest, IstiosDecisionOrder) {
  AuthzRequest r = authzMtls(kAuthzSleep);
  EXPECT_TRUE(authzAllowed({}, r)) << "no policy: allowed";
  auto allowNothing = authzPolicy("metadata: {name: none, namespace: default}\nspec: {}");
  EXPECT_FALSE(authzAllowed({allowNothing}, r)) << "spec: {} allows nothing";
  auto allowAll = authzPolicy("metadata: {name: all, namespace: default}\nspec: {rules: [{}]}");
  EXPECT_TRUE(authzAllowed({allowAll}, r));
  auto denyAll =
      authzPolicy("metadata: {name: deny, namespace: default}\nspec: {action: DENY, rules: [{}]}");
  EXPECT_FALSE(authzAllowed({allowAll, denyAll}, r)) << "DENY wins";
  auto denyNoRules =
      authzPolicy("metadata: {name: deny0, namespace: default}\nspec: {action: DENY}");
  EXPECT_TRUE(authzAllowed({denyNoRules}, r)) << "a DENY without rules matches nothing";
  auto audit = authzPolicy(
      "metadata: {name: audit, namespace: default}\nspec: {action: AUDIT, rules: [{}]}");
  EXPECT_TRUE(authzAllowed({audit}, r));
  EXPECT_FALSE(authzAllowed({audit, allowNothing}, r));

  auto decision = authorize(applicablePolicies({allowAll, denyAll}, "default", {}), r);
  EXPECT_EQ(decision.policy, "default/deny");
  EXPECT_EQ(decision.reason, "denied by default/deny");
  decision = authorize(applicablePolicies({allowNothing}, "default", {}), r);
  EXPECT_EQ(decision.policy, "");
  EXPECT_EQ(decision.reason, "no ALLOW policy matched");
}

TEST(AuthorizationPolicyTest, WhichPoliciesApplyToAWorkload) {
  std::vector<AuthorizationPolicy> ps = {
      authzPolicy("metadata: {name: mesh, namespace: istio-system}\nspec: {}"),
      authzPolicy("metadata: {name: web, namespace: default}\n"
                  "spec: {selector: {matchLabels: {app: web}}}"),
      authzPolicy("metadata: {name: ns, namespace: default}\nspec: {}"),
      authzPolicy("metadata: {name: elsewhere, namespace: other}\nspec: {}"),
      authzPolicy("metadata: {name: rootweb, namespace: istio-system}\n"
                  "spec: {selector: {matchLabels: {app: web}}}")};
  auto names = [&](const std::string& ns, std::map<std::string, std::string> labels) {
    std::string out;
    for (const auto* p : applicablePolicies(ps, ns, labels)) out += p->key() + " ";
    return out;
  };
  EXPECT_EQ(names("default", {{"app", "web"}}),
            "istio-system/mesh default/web default/ns istio-system/rootweb ");
  EXPECT_EQ(names("default", {{"app", "db"}}), "istio-system/mesh default/ns ");
  EXPECT_EQ(names("team", {{"app", "web"}}), "istio-system/mesh istio-system/rootweb ");
}

TEST(AuthorizationPolicyTest, SourcesByPrincipalNamespaceAndAddress) {
  auto p = authzPolicy(
      "metadata: {name: p, namespace: default}\n"
      "spec: {rules: [{from: [{source: {principals: ['cluster.local/ns/default/sa/*']}},\n"
      "                       {source: {namespaces: [other], notIpBlocks: [10.244.1.0/24]}},\n"
      "                       {source: {ipBlocks: [192.168.0.5]}}]}]}");
  EXPECT_TRUE(authzAllowed({p}, authzMtls(kAuthzSleep)));
  EXPECT_FALSE(authzAllowed({p}, authzMtls(kAuthzOther)))
      << "other's namespace, but from 10.244.1.0/24";
  AuthzRequest r = authzMtls(kAuthzOther);
  r.sourceIp = "10.244.3.3";
  EXPECT_TRUE(authzAllowed({p}, r));
  r = authzMtls("");
  r.sourceIp = "192.168.0.5";
  EXPECT_TRUE(authzAllowed({p}, r)) << "plain text from an allowed address";
  r.sourceIp = "192.168.0.6";
  EXPECT_FALSE(authzAllowed({p}, r));

  // The usual "mutual TLS only" policy: DENY when there is no principal.
  auto denyPlain = authzPolicy(
      "metadata: {name: mtls-only, namespace: default}\n"
      "spec: {action: DENY, rules: [{from: [{source: {notPrincipals: ['*']}}]}]}");
  EXPECT_FALSE(authzAllowed({denyPlain}, authzMtls("")));
  EXPECT_TRUE(authzAllowed({denyPlain}, authzMtls(kAuthzOther)));
}

TEST(AuthorizationPolicyTest, OperationsAndConditionsOnHttp) {
  auto p = authzPolicy(
      "metadata: {name: p, namespace: default}\n"
      "spec:\n"
      "  rules:\n"
      "  - to: [{operation: {methods: [GET, HEAD], paths: ['/public/*', /health],\n"
      "                      notPaths: ['/public/secret*'], hosts: ['WEB.default*']}}]\n"
      "  - to: [{operation: {methods: [POST], ports: ['8080']}}]\n"
      "    when: [{key: 'request.headers[X-User]', values: [alice, 'bob*']},\n"
      "           {key: source.namespace, notValues: [other]}]\n");
  AuthzRequest base = authzMtls(kAuthzSleep);
  EXPECT_TRUE(authzAllowed({p}, authzHttp(base, "GET", "/public/a?x=1")));
  EXPECT_TRUE(authzAllowed({p}, authzHttp(base, "HEAD", "/health")));
  EXPECT_FALSE(authzAllowed({p}, authzHttp(base, "GET", "/healthz")));
  EXPECT_FALSE(authzAllowed({p}, authzHttp(base, "GET", "/public/secret/1")));
  EXPECT_FALSE(authzAllowed({p}, authzHttp(base, "DELETE", "/public/a")));
  EXPECT_TRUE(authzAllowed({p}, authzHttp(base, "POST", "/x", {{"x-user", "bobby"}})));
  EXPECT_FALSE(authzAllowed({p}, authzHttp(base, "POST", "/x", {{"x-user", "carol"}})));
  EXPECT_FALSE(authzAllowed({p}, authzHttp(base, "POST", "/x")));
  EXPECT_FALSE(
      authzAllowed({p}, authzHttp(authzMtls(kAuthzOther), "POST", "/x", {{"x-user", "alice"}})));
  EXPECT_FALSE(authzAllowed(
      {p}, authzHttp(authzMtls(kAuthzSleep, 9090), "POST", "/x", {{"x-user", "alice"}})));
  AuthzRequest otherHost = authzHttp(base, "GET", "/public/a");
  otherHost.host = "api.example.com";
  EXPECT_FALSE(authzAllowed({p}, otherHost));

  auto ports = authzPolicy(
      "metadata: {name: q, namespace: default}\n"
      "spec: {rules: [{when: [{key: destination.port, values: ['8080']},\n"
      "                       {key: source.ip, values: [10.244.0.0/16]},\n"
      "                       {key: destination.ip, notValues: [10.244.2.1]}]}]}");
  EXPECT_TRUE(authzAllowed({ports}, authzMtls(kAuthzSleep)));
  EXPECT_FALSE(authzAllowed({ports}, authzMtls(kAuthzSleep, 8081)));
}

TEST(AuthorizationPolicyTest, HttpOnlyFieldsOnTcpAsIstioDoes) {
  auto allowGet = authzPolicy(
      "metadata: {name: get, namespace: default}\n"
      "spec: {rules: [{to: [{operation: {methods: [GET]}}]}]}");
  EXPECT_FALSE(authzAllowed({allowGet}, authzMtls(kAuthzSleep)))
      << "an ALLOW rule with methods never matches TCP";
  auto denyGetOn9000 = authzPolicy(
      "metadata: {name: deny-get, namespace: default}\n"
      "spec: {action: DENY, rules: [{to: [{operation: {methods: [GET], ports: ['9000']}}]}]}");
  EXPECT_FALSE(authzAllowed({denyGetOn9000}, authzMtls(kAuthzSleep, 9000)))
      << "a DENY rule leaves its HTTP fields out on TCP (denies more)";
  EXPECT_TRUE(authzAllowed({denyGetOn9000}, authzMtls(kAuthzSleep, 9001)));
  EXPECT_TRUE(needsHttp(applicablePolicies({allowGet}, "default", {})));
  auto byPrincipal = authzPolicy(
      "metadata: {name: p, namespace: default}\n"
      "spec: {rules: [{from: [{source: {principals: ['*']}}]}]}");
  EXPECT_FALSE(needsHttp(applicablePolicies({byPrincipal}, "default", {})));
}

TEST(AuthorizationPolicyTest, TravelsOnTheWireAsWritten) {
  json ap = authzYaml(
      "metadata: {name: p, namespace: default}\n"
      "spec: {action: DENY, selector: {matchLabels: {app: web}},\n"
      "       rules: [{to: [{operation: {paths: ['/admin*']}}]}]}");
  json bad = authzYaml(
      "metadata: {name: bad, namespace: default}\n"
      "spec: {action: CUSTOM, provider: {name: ext}}");
  MeshObjects objects;
  objects.authorizationPolicies = {ap, bad};
  std::vector<std::string> errors;
  auto config = buildMeshConfig(objects, 3, &errors);
  ASSERT_EQ(config->authorizationPolicies.size(), 2u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("AuthorizationPolicy default/bad: spec.provider"), std::string::npos)
      << errors[0];
  auto back = meshConfigFromWire(meshConfigToWire(*config));
  ASSERT_TRUE(back.ok()) << back.status().toString();
  ASSERT_EQ((*back)->authorizationPolicies.size(), 2u);
  EXPECT_EQ((*back)->authorizationPolicies[0].source, config->authorizationPolicies[0].source);
  EXPECT_EQ((*back)->authorizationPolicies[1].action, AuthzAction::kDeny);  // closed
  EXPECT_EQ(meshConfigToJson(**back), meshConfigToJson(*config));

  // A delta carries the current list; one from an older istiod (no field) means none.
  auto none = buildMeshConfig(MeshObjects{}, 4);
  auto applied = applyMeshConfigDelta(*config, meshConfigDeltaToWire(*config, *none));
  ASSERT_TRUE(applied.ok()) << applied.status().toString();
  EXPECT_TRUE((*applied)->authorizationPolicies.empty());
  json wire = meshConfigToWire(*config);
  wire.erase("authorizationPolicies");
  auto old = meshConfigFromWire(wire);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE((*old)->authorizationPolicies.empty());
}

// The sidecar of pod default/web (127.0.0.1 standing for its IP) in front of an HTTP server.
class MeshAuthzProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(app_.start("127.0.0.1:0").ok());
    ProxyOptions o;
    o.bindAddress = "127.0.0.1";
    o.outboundPort = o.inboundPort = o.metricsPort = 0;
    o.registry = &registry_;
    o.podNamespace = "default";
    o.podName = "web";
    appPort_ = app_.port();
    o.originalDestination = [this](int) -> std::optional<std::pair<std::string, int>> {
      return std::make_pair(std::string("127.0.0.1"), appPort_.load());
    };
    proxy_ = std::make_unique<SidecarProxy>(o);
    ASSERT_TRUE(proxy_->start().ok());
  }

  void setPolicies(std::vector<json> policies, const std::string& portName = "http") {
    MeshObjects o;
    o.services = {
        {{"metadata", {{"name", "web"}, {"namespace", "default"}}},
         {"spec", {{"clusterIP", "10.96.0.10"}, {"ports", {{{"name", portName}, {"port", 80}}}}}}}};
    o.endpoints = {{{"metadata", {{"name", "web"}, {"namespace", "default"}}},
                    {"subsets",
                     {{{"addresses",
                        {{{"ip", "127.0.0.1"}, {"targetRef", {{"kind", "Pod"}, {"name", "web"}}}}}},
                       {"ports", {{{"name", portName}, {"port", appPort_.load()}}}}}}}}};
    o.pods = {
        {{"metadata", {{"name", "web"}, {"namespace", "default"}, {"labels", {{"app", "web"}}}}}}};
    o.authorizationPolicies = std::move(policies);
    proxy_->setConfig(buildMeshConfig(o, ++version_));
  }

  std::string exchange(const std::string& bytes) {
    return testing::rawExchange(proxy_->inboundPort(), bytes);
  }

  static std::string get(const std::string& path, bool close = false,
                         const std::string& extra = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: web\r\n" + extra +
           (close ? "Connection: close\r\n" : "") + "\r\n";
  }

  http::Server app_{[](const http::Request& req, http::ResponseWriter& w) {
    w.send(http::Response::text(200, "app " + req.method + " " + req.target));
  }};
  std::atomic<int> appPort_{0};  // where the application listens: app_ unless a test says
  metrics::Registry registry_;
  std::unique_ptr<SidecarProxy> proxy_;
  int64_t version_ = 0;
};

TEST_F(MeshAuthzProxyTest, EachHttpRequestIsAuthorizedOnAKeptConnection) {
  setPolicies({authzYaml("metadata: {name: public, namespace: default}\n"
                         "spec: {rules: [{to: [{operation: {paths: ['/public/*']}}]}]}"),
               authzYaml("metadata: {name: blocked, namespace: default}\n"
                         "spec: {action: DENY, rules: [{when: [{key: 'request.headers[x-block]',"
                         " values: ['yes']}]}]}")});
  std::string out = exchange(get("/public/a") + get("/private") +
                             get("/public/b", false, "X-Block: yes\r\n") + get("/public/c", true));
  EXPECT_NE(out.find("app GET /public/a"), std::string::npos) << out;
  EXPECT_NE(out.find("HTTP/1.1 403 Forbidden"), std::string::npos) << out;
  EXPECT_NE(out.find("RBAC: access denied"), std::string::npos) << out;
  EXPECT_EQ(out.find("app GET /private"), std::string::npos) << out;
  EXPECT_EQ(out.find("app GET /public/b"), std::string::npos) << out;
  EXPECT_NE(out.find("app GET /public/c"), std::string::npos) << out;
  std::string metrics = registry_.exposition();
  EXPECT_NE(metrics.find("mesh_authorization_denied_total{protocol=\"http\",policy=\"\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(
                "mesh_authorization_denied_total{protocol=\"http\",policy=\"default/blocked\"} 1"),
            std::string::npos)
      << metrics;

  // A policy change applies to the next connection's requests.
  setPolicies({});
  EXPECT_NE(exchange(get("/private", true)).find("app GET /private"), std::string::npos);
}

TEST_F(MeshAuthzProxyTest, ADeniedTcpConnectionIsReset) {
  // Not an HTTP port: the policy decides once for the connection, without its HTTP fields.
  setPolicies({authzYaml("metadata: {name: only-9000, namespace: default}\n"
                         "spec: {rules: [{to: [{operation: {ports: ['9000']}}]}]}")},
              "tcp-app");
  EXPECT_EQ(exchange(get("/x", true)), "");
  EXPECT_NE(registry_.exposition().find("mesh_inbound_refused_total{reason=\"rbac_denied\"} 1"),
            std::string::npos);
  setPolicies({authzYaml("metadata: {name: this-port, namespace: default}\n"
                         "spec: {rules: [{to: [{operation: {ports: ['" +
                         std::to_string(app_.port()) + "']}}]}]}")},
              "tcp-app");
  EXPECT_NE(exchange(get("/x", true)).find("app GET /x"), std::string::npos);
}

// An authorized upgrade continues as TCP with the application, the bytes sent right behind
// either side's HTTP part included.
TEST_F(MeshAuthzProxyTest, AnAuthorizedUpgradeContinuesAsTcp) {
  testing::ScriptedBackend app(testing::serveUpgradeThenEcho, 1);
  appPort_ = app.port();
  setPolicies(
      {authzYaml("metadata: {name: ws, namespace: default}\n"
                 "spec: {rules: [{to: [{operation: {paths: ['/ws']}}]}]}")});
  EXPECT_NE(exchange(get("/other", true)).find("403 Forbidden"), std::string::npos);
  std::string seen = testing::upgradeThenEcho(proxy_->inboundPort(), "/ws");
  EXPECT_NE(seen.find("Connection: Upgrade"), std::string::npos) << seen;
}

// The application closed the kept connection after its answer: the next request of the same
// client connection goes over a new one instead of failing.
TEST_F(MeshAuthzProxyTest, AKeptConnectionTheApplicationClosedIsDialledAgain) {
  std::atomic<int> answered{0};
  testing::ScriptedBackend app(
      [&answered](int fd) {
        testing::readHead(fd);
        std::string body = "ok" + std::to_string(++answered);
        testing::writeAll(fd, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n" + body);
      },
      2);
  appPort_ = app.port();
  setPolicies(
      {authzYaml("metadata: {name: all, namespace: default}\n"
                 "spec: {rules: [{to: [{operation: {paths: ['/*']}}]}]}")});
  std::string out = exchange(get("/a") + get("/b", true));
  EXPECT_NE(out.find("ok1"), std::string::npos) << out;
  EXPECT_NE(out.find("ok2"), std::string::npos) << out;
  EXPECT_EQ(out.find("503"), std::string::npos) << out;
}

}  // namespace
}  // namespace minik8s::mesh
