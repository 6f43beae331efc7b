#include <gtest/gtest.h>

#include "apiserver/auth/service_account_token.h"
#include "common/base64.h"
#include "common/jwt.h"
#include "common/pki.h"
#include "common/time_util.h"
#include "fake_store.h"

namespace minik8s::apiserver::auth {
namespace {

using std::chrono::seconds;
using std::chrono::system_clock;

struct Keys {
  std::string privatePem, publicPem;
};
const Keys& saKeys() {
  static const Keys k = [] {
    Keys out;
    out.privatePem = *pki::generateRsaKey();
    out.publicPem = *pki::publicKeyOf(out.privatePem);
    return out;
  }();
  return k;
}

class ServiceAccountTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    create("namespaces", "", {{"metadata", {{"name", "default"}}}});
    create("namespaces", "", {{"metadata", {{"name", "team"}}}});
    sa_ = create("serviceaccounts", "team", {{"metadata", {{"name", "builder"}}}});
    pod_ = create("pods", "team",
                  {{"metadata", {{"name", "web"}}},
                   {"spec",
                    {{"serviceAccountName", "builder"},
                     {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}});
  }

  const api::ResourceInfo& res(const std::string& plural) {
    return *api::Scheme::builtin().byResource("", "v1", plural);
  }
  json create(const std::string& plural, const std::string& ns, json obj) {
    auto r = registry.create(res(plural), ns, std::move(obj));
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() ? *r : json();
  }
  void removeNow(const std::string& plural, const std::string& ns, const std::string& name) {
    DeleteOptions opts;
    opts.gracePeriodSeconds = 0;
    auto r = registry.remove(res(plural), ns, name, opts);
    ASSERT_TRUE(r.ok()) << r.status().toString();
  }
  RequestInfo tokenRequestInfo(const std::string& ns, const std::string& sa) {
    RequestInfo ri;
    ri.isResourceRequest = true;
    ri.verb = "create";
    ri.version = "v1";
    ri.namespaceName = ns;
    ri.resource = "serviceaccounts";
    ri.name = sa;
    ri.subresource = "token";
    return ri;
  }
  Result<json> requestToken(const std::string& ns, const std::string& sa, json spec) {
    json body = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenRequest"},
                 {"spec", std::move(spec)}};
    return handler(UserInfo{}, tokenRequestInfo(ns, sa), body);
  }
  std::string saUid() const { return sa_["metadata"]["uid"].get<std::string>(); }
  std::optional<Result<UserInfo>> authenticate(const std::string& token) {
    return authenticator.authenticate(token);
  }

