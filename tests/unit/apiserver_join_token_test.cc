#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "apiserver/join_token.h"
#include "common/pki.h"

namespace minik8s::apiserver {
namespace {

class JoinTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = pki::createCA("minik8s-ca");
    ASSERT_TRUE(ca.ok()) << ca.status().message();
    caPem = ca->certPem;
    auto other = pki::createCA("other-ca");
    ASSERT_TRUE(other.ok());
    otherCaPem = other->certPem;
    dir = std::filesystem::temp_directory_path() /
          ("minik8s-join-token-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string caPem, otherCaPem;
  std::string dir;
};

TEST_F(JoinTokenTest, NewTokenCarriesTheCaHash) {
  auto t = makeJoinToken(caPem);
  ASSERT_TRUE(t.ok());
  const std::string text = t->toString();
  EXPECT_TRUE(std::regex_match(text, std::regex("K10[0-9a-f]{64}::[a-z0-9]{6}\\.[a-z0-9]{16}")))
      << text;
  auto hash = caCertificateHash(caPem);
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(text.substr(3, 64), *hash);
  EXPECT_TRUE(caHashMatches(caPem, text));
  EXPECT_FALSE(caHashMatches(otherCaPem, text));
  // Two tokens never share a secret.
  EXPECT_NE(makeJoinToken(caPem)->secret, t->secret);
}

TEST_F(JoinTokenTest, ParsesEveryShape) {
  const std::string hash(64, 'a');
  auto full = parseJoinToken("K10" + hash + "::abcdef.0123456789abcdef");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->caHash, hash);
  EXPECT_EQ(full->id, "abcdef");
  EXPECT_EQ(full->secret, "0123456789abcdef");
  EXPECT_FALSE(full->legacy);
  EXPECT_EQ(full->toString(), "K10" + hash + "::abcdef.0123456789abcdef");

  auto bare = parseJoinToken("abcdef.0123456789abcdef");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->caHash, "");
  EXPECT_EQ(bare->id, "abcdef");
  EXPECT_EQ(bare->toString(), "abcdef.0123456789abcdef");

  auto legacy = parseJoinToken("K10deadbeef");
  ASSERT_TRUE(legacy.ok());
  EXPECT_TRUE(legacy->legacy);
  EXPECT_EQ(legacy->caHash, "");
  EXPECT_EQ(legacy->id.size(), 6u);
  EXPECT_EQ(legacy->toString(), "K10deadbeef");
  EXPECT_FALSE(caHashMatches(caPem, "K10deadbeef"));

  EXPECT_FALSE(parseJoinToken("").ok());
  EXPECT_FALSE(parseJoinToken("K10abc::abcdef.0123456789abcdef").ok());  // short hash
  EXPECT_FALSE(parseJoinToken("K10" + std::string(64, 'A') + "::abcdef.0123456789abcdef").ok());
  EXPECT_FALSE(parseJoinToken("K10" + hash + "::abcdef.short").ok());
  EXPECT_FALSE(parseJoinToken("K10" + hash + "::ABCDEF.0123456789abcdef").ok());
  EXPECT_FALSE(parseJoinToken("X10" + hash + "::abcdef.0123456789abcdef").ok());
}

TEST_F(JoinTokenTest, HashOfGarbageIsAnError) {
  EXPECT_FALSE(caCertificateHash("not a certificate").ok());
  EXPECT_FALSE(caHashMatches("not a certificate", makeJoinToken(caPem)->toString()));
}

TEST_F(JoinTokenTest, LoadOrCreateKeepsTheStoredToken) {
  auto first = loadOrCreateJoinToken(dir, "", caPem);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(caHashMatches(caPem, *first));
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = loadOrCreateJoinToken(dir, "", caPem);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  // A given id.secret gets the CA hash; a given legacy token is kept as it is.
  auto given = loadOrCreateJoinToken(dir, "abcdef.0123456789abcdef", caPem);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(*given, "K10" + *caCertificateHash(caPem) + "::abcdef.0123456789abcdef");
  auto legacy = loadOrCreateJoinToken(dir, "my-old-secret", caPem);
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(*legacy, "my-old-secret");
  EXPECT_EQ(*loadOrCreateJoinToken(dir, "", caPem), "my-old-secret");
  // Without a CA: a token without hash.
  std::filesystem::remove(dir + "/token");
  auto plain = loadOrCreateJoinToken(dir, "");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(std::regex_match(*plain, std::regex("[a-z0-9]{6}\\.[a-z0-9]{16}"))) << *plain;
}

TEST_F(JoinTokenTest, AuthenticatorNamesTheBootstrapUser) {
  auto token = makeJoinToken(caPem);
  ASSERT_TRUE(token.ok());
  JoinTokenAuthenticator authn(*token);
  for (const std::string& presented : {token->toString(), token->id + "." + token->secret}) {
    auto r = authn.authenticate(presented);
    ASSERT_TRUE(r.has_value()) << presented;
    ASSERT_TRUE(r->ok());
    EXPECT_EQ((*r)->name, "system:bootstrap:" + token->id);
    EXPECT_EQ((*r)->groups, std::vector<std::string>{"system:bootstrappers"});
  }
  // Its kind of token, wrong secret: 401.
  auto wrong = authn.authenticate(token->id + ".0000000000000000");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->status().code(), 401);
  auto wrongK10 =
      authn.authenticate("K10" + std::string(64, '0') + "::" + token->id + "." + token->secret);
  ASSERT_TRUE(wrongK10.has_value());
  EXPECT_EQ(wrongK10->status().code(), 401);
  // Someone else's kind of token (a JWT): not ours to judge.
  EXPECT_FALSE(authn.authenticate("eyJhbGciOiJSUzI1NiJ9.e30.sig").has_value());
}

TEST_F(JoinTokenTest, LegacyTokenAuthenticatesOnlyWhole) {
  auto token = parseJoinToken("K10legacysecretvalue");
  ASSERT_TRUE(token.ok());
  JoinTokenAuthenticator authn(*token);
  auto ok = authn.authenticate("K10legacysecretvalue");
  ASSERT_TRUE(ok.has_value() && ok->ok());
  EXPECT_EQ((*ok)->name, "system:bootstrap:" + token->id);
  auto bad = authn.authenticate("K10legacysecretvaluf");
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());
}

}  // namespace
}  // namespace minik8s::apiserver
