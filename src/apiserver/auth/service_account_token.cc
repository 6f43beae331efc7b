#include "apiserver/auth/service_account_token.h"

#include <algorithm>

#include "api/object_meta.h"
#include "common/jwt.h"
#include "common/random.h"
#include "common/time_util.h"

namespace minik8s::apiserver::auth {

using api::stringAt;
using api::uidOf;
namespace {

using std::chrono::system_clock;

// Clock skew tolerated on nbf/iat (Kubernetes allows 60 s).
constexpr std::chrono::seconds kLeeway{60};

int64_t unixSeconds(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

WallClock orSystemClock(WallClock now) {
  if (now) return now;
  return [] { return system_clock::now(); };
}

const api::ResourceInfo& core(const Registry& registry, const char* plural) {
  const api::ResourceInfo* r = registry.scheme().byResource("", "v1", plural);
  return *r;  // built-in core resources are always in the scheme
}

bool terminating(const json& obj) {
  return obj.contains("/metadata/deletionTimestamp"_json_pointer) &&
         !obj.at("/metadata/deletionTimestamp"_json_pointer).is_null();
}

Status invalidTokenRequest(const std::string& name, const std::string& field,
                           const std::string& message) {
  return Status::Invalid("TokenRequest", name, {{"FieldValueInvalid", field, message}});
}

}  // namespace

ServiceAccountTokenGenerator::ServiceAccountTokenGenerator(std::string issuer,
                                                           std::string privateKeyPem, WallClock now)
    : issuer_(std::move(issuer)),
      privateKeyPem_(std::move(privateKeyPem)),
      now_(orSystemClock(std::move(now))) {}

Result<IssuedToken> ServiceAccountTokenGenerator::generate(const TokenClaims& c) const {
  const system_clock::time_point now = now_();
  const system_clock::time_point exp = now + c.expiration;
  json k8s = {{"namespace", c.namespaceName},
              {"serviceaccount", {{"name", c.serviceAccountName}, {"uid", c.serviceAccountUid}}}};
  if (c.bound) {
    std::string key = c.bound->kind == "Pod" ? "pod" : "secret";
    k8s[key] = {{"name", c.bound->name}, {"uid", c.bound->uid}};
  }
  json claims = {{"iss", issuer_},
                 {"sub", std::string(kServiceAccountUserPrefix) + c.namespaceName + ":" +
                             c.serviceAccountName},
                 {"aud", c.audiences.empty() ? std::vector<std::string>{issuer_} : c.audiences},
                 {"exp", unixSeconds(exp)},
                 {"iat", unixSeconds(now)},
                 {"nbf", unixSeconds(now)},
                 {"jti", newUid()},
                 {"kubernetes.io", k8s}};
  auto token = jwt::sign(claims, privateKeyPem_);
  if (!token.ok()) return token.status();
  return IssuedToken{std::move(*token),
                     system_clock::time_point(std::chrono::seconds(unixSeconds(exp)))};
}

ServiceAccountTokenAuthenticator::ServiceAccountTokenAuthenticator(
    std::string issuer, std::vector<std::string> publicKeyPems, Registry& registry,
    std::vector<std::string> audiences, WallClock now)
    : issuer_(std::move(issuer)),
      publicKeyPems_(std::move(publicKeyPems)),
      registry_(registry),
      audiences_(std::move(audiences)),
      now_(orSystemClock(std::move(now))) {
  if (audiences_.empty()) audiences_.push_back(issuer_);
}

Status ServiceAccountTokenAuthenticator::checkBoundObject(const std::string& ns, const json& ref,
                                                          const char* resource,
                                                          const char* kind) const {
  if (!ref.is_object()) return Status::Unauthorized(std::string("malformed ") + kind + " claim");
  const std::string name = stringAt(ref, "/name");
  const std::string uid = stringAt(ref, "/uid");
  auto obj = registry_.get(core(registry_, resource), ns, name);
  if (!obj.ok()) {
    return Status::Unauthorized(std::string(kind) + " \"" + ns + "/" + name +
                                "\" the token is bound to no longer exists");
  }
  if (uidOf(*obj) != uid) {
    return Status::Unauthorized(std::string(kind) + " \"" + ns + "/" + name +
                                "\" the token is bound to was recreated (uid changed)");
  }
  if (terminating(*obj) && std::string(kind) == "pod") {
    return Status::Unauthorized("pod \"" + ns + "/" + name + "\" is being deleted");
  }
  return Status::Ok();
}

std::optional<Result<UserInfo>> ServiceAccountTokenAuthenticator::authenticate(
    const std::string& token) {
  auto parts = jwt::decodeUnverified(token);
  if (!parts.ok()) return std::nullopt;  // not a JWT: someone else's token
  const json& claims = parts->claims;
  if (stringAt(claims, "/iss") != issuer_) return std::nullopt;

  Result<json> verified = Status::Unauthorized("no service-account key configured");
  for (const std::string& key : publicKeyPems_) {
    verified = jwt::verify(token, key);
    if (verified.ok()) break;
  }
  if (!verified.ok())
    return Status::Unauthorized("invalid service-account token: " + verified.status().message());
  const json& c = *verified;

  const int64_t now = unixSeconds(now_());
  auto exp = c.find("exp");
  if (exp == c.end() || !exp->is_number_integer()) {
    return Status::Unauthorized("service-account token has no expiry");
  }
  if (now > exp->get<int64_t>()) return Status::Unauthorized("service-account token has expired");
  if (auto nbf = c.find("nbf"); nbf != c.end()) {
    if (!nbf->is_number() || nbf->get<int64_t>() > now + kLeeway.count()) {
      return Status::Unauthorized("service-account token is not valid yet");
    }
  }

  std::vector<std::string> tokenAudiences;
  if (auto aud = c.find("aud"); aud != c.end()) {
    if (aud->is_string()) tokenAudiences.push_back(aud->get<std::string>());
    if (aud->is_array()) {
      for (const json& a : *aud) {
        if (a.is_string()) tokenAudiences.push_back(a.get<std::string>());
      }
    }
  }
  const bool audienceOk =
      std::any_of(tokenAudiences.begin(), tokenAudiences.end(), [&](const std::string& a) {
        return std::find(audiences_.begin(), audiences_.end(), a) != audiences_.end();
      });
  if (!audienceOk) return Status::Unauthorized("service-account token audience is not accepted");

  const std::string ns = stringAt(c, "/kubernetes.io/namespace");
  const std::string saName = stringAt(c, "/kubernetes.io/serviceaccount/name");
  const std::string saUid = stringAt(c, "/kubernetes.io/serviceaccount/uid");
  const std::string sub = stringAt(c, "/sub");
  if (ns.empty() || saName.empty() ||
      sub != std::string(kServiceAccountUserPrefix) + ns + ":" + saName) {
    return Status::Unauthorized("service-account token names no service account");
  }
  const json& k8s = c.at("kubernetes.io");
  if (Status s =
          checkBoundObject(ns, k8s.at("serviceaccount"), "serviceaccounts", "service account");
      !s.ok()) {
    return s;
  }

  UserInfo user;
  user.name = sub;
  user.uid = saUid;
  user.groups = {kServiceAccountsGroup, std::string(kServiceAccountsGroup) + ":" + ns};
  if (k8s.contains("pod")) {
    if (Status s = checkBoundObject(ns, k8s.at("pod"), "pods", "pod"); !s.ok()) return s;
    user.extra[kPodNameExtra] = {stringAt(k8s, "/pod/name")};
    user.extra[kPodUidExtra] = {stringAt(k8s, "/pod/uid")};
  } else if (k8s.contains("secret")) {
    if (Status s = checkBoundObject(ns, k8s.at("secret"), "secrets", "secret"); !s.ok()) {
      return s;
    }
  }
  if (std::string jti = stringAt(c, "/jti"); !jti.empty()) {
    user.extra[kCredentialIdExtra] = {"JTI=" + jti};
  }
  return user;
}

CreateOnlyHandler makeTokenRequestHandler(Registry& registry,
                                          std::shared_ptr<const ServiceAccountTokenGenerator> gen) {
  return [&registry, gen](const UserInfo& /*user*/, const RequestInfo& request,
                          json body) -> Result<json> {
    const std::string& ns = request.namespaceName;
    const std::string& saName = request.name;
    auto sa = registry.get(core(registry, "serviceaccounts"), ns, saName);
    if (!sa.ok()) return sa.status();
    if (!body.is_object()) body = json::object();
    json spec = body.value("spec", json::object());
    if (!spec.is_object()) return Status::BadRequest("TokenRequest spec must be an object");

    TokenClaims claims;
    claims.namespaceName = ns;
    claims.serviceAccountName = saName;
    claims.serviceAccountUid = uidOf(*sa);

    if (spec.contains("audiences") && !spec["audiences"].is_null()) {
      if (!spec["audiences"].is_array()) {
        return invalidTokenRequest(saName, "spec.audiences", "must be a list of strings");
      }
      for (const json& a : spec["audiences"]) {
        if (!a.is_string()) {
          return invalidTokenRequest(saName, "spec.audiences", "must be a list of strings");
        }
        claims.audiences.push_back(a.get<std::string>());
      }
    }
    if (claims.audiences.empty()) claims.audiences = {gen->issuer()};
    spec["audiences"] = claims.audiences;

    int64_t seconds = kDefaultTokenExpiration.count();
    if (spec.contains("expirationSeconds") && !spec["expirationSeconds"].is_null()) {
      if (!spec["expirationSeconds"].is_number_integer()) {
        return invalidTokenRequest(saName, "spec.expirationSeconds", "must be an integer");
      }
      seconds = spec["expirationSeconds"].get<int64_t>();
    }
    if (seconds < kMinTokenExpiration.count()) {
      return invalidTokenRequest(saName, "spec.expirationSeconds",
                                 "Invalid value: " + std::to_string(seconds) +
                                     ": may not specify a duration less than 10 minutes");
    }
    seconds = std::min<int64_t>(seconds, kMaxTokenExpiration.count());
    claims.expiration = std::chrono::seconds(seconds);
    spec["expirationSeconds"] = seconds;

    if (spec.contains("boundObjectRef") && !spec["boundObjectRef"].is_null()) {
      const json& ref = spec["boundObjectRef"];
      if (!ref.is_object()) return Status::BadRequest("spec.boundObjectRef must be an object");
      BoundObject bound;
      bound.kind = stringAt(ref, "/kind");
      bound.name = stringAt(ref, "/name");
      const std::string apiVersion = stringAt(ref, "/apiVersion");
      if ((bound.kind != "Pod" && bound.kind != "Secret") ||
          (!apiVersion.empty() && apiVersion != "v1")) {
        return Status::BadRequest("cannot bind token to object of type " + apiVersion + ", Kind=" +
                                  bound.kind + ": only v1 Pod and Secret are supported");
      }
      if (bound.name.empty()) {
        return invalidTokenRequest(saName, "spec.boundObjectRef.name", "Required value");
      }
      auto obj =
          registry.get(core(registry, bound.kind == "Pod" ? "pods" : "secrets"), ns, bound.name);
      if (!obj.ok()) return obj.status();
      bound.uid = uidOf(*obj);
      const std::string wantUid = stringAt(ref, "/uid");
      if (!wantUid.empty() && wantUid != bound.uid) {
        return Status::ConflictMessage(
            "the UID in the bound object reference (" + wantUid +
            ") does not match the UID in record. The object might have been deleted and then "
            "recreated");
      }
      if (bound.kind == "Pod") {
        std::string podSa = stringAt(*obj, "/spec/serviceAccountName");
        if (podSa.empty()) podSa = "default";
        if (podSa != saName) {
          return Status::BadRequest("cannot bind token for serviceaccount \"" + saName +
                                    "\" to pod running with different serviceaccount name.");
        }
      }
      spec["boundObjectRef"]["uid"] = bound.uid;
      if (apiVersion.empty()) spec["boundObjectRef"]["apiVersion"] = "v1";
      claims.bound = bound;
    }

    // Unset fields a client sent as null (kubectl's protobuf body) are left out, as the API
    // server's encoding would.
    for (auto it = spec.begin(); it != spec.end();) {
      it = it->is_null() ? spec.erase(it) : std::next(it);
    }
    auto issued = gen->generate(claims);
    if (!issued.ok()) return issued.status();
    json out = {
        {"apiVersion", "authentication.k8s.io/v1"},
        {"kind", "TokenRequest"},
        {"metadata", body.value("metadata", json::object())},
        {"spec", spec},
        {"status",
         {{"token", issued->token}, {"expirationTimestamp", formatRfc3339(issued->expiresAt)}}}};
    if (!out["metadata"].is_object()) out["metadata"] = json::object();
    out["metadata"]["name"] = saName;
    out["metadata"]["namespace"] = ns;
    out["metadata"]["creationTimestamp"] = nullptr;
    return out;
  };
}

}  // namespace minik8s::apiserver::auth