  system_clock::time_point now = system_clock::time_point(seconds(1'700'000'000));
  WallClock clock = [this] { return now; };
  testing::FakeStore store;
  Registry registry{store, api::Scheme::builtin()};
  std::shared_ptr<ServiceAccountTokenGenerator> generator =
      std::make_shared<ServiceAccountTokenGenerator>(kServiceAccountIssuer, saKeys().privatePem,
                                                     clock);
  ServiceAccountTokenAuthenticator authenticator{
      kServiceAccountIssuer, {saKeys().publicPem}, registry, {}, clock};
  CreateOnlyHandler handler = makeTokenRequestHandler(registry, generator);
  json sa_, pod_;
};

TEST_F(ServiceAccountTokenTest, GeneratedTokenHasKubernetesClaims) {
  TokenClaims c{
      "team",       "builder",
      saUid(),      {"api", "vault"},
      seconds(900), BoundObject{"Pod", "web", pod_["metadata"]["uid"].get<std::string>()}};
  auto issued = generator->generate(c);
  ASSERT_TRUE(issued.ok()) << issued.status().toString();
  EXPECT_EQ(issued->expiresAt, now + seconds(900));
  auto claims = jwt::verify(issued->token, saKeys().publicPem);
  ASSERT_TRUE(claims.ok());
  EXPECT_EQ((*claims)["iss"], "https://kubernetes.default.svc.cluster.local");
  EXPECT_EQ((*claims)["sub"], "system:serviceaccount:team:builder");
  EXPECT_EQ((*claims)["aud"], json::array({"api", "vault"}));
  EXPECT_EQ((*claims)["iat"], 1'700'000'000);
  EXPECT_EQ((*claims)["nbf"], 1'700'000'000);
  EXPECT_EQ((*claims)["exp"], 1'700'000'900);
  EXPECT_EQ((*claims)["jti"].get<std::string>().size(), 36u);
  json want = {{"namespace", "team"},
               {"serviceaccount", {{"name", "builder"}, {"uid", sa_["metadata"]["uid"]}}},
               {"pod", {{"name", "web"}, {"uid", pod_["metadata"]["uid"]}}}};
  EXPECT_EQ((*claims)["kubernetes.io"], want);
}

TEST_F(ServiceAccountTokenTest, TokenRequestDefaultsAndAuthenticatesAsTheServiceAccount) {
  // kubectl's protobuf body arrives with unset fields as null.
  auto out = requestToken("team", "builder", {{"boundObjectRef", nullptr}, {"audiences", nullptr}});
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_FALSE((*out)["spec"].contains("boundObjectRef"));
  EXPECT_EQ((*out)["kind"], "TokenRequest");
  EXPECT_EQ((*out)["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ((*out)["metadata"]["name"], "builder");
  EXPECT_EQ((*out)["metadata"]["namespace"], "team");
  EXPECT_EQ((*out)["spec"]["audiences"], json::array({kServiceAccountIssuer}));
  EXPECT_EQ((*out)["spec"]["expirationSeconds"], 3600);
  EXPECT_EQ((*out)["status"]["expirationTimestamp"], formatRfc3339(now + seconds(3600)));

  auto user = authenticate((*out)["status"]["token"]);
  ASSERT_TRUE(user.has_value());
  ASSERT_TRUE(user->ok()) << user->status().toString();
  EXPECT_EQ((*user)->name, "system:serviceaccount:team:builder");
  EXPECT_EQ((*user)->uid, sa_["metadata"]["uid"]);
  EXPECT_EQ((*user)->groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:serviceaccounts:team"}));
  EXPECT_EQ((*user)->extra.count(kPodNameExtra), 0u);
  EXPECT_EQ((*user)->extra.count(kCredentialIdExtra), 1u);
}

TEST_F(ServiceAccountTokenTest, ExpirationIsCheckedAndClamped) {
  auto tooShort = requestToken("team", "builder", {{"expirationSeconds", 599}});
  EXPECT_EQ(tooShort.status().code(), 422);
  EXPECT_EQ(tooShort.status().causes().at(0).field, "spec.expirationSeconds");
  auto min = requestToken("team", "builder", {{"expirationSeconds", 600}});
  ASSERT_TRUE(min.ok());
  EXPECT_EQ((*min)["spec"]["expirationSeconds"], 600);
  auto huge = requestToken("team", "builder", {{"expirationSeconds", 1'000'000}});
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ((*huge)["spec"]["expirationSeconds"], 48 * 3600);
  EXPECT_EQ(requestToken("team", "builder", {{"expirationSeconds", "1h"}}).status().code(), 422);

  std::string token = (*min)["status"]["token"];
  now += seconds(600);
  EXPECT_TRUE(authenticate(token)->ok());
  now += seconds(1);
  auto expired = authenticate(token);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->status().code(), 401);
}

TEST_F(ServiceAccountTokenTest, TokenRequestForMissingAccountIsNotFound) {
  auto out = requestToken("team", "ghost", json::object());
  EXPECT_EQ(out.status().code(), 404);
  EXPECT_EQ(out.status().message(), "serviceaccounts \"ghost\" not found");
}

TEST_F(ServiceAccountTokenTest, AudienceMustBeAccepted) {
  auto other = requestToken("team", "builder", {{"audiences", {"vault"}}});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)["spec"]["audiences"], json::array({"vault"}));
  EXPECT_EQ(authenticate((*other)["status"]["token"])->status().code(), 401);
  auto both = requestToken("team", "builder", {{"audiences", {"vault", kServiceAccountIssuer}}});
  EXPECT_TRUE(authenticate((*both)["status"]["token"])->ok());
}

TEST_F(ServiceAccountTokenTest, PodBoundTokenCarriesPodAndDiesWithIt) {
  auto out =
      requestToken("team", "builder",
                   {{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "web"}}}});
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ((*out)["spec"]["boundObjectRef"]["uid"], pod_["metadata"]["uid"]);
  std::string token = (*out)["status"]["token"];
  auto user = authenticate(token);
  ASSERT_TRUE(user->ok());
  EXPECT_EQ((*user)->extra.at(kPodNameExtra), std::vector<std::string>{"web"});
  EXPECT_EQ((*user)->extra.at(kPodUidExtra),
            std::vector<std::string>{pod_["metadata"]["uid"].get<std::string>()});

  // Deleted and recreated under the same name: a new uid, the old token is refused.
  removeNow("pods", "team", "web");
  EXPECT_EQ(authenticate(token)->status().code(), 401);
  create("pods", "team",
         {{"metadata", {{"name", "web"}}},
          {"spec",
           {{"serviceAccountName", "builder"},
            {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}});
  EXPECT_EQ(authenticate(token)->status().code(), 401);
}

TEST_F(ServiceAccountTokenTest, BoundObjectRefIsChecked) {
  auto wrongUid = requestToken(
      "team", "builder", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "web"}, {"uid", "x"}}}});
  EXPECT_EQ(wrongUid.status().code(), 409);
  auto missing =
      requestToken("team", "builder", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "nope"}}}});
  EXPECT_EQ(missing.status().code(), 404);
  auto badKind = requestToken("team", "builder",
                              {{"boundObjectRef", {{"kind", "ConfigMap"}, {"name", "web"}}}});
  EXPECT_EQ(badKind.status().code(), 400);
  // The pod runs as "builder", not "default".
  create("serviceaccounts", "team", {{"metadata", {{"name", "default"}}}});
  auto otherSa =
      requestToken("team", "default", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "web"}}}});
  EXPECT_EQ(otherSa.status().code(), 400);

  json secret = create("secrets", "team", {{"metadata", {{"name", "s"}}}});
  auto bound =
      requestToken("team", "builder", {{"boundObjectRef", {{"kind", "Secret"}, {"name", "s"}}}});
  ASSERT_TRUE(bound.ok()) << bound.status().toString();
  std::string token = (*bound)["status"]["token"];
  EXPECT_TRUE(authenticate(token)->ok());
  removeNow("secrets", "team", "s");
  EXPECT_EQ(authenticate(token)->status().code(), 401);
}

