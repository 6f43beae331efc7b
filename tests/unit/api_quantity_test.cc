#include <gtest/gtest.h>

#include <limits>

#include "api/quantity.h"

namespace minik8s::api {
namespace {

Quantity mustParseQuantity(std::string_view s) {
  auto q = Quantity::parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << q.status().message();
  return q.ok() ? *q : Quantity();
}

std::string canonical(std::string_view s) { return mustParseQuantity(s).toString(); }

TEST(QuantityTest, CanonicalFormsMatchKubernetes) {
  EXPECT_EQ(canonical("500m"), "500m");
  EXPECT_EQ(canonical("1500m"), "1500m");
  EXPECT_EQ(canonical("1.5"), "1500m");
  EXPECT_EQ(canonical("0.1"), "100m");
  EXPECT_EQ(canonical("2"), "2");
  EXPECT_EQ(canonical("1000"), "1k");
  EXPECT_EQ(canonical("1000m"), "1");
  EXPECT_EQ(canonical("100k"), "100k");
  EXPECT_EQ(canonical("1G"), "1G");
  EXPECT_EQ(canonical("1000M"), "1G");
  EXPECT_EQ(canonical("1.5G"), "1500M");
  EXPECT_EQ(canonical("0.5k"), "500");
  EXPECT_EQ(canonical("10u"), "10u");
  EXPECT_EQ(canonical("1n"), "1n");
  EXPECT_EQ(canonical("-1"), "-1");
  EXPECT_EQ(canonical("-1.5"), "-1500m");
  EXPECT_EQ(canonical("0"), "0");
  EXPECT_EQ(canonical("0.0"), "0");
  EXPECT_EQ(canonical("-0"), "0");
  EXPECT_EQ(canonical("00100"), "00100");  // Kubernetes keeps it: no trailing 000
  EXPECT_EQ(canonical("5E"), "5E");
  EXPECT_EQ(canonical("12P"), "12P");
}

TEST(QuantityTest, BinaryCanonicalForms) {
  EXPECT_EQ(canonical("128Mi"), "128Mi");
  EXPECT_EQ(canonical("1Gi"), "1Gi");
  EXPECT_EQ(canonical("1024Mi"), "1Gi");
  EXPECT_EQ(canonical("1000Mi"), "1000Mi");
  EXPECT_EQ(canonical("1.5Gi"), "1536Mi");
  EXPECT_EQ(canonical("100Ki"), "100Ki");
  EXPECT_EQ(canonical("1Ei"), "1Ei");
  EXPECT_EQ(canonical("0.5Ki"), "512");  // below 1024 prints as decimal
  EXPECT_EQ(canonical("0.5Mi"), "512Ki");
  EXPECT_EQ(canonical("0.0001Ki"), "102400u");  // fraction of a unit: decimal, exact
  EXPECT_EQ(canonical("-1Ki"), "-1Ki");
  EXPECT_EQ(canonical("8Ei"), "9223372036854775807");  // capped at 2^63-1
}

TEST(QuantityTest, ExponentForms) {
  EXPECT_EQ(canonical("1e3"), "1e3");
  EXPECT_EQ(canonical("1E3"), "1E3");  // already canonical: Kubernetes keeps the text
  EXPECT_EQ(canonical("10e3"), "10e3");
  EXPECT_EQ(canonical("1000e3"), "1e6");
  EXPECT_EQ(canonical("1e-3"), "1e-3");
  EXPECT_EQ(canonical("1.5e3"), "1500");
  EXPECT_EQ(canonical("12e-1"), "1200e-3");
  EXPECT_EQ(canonical("1e0"), "1e0");
  EXPECT_EQ(canonical("1000e0"), "1e3");
  EXPECT_EQ(canonical("0.5e1"), "5");
  EXPECT_EQ(canonical("1e+3"), "1e+3");
  EXPECT_EQ(canonical("1e30"), "1e30");
}

TEST(QuantityTest, KeepsCanonicalInputVerbatimLikeKubernetes) {
  EXPECT_EQ(canonical("+1"), "+1");
  EXPECT_EQ(canonical("+1.5"), "1500m");
}

TEST(QuantityTest, RoundsBelowNanoAwayFromZero) {
  EXPECT_EQ(canonical("0.1n"), "1n");
  EXPECT_EQ(canonical("1.0000000001"), "1000000001n");
  EXPECT_EQ(canonical("-0.1n"), "-1n");
  EXPECT_EQ(canonical("1e-20"), "1e-9");
  EXPECT_EQ(canonical("1.5n"), "2n");
}

TEST(QuantityTest, MilliValueAndValue) {
  EXPECT_EQ(mustParseQuantity("500m").milliValue(), 500);
  EXPECT_EQ(mustParseQuantity("1.5").milliValue(), 1500);
  EXPECT_EQ(mustParseQuantity("2").milliValue(), 2000);
  EXPECT_EQ(mustParseQuantity("0.1").milliValue(), 100);
  EXPECT_EQ(mustParseQuantity("1e3").milliValue(), 1000000);
  EXPECT_EQ(mustParseQuantity("1Ki").milliValue(), 1024000);
  EXPECT_EQ(mustParseQuantity("1u").milliValue(), 1);  // rounded up
  EXPECT_EQ(mustParseQuantity("-1u").milliValue(), -1);
  EXPECT_EQ(mustParseQuantity("128Mi").value(), 134217728);
  EXPECT_EQ(mustParseQuantity("1Ei").value(), int64_t{1} << 60);
  EXPECT_EQ(mustParseQuantity("1500m").value(), 2);
  EXPECT_EQ(mustParseQuantity("-1500m").value(), -2);
  EXPECT_EQ(mustParseQuantity("1m").value(), 1);
  EXPECT_EQ(mustParseQuantity("7Ei").value(), int64_t{7} << 60);
  EXPECT_EQ(mustParseQuantity("0").value(), 0);
}

TEST(QuantityTest, SaturatesOnOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(mustParseQuantity("1Ei").milliValue(), kMax);
  EXPECT_EQ(mustParseQuantity("100E").value(), kMax);
  EXPECT_EQ(mustParseQuantity("-100E").value(), kMin);
  EXPECT_EQ(mustParseQuantity("1e30").milliValue(), kMax);
  EXPECT_EQ(mustParseQuantity("9223372036854775807").value(), kMax);
  EXPECT_EQ(mustParseQuantity("-9223372036854775808").value(), kMin);
  EXPECT_EQ(mustParseQuantity("9223372036854775808").value(), kMax);
}

TEST(QuantityTest, CompareIsExact) {
  EXPECT_EQ(mustParseQuantity("1").compare(mustParseQuantity("1000m")), 0);
  EXPECT_EQ(mustParseQuantity("1Ki").compare(mustParseQuantity("1024")), 0);
  EXPECT_EQ(mustParseQuantity("1k").compare(mustParseQuantity("1Ki")), -1);
  EXPECT_EQ(mustParseQuantity("1Gi").compare(mustParseQuantity("1G")), 1);
  EXPECT_EQ(mustParseQuantity("-1").compare(mustParseQuantity("1m")), -1);
  EXPECT_EQ(mustParseQuantity("-2").compare(mustParseQuantity("-1")), -1);
  EXPECT_EQ(mustParseQuantity("0").compare(mustParseQuantity("-0.5")), 1);
  EXPECT_EQ(mustParseQuantity("1.000000001").compare(mustParseQuantity("1")), 1);
  EXPECT_EQ(mustParseQuantity("1e30").compare(mustParseQuantity("1e29")), 1);
  EXPECT_EQ(mustParseQuantity("15e-1").compare(mustParseQuantity("1500m")), 0);
  EXPECT_TRUE(mustParseQuantity("100m") < mustParseQuantity("0.2"));
  EXPECT_TRUE(mustParseQuantity("2Gi") == mustParseQuantity("2048Mi"));
}

TEST(QuantityTest, FromMilliAndValue) {
  EXPECT_EQ(Quantity::fromMilli(1500).toString(), "1500m");
  EXPECT_EQ(Quantity::fromMilli(2000).toString(), "2");
  EXPECT_EQ(Quantity::fromMilli(0).toString(), "0");
  EXPECT_EQ(Quantity::fromMilli(-250).toString(), "-250m");
  EXPECT_EQ(Quantity::fromMilli(1500).milliValue(), 1500);
  EXPECT_EQ(Quantity::fromValue(134217728, Quantity::Format::kBinarySI).toString(), "128Mi");
  EXPECT_EQ(Quantity::fromValue(1000, Quantity::Format::kBinarySI).toString(), "1k");
  EXPECT_EQ(Quantity::fromValue(5000).toString(), "5k");
  EXPECT_EQ(Quantity::fromValue(std::numeric_limits<int64_t>::min()).value(),
            std::numeric_limits<int64_t>::min());
}

TEST(QuantityTest, RemembersFormat) {
  EXPECT_EQ(mustParseQuantity("1Gi").format(), Quantity::Format::kBinarySI);
  EXPECT_EQ(mustParseQuantity("1G").format(), Quantity::Format::kDecimalSI);
  EXPECT_EQ(mustParseQuantity("1e9").format(), Quantity::Format::kDecimalExponent);
  EXPECT_EQ(mustParseQuantity("0.5Ki").format(), Quantity::Format::kBinarySI);
  EXPECT_EQ(mustParseQuantity("0.0001Ki").format(), Quantity::Format::kDecimalSI);
}

TEST(QuantityTest, RejectsMalformedInput) {
  const std::string formatWrong =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  for (std::string_view bad : {"", "abc", "1.2.3", "1 Gi", "1Gi ", "1x", "1.5.", "1e3e"}) {
    auto q = Quantity::parse(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), 400) << bad;
    EXPECT_EQ(q.status().message(), formatWrong) << bad;
  }
  for (std::string_view bad : {"1K", "1Gb", "1e", "1ee3", "1e3.5", "--1", "1Mii"}) {
    auto q = Quantity::parse(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), 400) << bad;
  }
  EXPECT_EQ(Quantity::parse("1K").status().message(), "unable to parse quantity's suffix");
}

TEST(QuantityTest, FromJsonAcceptsStringsAndNumbers) {
  EXPECT_EQ(Quantity::fromJson(json("250m"))->toString(), "250m");
  EXPECT_EQ(Quantity::fromJson(json(3))->toString(), "3");
  EXPECT_EQ(Quantity::fromJson(json(0.5))->toString(), "500m");
  EXPECT_FALSE(Quantity::fromJson(json::object()).ok());
}

}  // namespace
}  // namespace minik8s::api
