#include "common/jwt.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <array>
#include <memory>

#include "common/base64.h"

namespace minik8s::jwt {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

// A private key when the PEM holds one, else a public key; null when neither.
PkeyPtr loadKey(const std::string& pem, bool wantPrivate) {
  if (pem.size() > kMaxTokenBytes) return nullptr;
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return nullptr;
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key && !wantPrivate) {
    BioPtr bio2(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    key.reset(PEM_read_bio_PUBKEY(bio2.get(), nullptr, nullptr, nullptr));
  }
  ERR_clear_error();  // a failed read leaves errors in this thread's queue
  return key;
}

bool isRsa(EVP_PKEY* key) { return EVP_PKEY_base_id(key) == EVP_PKEY_RSA; }

Result<json> parseJsonObject(std::string_view text, const char* what) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return Status::BadRequest(std::string("token ") + what + " is not a JSON object");
  }
  return value;
}

}  // namespace

Result<std::string> keyId(const std::string& keyPem) {
  PkeyPtr key = loadKey(keyPem, /*wantPrivate=*/false);
  if (!key) return Status::BadRequest("not a PEM private or public key");
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key.get(), &der);
  if (len <= 0) return Status::Internal("cannot encode the public key");
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(der, static_cast<size_t>(len), digest.data());
  OPENSSL_free(der);
  return base64::encode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()), base64::kJws);
}

Result<std::string> sign(const json& claims, const std::string& privateKeyPem) {
  if (!claims.is_object()) return Status::BadRequest("token claims must be a JSON object");
  PkeyPtr key = loadKey(privateKeyPem, /*wantPrivate=*/true);
  if (!key || !isRsa(key.get())) return Status::BadRequest("not a PEM RSA private key");
  auto kid = keyId(privateKeyPem);
  if (!kid.ok()) return kid.status();
  json header = {{"alg", "RS256"}, {"kid", *kid}, {"typ", "JWT"}};
  std::string input;
  try {
    input = base64::encode(header.dump(), base64::kJws) + "." +
            base64::encode(claims.dump(), base64::kJws);
  } catch (const json::exception& e) {  // invalid UTF-8 in a claim
    return Status::BadRequest(std::string("token claims cannot be encoded: ") + e.what());
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  size_t sigLen = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sigLen,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::Internal("RS256 signing failed");
  }
  std::string signature(sigLen, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &sigLen,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Status::Internal("RS256 signing failed");
  }
  signature.resize(sigLen);
  return input + "." + base64::encode(signature, base64::kJws);
}

namespace {

struct Split {
  std::string_view header, claims, signature;
};

Result<Split> splitToken(std::string_view token) {
  if (token.empty()) return Status::BadRequest("empty token");
  if (token.size() > kMaxTokenBytes) return Status::BadRequest("token too long");
  size_t a = token.find('.');
  if (a == std::string_view::npos) return Status::BadRequest("token is not a JWS");
  size_t b = token.find('.', a + 1);
  if (b == std::string_view::npos || token.find('.', b + 1) != std::string_view::npos) {
    return Status::BadRequest("token is not a compact JWS of three parts");
  }
  return Split{token.substr(0, a), token.substr(a + 1, b - a - 1), token.substr(b + 1)};
}

}  // namespace

Result<Parts> decodeUnverified(std::string_view token) {
  auto split = splitToken(token);
  if (!split.ok()) return split.status();
  auto header = base64::decode(split->header, base64::kJws);
  if (!header.ok()) return header.status();
  auto claims = base64::decode(split->claims, base64::kJws);
  if (!claims.ok()) return claims.status();
  auto h = parseJsonObject(*header, "header");
  if (!h.ok()) return h.status();
  auto c = parseJsonObject(*claims, "claims");
  if (!c.ok()) return c.status();
  return Parts{std::move(*h), std::move(*c)};
}

Result<json> verify(std::string_view token, const std::string& publicKeyPem) {
  auto parts = decodeUnverified(token);
  if (!parts.ok()) return parts.status();
  const json& header = parts->header;
  auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string() || alg->get<std::string>() != "RS256") {
    return Status::Unauthorized("token algorithm is not RS256");
  }
  auto split = splitToken(token);
  auto signature = base64::decode(split->signature, base64::kJws);
  if (!signature.ok()) return signature.status();
  if (signature->empty()) return Status::Unauthorized("token is not signed");
  PkeyPtr key = loadKey(publicKeyPem, /*wantPrivate=*/false);
  if (!key || !isRsa(key.get())) return Status::Internal("the verification key is not RSA");
  std::string_view input = token.substr(0, split->header.size() + 1 + split->claims.size());
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1) {
    return Status::Internal("RS256 verification could not start");
  }
  int ok = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature->data()),
                            signature->size(), reinterpret_cast<const unsigned char*>(input.data()),
                            input.size());
  if (ok != 1) return Status::Unauthorized("token signature is invalid");
  return std::move(parts->claims);
}

}  // namespace minik8s::jwt
