#include "apiserver/join_token.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <openssl/rand.h>

#include <fmt/format.h>

namespace minik8s::apiserver {

namespace {
// A secret: 20 bytes from OpenSSL's CSPRNG, hex encoded.
std::string secretHex() {
  unsigned char bytes[20];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return "";
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}
}  // namespace

Result<std::string> loadOrCreateJoinToken(const std::string& dataDir, const std::string& given) {
  const std::string path = dataDir + "/token";
  std::string token = given;
  if (token.empty()) {
    std::ifstream in(path);
    std::getline(in, token);
    if (!token.empty()) return token;
    const std::string secret = secretHex();
    if (secret.empty()) return Status::Internal("no randomness for the join token");
    token = "K10" + secret;
  }
  ::umask(077);
  std::ofstream out(path, std::ios::trunc);
  out << token << "\n";
  ::umask(022);
  if (!out) return Status::Internal("cannot write the join token to " + path);
  ::chmod(path.c_str(), 0600);
  return token;
}

}  // namespace minik8s::apiserver
