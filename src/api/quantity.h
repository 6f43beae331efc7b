// Quantity: Kubernetes resource quantities ("500m", "1.5", "128Mi", "1e3") held exactly.
//
// A Quantity is a signed decimal number with at most nine fractional digits (finer input is
// rounded away from zero to 1n, as Kubernetes does) and the format its suffix had when parsed
// (binary Ki..Ei, decimal n..E, or an e/E exponent). toString() prints Kubernetes' canonical form,
// so a value that round-trips through minik8s prints exactly as kube-apiserver would print it.
// No floating point is used anywhere. Values are immutable and safe to share between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s::api {

class Quantity {
 public:
  // How the quantity is printed; remembered from the suffix it was parsed with.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Parses the Kubernetes quantity syntax. Errors are 400 BadRequest with Kubernetes' messages
  // ("quantities must match the regular expression ...", "unable to parse quantity's suffix").
  static Result<Quantity> parse(std::string_view text);
  // A quantity as it appears in JSON: a string, or a bare number (Kubernetes accepts both).
  static Result<Quantity> fromJson(const json& value);
  static Quantity fromMilli(int64_t milli);  // DecimalSI, e.g. fromMilli(1500) -> "1500m"
  static Quantity fromValue(int64_t value, Format format = Format::kDecimalSI);

  // The value in thousandths, rounded away from zero; saturates at the int64 limits.
  int64_t milliValue() const;
  // The value as an integer, rounded away from zero (Kubernetes Value()); saturates.
  int64_t value() const;
  // Canonical string form: "1500m", "1536Mi", "1e3", "0".
  std::string toString() const;
  // -1, 0 or 1 as this is less than, equal to or greater than other (exact, format ignored).
  int compare(const Quantity& other) const;

  bool isZero() const { return digits_.empty(); }
  int sign() const { return isZero() ? 0 : (negative_ ? -1 : 1); }
  Format format() const { return format_; }

  bool operator==(const Quantity& other) const { return compare(other) == 0; }
  bool operator<(const Quantity& other) const { return compare(other) < 0; }

 private:
  // Value = (negative_ ? -1 : 1) * digits_ * 10^exponent_. digits_ has no leading or trailing
  // zeros (trailing zeros are folded into exponent_); empty means zero. exponent_ >= -9.
  bool negative_ = false;
  std::string digits_;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;
  // The text this was parsed from when Kubernetes would print it back verbatim.
  std::string verbatim_;

  void normalize();
  int64_t scaledValue(int32_t scale) const;  // value * 10^-scale, rounded away from zero
  int compareMagnitude(const Quantity& other) const;
  std::string canonicalDecimal(bool exponentForm) const;
};

}  // namespace minik8s::api
