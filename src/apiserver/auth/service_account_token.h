// Service-account tokens: Kubernetes-shaped bound JWTs (RS256, see common/jwt.h).
//
// ServiceAccountTokenGenerator signs tokens with the cluster's service-account key (sa.key):
//   {iss, sub: "system:serviceaccount:<ns>:<name>", aud: [...], exp, iat, nbf, jti,
//    "kubernetes.io": {namespace, serviceaccount: {name, uid}, pod|secret: {name, uid}}}.
// ServiceAccountTokenAuthenticator checks them for the API server: nullopt for a token that is
// not a JWT of its issuer (another authenticator may know it); 401 for a bad signature, an
// expired or not-yet-valid token, a wrong audience, or a service account / bound object that was
// deleted or recreated (uid changed). makeTokenRequestHandler() serves TokenRequest on
// serviceaccounts/<name>/token (what `kubectl create token` and the kubelet call).
// All are immutable after construction and thread-safe; they read objects through the Registry.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/auth/auth.h"
#include "apiserver/registry.h"

namespace minik8s::apiserver::auth {

inline constexpr const char* kServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local";
inline constexpr const char* kPodNameExtra = "authentication.kubernetes.io/pod-name";
inline constexpr const char* kPodUidExtra = "authentication.kubernetes.io/pod-uid";
inline constexpr const char* kCredentialIdExtra = "authentication.kubernetes.io/credential-id";

// TokenRequest limits: Kubernetes refuses less than 10 minutes; longer than the maximum is
// shortened to it (as with --service-account-max-token-expiration).
inline constexpr std::chrono::seconds kMinTokenExpiration{600};
inline constexpr std::chrono::seconds kMaxTokenExpiration{48 * 3600};
inline constexpr std::chrono::seconds kDefaultTokenExpiration{3600};

using WallClock = std::function<std::chrono::system_clock::time_point()>;

// The object a token is bound to: it is valid only while that object exists with that uid.
struct BoundObject {
  std::string kind;  // "Pod" or "Secret"
  std::string name;
  std::string uid;
};

struct TokenClaims {
  std::string namespaceName;
  std::string serviceAccountName;
  std::string serviceAccountUid;
  std::vector<std::string> audiences;
  std::chrono::seconds expiration = kDefaultTokenExpiration;
  std::optional<BoundObject> bound;
};

struct IssuedToken {
  std::string token;
  std::chrono::system_clock::time_point expiresAt;
};

class ServiceAccountTokenGenerator {
 public:
  // `privateKeyPem`: the RSA key tokens are signed with. `now` defaults to the system clock.
  ServiceAccountTokenGenerator(std::string issuer, std::string privateKeyPem,
                               WallClock now = nullptr);
  Result<IssuedToken> generate(const TokenClaims& claims) const;
  const std::string& issuer() const { return issuer_; }

 private:
  std::string issuer_, privateKeyPem_;
  WallClock now_;
};

class ServiceAccountTokenAuthenticator : public TokenAuthenticator {
 public:
  // `publicKeyPems`: keys whose signatures are accepted (sa.pub; several during a rotation).
  // `audiences`: a token must name at least one of them (default: the issuer).
  ServiceAccountTokenAuthenticator(std::string issuer, std::vector<std::string> publicKeyPems,
                                   Registry& registry, std::vector<std::string> audiences = {},
                                   WallClock now = nullptr);
  std::optional<Result<UserInfo>> authenticate(const std::string& token) override;

 private:
  Status checkBoundObject(const std::string& ns, const json& ref, const char* resource,
                          const char* kind) const;

  std::string issuer_;
  std::vector<std::string> publicKeyPems_;
  Registry& registry_;
  std::vector<std::string> audiences_;
  WallClock now_;
};

// The create-only handler for "serviceaccounts/token": a TokenRequest (authentication.k8s.io/v1)
// in, the same object with status.token and status.expirationTimestamp out. spec.audiences
// defaults to [issuer], spec.expirationSeconds to 3600 (at least 600, at most 48h);
// spec.boundObjectRef (Pod or Secret of the namespace) must exist, with a matching uid when one
// is given, and a Pod must run as this service account.
CreateOnlyHandler makeTokenRequestHandler(Registry& registry,
                                          std::shared_ptr<const ServiceAccountTokenGenerator> gen);

}  // namespace minik8s::apiserver::auth
