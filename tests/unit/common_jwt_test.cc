#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>

#include "common/base64.h"
#include "common/jwt.h"

namespace minik8s::jwt {
namespace {

std::string base64Url(std::string_view data) { return base64::encode(data, base64::kJws); }

// A fresh RSA key (PKCS#8 PEM) and its public key (SPKI PEM), made here so this test does not
// depend on pki.cc.
struct RsaKeys {
  std::string privatePem, publicPem;
};

RsaKeys makeRsaKey() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  RsaKeys out;
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  out.privatePem.assign(data, static_cast<size_t>(n));
  BIO_free(bio);
  bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  n = BIO_get_mem_data(bio, &data);
  out.publicPem.assign(data, static_cast<size_t>(n));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return out;
}

const RsaKeys& keys() {
  static const RsaKeys k = makeRsaKey();
  return k;
}
const RsaKeys& otherKeys() {
  static const RsaKeys k = makeRsaKey();
  return k;
}

TEST(Jwt, SignsAndVerifiesClaimsWithRs256AndKeyId) {
  json claims = {{"iss", "https://kubernetes.default.svc.cluster.local"},
                 {"sub", "system:serviceaccount:default:default"},
                 {"exp", 2000000000}};
  auto token = sign(claims, keys().privatePem);
  ASSERT_TRUE(token.ok()) << token.status().toString();
  auto parts = decodeUnverified(*token);
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->header["alg"], "RS256");
  auto kid = keyId(keys().publicPem);
  ASSERT_TRUE(kid.ok());
  EXPECT_EQ(parts->header["kid"], *kid);
  EXPECT_EQ(kid->size(), 43u);  // 32 bytes, unpadded
  EXPECT_EQ(*keyId(keys().privatePem), *kid);
  auto verified = verify(*token, keys().publicPem);
  ASSERT_TRUE(verified.ok()) << verified.status().toString();
  EXPECT_EQ(*verified, claims);
  // The private key PEM works for verification too.
  EXPECT_TRUE(verify(*token, keys().privatePem).ok());
}

TEST(Jwt, RefusesAnotherKeysSignatureAndTampering) {
  auto token = sign({{"sub", "alice"}}, keys().privatePem);
  ASSERT_TRUE(token.ok());
  auto wrong = verify(*token, otherKeys().publicPem);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), 401);

  // Claims swapped for others: the signature no longer matches.
  size_t a = token->find('.'), b = token->rfind('.');
  std::string forged = token->substr(0, a + 1) + base64Url(R"({"sub":"admin"})") + token->substr(b);
  EXPECT_EQ(verify(forged, keys().publicPem).status().code(), 401);
  // One signature byte changed.
  std::string flipped = *token;
  flipped[flipped.size() - 5] = flipped[flipped.size() - 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(verify(flipped, keys().publicPem).status().code(), 401);
}

TEST(Jwt, RefusesAlgNoneAndOtherAlgorithms) {
  std::string claims = base64Url(R"({"sub":"admin"})");
  EXPECT_EQ(
      verify(base64Url(R"({"alg":"none"})") + "." + claims + ".", keys().publicPem).status().code(),
      401);
  auto real = sign({{"sub", "admin"}}, keys().privatePem);
  std::string sig = real->substr(real->rfind('.') + 1);
  for (const char* alg : {"HS256", "RS512", "ES256", "none"}) {
    std::string header = base64Url(std::string(R"({"alg":")") + alg + R"("})");
    EXPECT_EQ(verify(header + "." + claims + "." + sig, keys().publicPem).status().code(), 401)
        << alg;
  }
  // RS256 header but no signature.
  std::string header = base64Url(R"({"alg":"RS256"})");
  EXPECT_EQ(verify(header + "." + claims + ".", keys().publicPem).status().code(), 401);
  // alg of the wrong type.
  EXPECT_FALSE(verify(base64Url(R"({"alg":1})") + "." + claims + "." + sig, keys().publicPem).ok());
}

TEST(Jwt, MalformedInputIsRefusedWithoutCrashing) {
  auto token = *sign({{"sub", "alice"}, {"n", 1}}, keys().privatePem);
  // Every truncation of a good token.
  for (size_t len = 0; len < token.size(); ++len) {
    EXPECT_FALSE(verify(std::string_view(token).substr(0, len), keys().publicPem).ok()) << len;
  }
  for (const std::string& bad :
       {std::string(""), std::string("."), std::string(".."), std::string("..."),
        std::string("a.b.c"), std::string("a.b"), std::string("abc"), std::string("!!.??.**"),
        base64Url("[1,2]") + "." + base64Url("{}") + ".AA",
        base64Url("{\"alg\":\"RS256\"}") + "." + base64Url("not json") + ".AA",
        base64Url("{\"alg\":\"RS256\"}") + "." + base64Url("\"str\"") + ".AA", token + ".x",
        token + "=", std::string(token).insert(10, " "), std::string("\0\0.\0.\0", 6)}) {
    auto r = verify(bad, keys().publicPem);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().code() == 400 || r.status().code() == 401) << bad;
  }
  // Huge input is refused before decoding.
  std::string huge(kMaxTokenBytes + 1, 'A');
  huge[100] = '.';
  huge[200] = '.';
  EXPECT_EQ(verify(huge, keys().publicPem).status().code(), 400);
  // A deeply nested header is only JSON: parsed or refused, never a crash.
  std::string deep(5000, '[');
  EXPECT_FALSE(verify(base64Url(deep) + ".e30.AA", keys().publicPem).ok());
  // Random bytes.
  uint32_t seed = 12345;
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    size_t len = (seed = seed * 1103515245 + 12345) % 200;
    for (size_t j = 0; j < len; ++j) {
      seed = seed * 1103515245 + 12345;
      s += "ab.-_XYZ09{}\"=+/\xff"[(seed >> 16) % 17];
    }
    EXPECT_FALSE(verify(s, keys().publicPem).ok());
  }
}

TEST(Jwt, SignRefusesNonRsaKeysAndNonObjects) {
  EXPECT_FALSE(sign(json::array(), keys().privatePem).ok());
  EXPECT_FALSE(sign({{"a", 1}}, "not a key").ok());
  EXPECT_FALSE(sign({{"a", 1}}, keys().publicPem).ok());
  EVP_PKEY* ec = EVP_EC_gen("P-256");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, ec, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string ecPem(data, static_cast<size_t>(n));
  BIO_free(bio);
  EVP_PKEY_free(ec);
  EXPECT_FALSE(sign({{"a", 1}}, ecPem).ok());
  EXPECT_FALSE(keyId("garbage").ok());
}

}  // namespace
}  // namespace minik8s::jwt