TEST_F(ServiceAccountTokenTest, DeletedOrRecreatedServiceAccountInvalidatesTokens) {
  auto out = requestToken("team", "builder", json::object());
  std::string token = (*out)["status"]["token"];
  ASSERT_TRUE(authenticate(token)->ok());
  removeNow("serviceaccounts", "team", "builder");
  EXPECT_EQ(authenticate(token)->status().code(), 401);
  create("serviceaccounts", "team", {{"metadata", {{"name", "builder"}}}});
  EXPECT_EQ(authenticate(token)->status().code(), 401);
}

TEST_F(ServiceAccountTokenTest, ForeignTokensAreNotOursAndForgeriesAreRefused) {
  EXPECT_FALSE(authenticate("abcdef.0123456789abcdef").has_value());  // a join token
  EXPECT_FALSE(authenticate("not-a-jwt").has_value());
  EXPECT_FALSE(authenticate("").has_value());
  // Another issuer's JWT: not ours.
  ServiceAccountTokenGenerator otherIssuer("https://other", saKeys().privatePem, clock);
  auto foreign = otherIssuer.generate({"team", "builder", saUid(), {}, seconds(900), std::nullopt});
  EXPECT_FALSE(authenticate(foreign->token).has_value());
  // Our issuer, another key: ours, but forged.
  std::string otherKey = *pki::generateRsaKey();
  ServiceAccountTokenGenerator forger(kServiceAccountIssuer, otherKey, clock);
  auto forged = forger.generate(
      {"team", "builder", saUid(), {kServiceAccountIssuer}, seconds(900), std::nullopt});
  auto r = authenticate(forged->token);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().code(), 401);
  // alg none with our issuer.
  std::string none = base64::encode(R"({"alg":"none"})", base64::kJws) + "." +
                     base64::encode(json({{"iss", kServiceAccountIssuer}}).dump(), base64::kJws) +
                     ".";
  EXPECT_EQ(authenticate(none)->status().code(), 401);
}

TEST_F(ServiceAccountTokenTest, NotYetValidTokenIsRefused) {
  auto out = requestToken("team", "builder", json::object());
  now -= seconds(120);  // beyond the 60 s skew allowance
  EXPECT_EQ(authenticate((*out)["status"]["token"])->status().code(), 401);
  now += seconds(90);
  EXPECT_TRUE(authenticate((*out)["status"]["token"])->ok());
}

}  // namespace
}  // namespace minik8s::apiserver::auth
