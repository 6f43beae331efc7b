// JSON Web Tokens in compact JWS form signed with RS256 (RSASSA-PKCS1-v1_5 with SHA-256), the
// format of Kubernetes service-account tokens. sign() writes
//   base64url(header) "." base64url(claims) "." base64url(signature)
// with header {"alg":"RS256","kid":<keyId>,"typ":"JWT"}; verify() accepts only RS256 with a good
// signature from the given public key and returns the claims. It never throws and refuses
// malformed, oversized or unsigned input ("alg":"none") with BadRequest/Unauthorized. Time
// claims (exp, nbf) are the caller's business. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s::jwt {

// Tokens longer than this are refused unread (fuzz safety; Kubernetes tokens are ~1 KiB).
inline constexpr size_t kMaxTokenBytes = 64 * 1024;

// The key id of a private or public key (PEM): base64url(sha256(DER SubjectPublicKeyInfo)), as
// Kubernetes computes it.
Result<std::string> keyId(const std::string& keyPem);

// A signed token for `claims` (a JSON object) with the RSA private key `privateKeyPem`.
Result<std::string> sign(const json& claims, const std::string& privateKeyPem);

// The header and claims of a token, without checking the signature (to route a token to the
// verifier for its issuer). BadRequest when it is not a well-formed JWS.
struct Parts {
  json header;
  json claims;
};
Result<Parts> decodeUnverified(std::string_view token);

// The claims of `token` when it is an RS256 JWS signed by the key of `publicKeyPem` (a public
// or private key PEM). Unauthorized for a bad signature or another algorithm, BadRequest
// for malformed input.
Result<json> verify(std::string_view token, const std::string& publicKeyPem);

}  // namespace minik8s::jwt
