#include "common/join_token.h"

#include <fmt/format.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace minik8s {

namespace {

constexpr size_t kIdLength = 6;
constexpr size_t kSecretLength = 16;
constexpr std::string_view kPrefix = "K10";
constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

std::string hexOf(const unsigned char* data, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", data[i]);
  return out;
}

std::string sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return hexOf(digest, sizeof digest);
}

// `n` characters of [a-z0-9] from OpenSSL's CSPRNG (rejection sampling keeps them uniform).
std::optional<std::string> randomToken(size_t n) {
  std::string out;
  while (out.size() < n) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof bytes) != 1) return std::nullopt;
    for (unsigned char b : bytes) {
      if (b >= 252) continue;  // 252 = 7 * 36
      if (out.size() < n) out += kAlphabet[b % kAlphabet.size()];
    }
  }
  return out;
}

bool isTokenPart(std::string_view s, size_t length) {
  if (s.size() != length) return false;
  for (char c : s)
    if (kAlphabet.find(c) == std::string_view::npos) return false;
  return true;
}

bool isHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "<id>.<secret>" split, or nullopt.
std::optional<std::pair<std::string, std::string>> splitIdSecret(std::string_view s) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view id = s.substr(0, dot), secret = s.substr(dot + 1);
  if (!isTokenPart(id, kIdLength) || !isTokenPart(secret, kSecretLength)) return std::nullopt;
  return std::make_pair(std::string(id), std::string(secret));
}

bool constantTimeEquals(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::string JoinToken::toString() const {
  if (legacy) return secret;
  std::string idSecret = id + "." + secret;
  return caHash.empty() ? idSecret : std::string(kPrefix) + caHash + "::" + idSecret;
}

std::string JoinToken::bearerToken() const { return toString(); }

Result<JoinToken> makeJoinToken(const std::string& caPem) {
  JoinToken t;
  auto id = randomToken(kIdLength);
  auto secret = randomToken(kSecretLength);
  if (!id || !secret) return Status::Internal("no randomness for the join token");
  t.id = *id;
  t.secret = *secret;
  if (!caPem.empty()) {
    auto hash = caCertificateHash(caPem);
    if (!hash.ok()) return hash.status();
    t.caHash = *hash;
  }
  return t;
}

Result<JoinToken> parseJoinToken(const std::string& text) {
  if (text.empty()) return Status::BadRequest("empty join token");
  JoinToken t;
  if (const size_t sep = text.find("::"); sep != std::string::npos) {
    std::string_view head(text.data(), sep);
    if (head.substr(0, kPrefix.size()) != kPrefix || !isHex64(head.substr(kPrefix.size())))
      return Status::BadRequest(
          "join token: expected K10<sha256 hex of the CA certificate>::<id>.<secret>");
    auto parts = splitIdSecret(std::string_view(text).substr(sep + 2));
    if (!parts)
      return Status::BadRequest(
          "join token: after '::' expected <id>.<secret> (6 and 16 characters of [a-z0-9])");
    t.caHash = std::string(head.substr(kPrefix.size()));
    t.id = parts->first;
    t.secret = parts->second;
    return t;
  }
  if (auto parts = splitIdSecret(text)) {
    t.id = parts->first;
    t.secret = parts->second;
    return t;
  }
  t.legacy = true;
  t.secret = text;
  t.id = sha256Hex(text).substr(0, kIdLength);
  return t;
}

Result<std::string> caCertificateHash(const std::string& caPem) {
  BIO* bio = BIO_new_mem_buf(caPem.data(), static_cast<int>(caPem.size()));
  if (!bio) return Status::Internal("out of memory reading the CA certificate");
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!cert) return Status::BadRequest("the CA is not a PEM certificate");
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  X509_free(cert);
  if (n <= 0) return Status::Internal("cannot encode the CA certificate");
  std::string hash = sha256Hex(std::string_view(reinterpret_cast<const char*>(der), n));
  OPENSSL_free(der);
  return hash;
}

bool caHashMatches(const std::string& caPem, const std::string& token) {
  auto parsed = parseJoinToken(token);
  if (!parsed.ok() || parsed->caHash.empty()) return false;
  auto hash = caCertificateHash(caPem);
  return hash.ok() && constantTimeEquals(*hash, parsed->caHash);
}

Result<std::string> loadOrCreateJoinToken(const std::string& dataDir, const std::string& given,
                                          const std::string& caPem) {
  const std::string path = dataDir + "/token";
  std::string token = given;
  if (token.empty()) {
    std::ifstream in(path);
    std::getline(in, token);
    if (!token.empty()) return token;
    auto made = makeJoinToken(caPem);
    if (!made.ok()) return made.status();
    token = made->toString();
  } else if (!caPem.empty() && splitIdSecret(token)) {
    auto hash = caCertificateHash(caPem);
    if (!hash.ok()) return hash.status();
    token = std::string(kPrefix) + *hash + "::" + token;
  }
  if (auto parsed = parseJoinToken(token); !parsed.ok()) return parsed.status();
  const mode_t old = ::umask(077);
  std::ofstream out(path, std::ios::trunc);
  out << token << "\n";
  out.close();
  ::umask(old);
  if (!out) return Status::Internal("cannot write the join token to " + path);
  ::chmod(path.c_str(), 0600);
  return token;
}

bool joinTokenMatches(const JoinToken& token, const std::string& presented) {
  bool matches = constantTimeEquals(presented, token.toString());
  if (!token.legacy)
    matches = matches || constantTimeEquals(presented, token.id + "." + token.secret);
  return matches;
}

bool looksLikeJoinToken(const std::string& text) {
  return text.rfind(kPrefix, 0) == 0 || splitIdSecret(text).has_value();
}

}  // namespace minik8s
