// common/base64: RFC 4648 vectors in both alphabets, padded and raw; the standard decoder accepts
// and refuses exactly what Go's base64.StdEncoding does (same error offsets); the canonical
// (JWS) decoder refuses re-spellings; the lenient decoder takes hand-written text.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/base64.h"

namespace minik8s::base64 {
namespace {

// The offset in "illegal base64 data at input byte N", or nullopt when `text` decodes.
std::optional<size_t> errorOffset(std::string_view text, Encoding encoding = kStd) {
  auto decoded = decode(text, encoding);
  if (decoded.ok()) return std::nullopt;
  const std::string prefix = "illegal base64 data at input byte ";
  const std::string& message = decoded.status().message();
  EXPECT_EQ(decoded.status().code(), 400);
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  return std::stoul(message.substr(prefix.size()));
}

const std::vector<std::pair<std::string, std::string>> kRfc4648 = {{"", ""},
                                                                   {"f", "Zg=="},
                                                                   {"fo", "Zm8="},
                                                                   {"foo", "Zm9v"},
                                                                   {"foob", "Zm9vYg=="},
                                                                   {"fooba", "Zm9vYmE="},
                                                                   {"foobar", "Zm9vYmFy"}};

TEST(Base64Test, EncodesRfc4648VectorsPaddedAndRaw) {
  for (const auto& [plain, padded] : kRfc4648) {
    EXPECT_EQ(encode(plain), padded);
    std::string raw = padded.substr(0, padded.find('='));
    EXPECT_EQ(encode(plain, kRawUrl), raw);
    EXPECT_EQ(encode(plain, Encoding{.url = true}), padded);  // no '+' or '/' in these
  }
}

TEST(Base64Test, DecodesRfc4648Vectors) {
  for (const auto& [plain, padded] : kRfc4648) {
    auto decoded = decode(padded);
    ASSERT_TRUE(decoded.ok()) << padded << ": " << decoded.status().message();
    EXPECT_EQ(*decoded, plain);
    std::string raw = padded.substr(0, padded.find('='));
    auto rawDecoded = decode(raw, kRawUrl);
    ASSERT_TRUE(rawDecoded.ok()) << raw;
    EXPECT_EQ(*rawDecoded, plain);
  }
}

TEST(Base64Test, UrlAlphabetReplacesPlusAndSlash) {
  const std::string bytes = "\xfb\xff\xbf";
  EXPECT_EQ(encode(bytes), "+/+/");
  EXPECT_EQ(encode(bytes, kRawUrl), "-_-_");
  EXPECT_EQ(encode("\xfb\xff", kRawUrl), "-_8");
  EXPECT_EQ(decode("-_-_", kRawUrl).value(), bytes);
  EXPECT_EQ(errorOffset("-_-_"), 0u);           // the URL alphabet is not standard
  EXPECT_EQ(errorOffset("+/+/", kRawUrl), 0u);  // nor the other way round
}

TEST(Base64Test, RoundTripsEveryLengthAndByteValue) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (Encoding encoding : {kStd, kRawUrl, kJws, Encoding{.url = true}}) {
    for (size_t len = 0; len <= bytes.size(); len += 7) {
      const std::string part = bytes.substr(bytes.size() - len);
      const std::string text = encode(part, encoding);
      EXPECT_EQ(text.size(), encoding.padded ? (len + 2) / 3 * 4 : (len * 8 + 5) / 6);
      auto back = decode(text, encoding);
      ASSERT_TRUE(back.ok()) << text << ": " << back.status().message();
      EXPECT_EQ(*back, part);
    }
  }
}

// Go's TestDecodeCorrupt cases: what StdEncoding refuses, and at which byte.
TEST(Base64Test, StdRefusesWhatGoRefusesAtTheSameOffset) {
  const std::vector<std::pair<std::string, std::optional<size_t>>> cases = {
      {"", std::nullopt},
      {"\n", std::nullopt},
      {"AAA=\n", std::nullopt},
      {"AAAA\n", std::nullopt},
      {"!!!!", 0},
      {"====", 0},
      {"x===", 1},
      {"=AAA", 0},
      {"A=AA", 1},
      {"AA=A", 2},
      {"AA==A", 4},
      {"AAA=AAAA", 4},
      {"AAAAA", 4},
      {"AAAAAA", 4},
      {"A=", 1},
      {"A==", 1},
      {"AA=", 3},
      {"AA==", std::nullopt},
      {"AAA=", std::nullopt},
      {"AAAA", std::nullopt},
      {"AAAAAA=", 7},
      {"YWJjZA=====", 8},
      {"A!\n", 1},
      {"A=\n", 1},
      {"YWJ", 0},
      {"not base64!", 3},
      {"Zm9v Zm9v", 4}};
  for (const auto& [text, offset] : cases) EXPECT_EQ(errorOffset(text), offset) << text;
}

TEST(Base64Test, StdSkipsNewlinesButNotOtherWhitespace) {
  EXPECT_EQ(decode("Zm9v\r\nYmFy\n").value(), "foobar");
  EXPECT_EQ(decode("Zm\n9vYg=\n=\n").value(), "foob");
  EXPECT_EQ(errorOffset("Zm9v\tYmFy"), 4u);
}

TEST(Base64Test, StdAcceptsNonZeroUnusedBitsAsGoDoes) {
  EXPECT_EQ(decode("Zh==").value(), "f");  // "Zg==" is the canonical spelling
  EXPECT_EQ(decode("Zm9=").value(), "fo");
}

TEST(Base64Test, RawRefusesPaddingAndLoneDigits) {
  EXPECT_EQ(errorOffset("Zg==", kRawUrl), 2u);
  EXPECT_EQ(errorOffset("Zm9vY", kRawUrl), 4u);
  EXPECT_EQ(decode("Zh", kRawUrl).value(), "f");
}

TEST(Base64Test, CanonicalRefusesUnusedBitsAndNewlines) {
  EXPECT_EQ(decode("Zg", kJws).value(), "f");
  EXPECT_EQ(decode("Zm8", kJws).value(), "fo");
  EXPECT_TRUE(errorOffset("Zh", kJws).has_value());
  EXPECT_TRUE(errorOffset("Zm9", kJws).has_value());
  EXPECT_EQ(errorOffset("Zm9v\nZg", kJws), 4u);
  EXPECT_EQ(errorOffset("Zm9 v", kJws), 3u);
  EXPECT_EQ(errorOffset("Zm9v+A", kJws), 4u);  // standard alphabet in a JWS
  EXPECT_EQ(errorOffset("Zm9v/A", kJws), 4u);
  EXPECT_TRUE(errorOffset("Zg==", kJws).has_value());
  EXPECT_TRUE(errorOffset("Z", kJws).has_value());
}

TEST(Base64Test, LenientTakesWrappedUnpaddedText) {
  EXPECT_EQ(decodeLenient("Zm9vYg").value(), "foob");
  EXPECT_EQ(decodeLenient("Zm9vYg==").value(), "foob");
  EXPECT_EQ(decodeLenient("  Zm9v\n\tYmE=\r\n").value(), "fooba");
  EXPECT_EQ(decodeLenient("Zm9vYg==\n").value(), "foob");
  EXPECT_EQ(decodeLenient("").value(), "");
  EXPECT_FALSE(decodeLenient("Zm9v!").ok());
  EXPECT_FALSE(decodeLenient("Zm9vY").ok());  // 6 bits cannot make a byte
  EXPECT_FALSE(decodeLenient("Zg===").ok());  // at most two '='
  EXPECT_FALSE(decodeLenient("Zg=Zg").ok());  // '=' only at the end
  EXPECT_FALSE(decodeLenient("-_8").ok());    // the standard alphabet only
}

}  // namespace
}  // namespace minik8s::base64
