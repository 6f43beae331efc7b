#include "api/quantity.h"

#include <limits>

namespace minik8s::api {
namespace {

constexpr std::string_view kFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kBadSuffix = "unable to parse quantity's suffix";
constexpr int32_t kNanoExponent = -9;
// Exponents beyond this are nonsense for a resource amount; rejecting them keeps every
// exponent arithmetic below far from int32 overflow.
constexpr int64_t kMaxExponent = 1'000'000'000;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The pieces of "<sign><num>.<denom><suffix>", split exactly as Kubernetes' scanner does (so
// oddities such as "." or "+" parse as zero there and here alike).
struct Scanned {
  bool positive = true;
  std::string_view num = "0";  // leading zeros stripped; "0" when empty
  std::string_view denom;
  std::string_view suffix;
};

bool scan(std::string_view s, Scanned& out) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    out.positive = s[0] != '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) return true;
  size_t start = pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos > start) out.num = s.substr(start, pos - start);
  if (pos >= end) return true;
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && isDigit(s[pos])) ++pos;
    out.denom = s.substr(start, pos - start);
    if (pos >= end) return true;
  }
  const size_t suffixStart = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos < end) return false;
  out.suffix = s.substr(suffixStart);
  return true;
}

struct Suffix {
  int base = 10;
  int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

bool interpretSuffix(std::string_view s, Suffix& out) {
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (const auto& [text, exp] : kDecimal) {
    if (s == text) {
      out = {10, exp, Quantity::Format::kDecimalSI};
      return true;
    }
  }
  for (const auto& [text, exp] : kBinary) {
    if (s == text) {
      out = {2, exp, Quantity::Format::kBinarySI};
      return true;
    }
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  std::string_view rest = s.substr(1);
  bool negative = false;
  if (rest[0] == '+' || rest[0] == '-') {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return false;
  int64_t exp = 0;
  for (char c : rest) {
    if (!isDigit(c)) return false;
    exp = exp * 10 + (c - '0');
    if (exp > kMaxExponent) return false;
  }
  out = {10, negative ? -exp : exp, Quantity::Format::kDecimalExponent};
  return true;
}

// digits *= factor, for a decimal digit string without sign.
void multiplySmall(std::string& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    uint64_t v = static_cast<uint64_t>(*it - '0') * factor + carry;
    *it = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
}

// digits += 1.
void incrementDigits(std::string& digits) {
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits.insert(digits.begin(), '1');
}

// The magnitude of a digit string as uint64, or false when it does not fit.
bool digitsToU64(std::string_view digits, size_t trailingZeros, uint64_t& out) {
  if (digits.size() + trailingZeros > 20) return false;
  unsigned __int128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  for (size_t i = 0; i < trailingZeros; ++i) v *= 10;
  if (v > std::numeric_limits<uint64_t>::max()) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

std::string_view decimalSuffix(int32_t exponent, bool& found) {
  found = true;
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 0:
      return "";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      found = false;
      return "";
  }
}

constexpr std::string_view kBinarySuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

}  // namespace

void Quantity::normalize() {
  size_t first = digits_.find_first_not_of('0');
  if (first == std::string::npos) {
    digits_.clear();
    exponent_ = 0;
    negative_ = false;
    return;
  }
  digits_.erase(0, first);
  size_t last = digits_.find_last_not_of('0');
  exponent_ += static_cast<int32_t>(digits_.size() - 1 - last);
  digits_.resize(last + 1);
}

Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return Status::BadRequest(std::string(kFormatWrong));
  Quantity q;
  if (text == "0") return q;
  Scanned sc;
  if (!scan(text, sc)) return Status::BadRequest(std::string(kFormatWrong));
  Suffix suffix;
  if (!interpretSuffix(sc.suffix, suffix)) return Status::BadRequest(std::string(kBadSuffix));
  if (sc.num.size() + sc.denom.size() > 100000) {
    return Status::BadRequest("unable to parse numeric part of quantity");
  }

  // Kubernetes keeps the input text as the printed form when it is already canonical; the
  // conditions mirror its int64 fast path so that e.g. "+1" or "1E3" print back unchanged.
  const std::string shifted = std::string(sc.num) + std::string(sc.denom);
  const int64_t denomLen = static_cast<int64_t>(sc.denom.size());
  if (suffix.format == Format::kBinarySI) {
    const int64_t precision =
        15 - static_cast<int64_t>(sc.num.size()) - suffix.exponent * 3 / 10 - 1;
    if (sc.denom.empty() && precision >= 0) {
      uint64_t v = 0;
      if (digitsToU64(sc.num, 0, v) && (v & 7) != 0 &&
          v <= (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) >> suffix.exponent)) {
        q.verbatim_ = std::string(text);
      }
    }
  } else {
    const int64_t precision = 18 - static_cast<int64_t>(shifted.size());
    const int64_t scale = suffix.exponent - denomLen;
    if (precision >= 0 && scale >= kNanoExponent && scale % 3 == 0 &&
        !(shifted.size() >= 3 && shifted.ends_with("000")) && shifted[0] != '0') {
      q.verbatim_ = std::string(text);
    }
  }

  q.negative_ = !sc.positive;
  q.format_ = suffix.format;
  q.digits_ = shifted;
  int64_t exponent = -denomLen;
  if (suffix.base == 10) {
    exponent += suffix.exponent;
  } else {
    for (int64_t left = suffix.exponent; left > 0; left -= 20) {
      multiplySmall(q.digits_, 1u << std::min<int64_t>(left, 20));
    }
  }
  if (exponent < -kMaxExponent || exponent > kMaxExponent) {
    return Status::BadRequest(std::string(kBadSuffix));
  }
  q.exponent_ = static_cast<int32_t>(exponent);
  q.normalize();
  if (q.isZero()) return q;
  // Trailing zeros move into the exponent: keep the printed form parseable (fuzzing found
  // "1000E1000000000", printed with an exponent beyond the limit).
  if (q.exponent_ > kMaxExponent) return Status::BadRequest(std::string(kBadSuffix));

  // Round anything finer than 1n up (away from zero): asking for a sliver gets a sliver.
  if (q.exponent_ < kNanoExponent) {
    const size_t drop = static_cast<size_t>(kNanoExponent - q.exponent_);
    if (drop >= q.digits_.size()) {
      q.digits_ = "1";
    } else {
      q.digits_.resize(q.digits_.size() - drop);  // the dropped tail is non-zero
      incrementDigits(q.digits_);
    }
    q.exponent_ = kNanoExponent;
    q.normalize();
  }
  if (q.format_ == Format::kBinarySI) {
    // Kubernetes caps binary quantities at 2^63-1 and prints sub-unit ones as decimal.
    Quantity cap = fromValue(std::numeric_limits<int64_t>::max());
    if (q.compareMagnitude(cap) > 0) {
      q.digits_ = cap.digits_;
      q.exponent_ = cap.exponent_;
    }
    if (q.exponent_ < 0 && q.digits_.size() <= static_cast<size_t>(-q.exponent_)) {
      q.format_ = Format::kDecimalSI;
    }
  }
  return q;
}

Result<Quantity> Quantity::fromJson(const json& value) {
  if (value.is_string()) return parse(value.get_ref<const std::string&>());
  if (value.is_number()) return parse(value.dump());
  return Status::BadRequest(std::string(kFormatWrong));
}

Quantity Quantity::fromValue(int64_t value, Format format) {
  Quantity q;
  q.format_ = format;
  q.negative_ = value < 0;
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  q.digits_ = std::to_string(magnitude);
  q.normalize();
  return q;
}

Quantity Quantity::fromMilli(int64_t milli) {
  Quantity q = fromValue(milli);
  if (!q.isZero()) q.exponent_ -= 3;
  return q;
}

int64_t Quantity::scaledValue(int32_t scale) const {
  if (isZero()) return 0;
  const int64_t shift = static_cast<int64_t>(exponent_) - scale;
  uint64_t magnitude = 0;
  bool fits = true;
  if (shift >= 0) {
    fits = digitsToU64(digits_, static_cast<size_t>(std::min<int64_t>(shift, 64)), magnitude);
  } else if (static_cast<uint64_t>(-shift) >= digits_.size()) {
    magnitude = 1;
  } else {
    // digits_ has no trailing zeros, so the dropped part is non-zero: round away from zero.
    fits = digitsToU64(std::string_view(digits_).substr(0, digits_.size() + shift), 0, magnitude);
    if (fits) fits = ++magnitude != 0;
  }
  constexpr uint64_t kMaxPositive = std::numeric_limits<int64_t>::max();
  if (negative_) {
    if (!fits || magnitude > kMaxPositive + 1) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(0 - magnitude);
  }
  if (!fits || magnitude > kMaxPositive) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(magnitude);
}

int64_t Quantity::milliValue() const { return scaledValue(-3); }

int64_t Quantity::value() const { return scaledValue(0); }

int Quantity::compareMagnitude(const Quantity& other) const {
  if (isZero() || other.isZero()) return (isZero() ? 0 : 1) - (other.isZero() ? 0 : 1);
  const int64_t order = static_cast<int64_t>(digits_.size()) + exponent_;
  const int64_t otherOrder = static_cast<int64_t>(other.digits_.size()) + other.exponent_;
  if (order != otherOrder) return order < otherOrder ? -1 : 1;
  // Same magnitude order: the digit strings align at their first digit.
  int c = digits_.compare(other.digits_);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int Quantity::compare(const Quantity& other) const {
  if (sign() != other.sign()) return sign() < other.sign() ? -1 : 1;
  int magnitude = compareMagnitude(other);
  return negative_ ? -magnitude : magnitude;
}

std::string Quantity::canonicalDecimal(bool exponentForm) const {
  std::string out = negative_ ? "-" : "";
  out += digits_;
  int32_t exponent = exponent_;
  // The exponent goes down to a multiple of three: no fractional digits, largest suffix.
  int32_t extra = ((exponent % 3) + 3) % 3;
  out.append(static_cast<size_t>(extra), '0');
  exponent -= extra;
  bool found = false;
  std::string_view suffix = decimalSuffix(exponent, found);
  if (!exponentForm && found) return out + std::string(suffix);
  // Kubernetes has no SI suffix beyond E; an exponent keeps such values readable and exact.
  if (exponent != 0) out += "e" + std::to_string(exponent);
  return out;
}

std::string Quantity::toString() const {
  if (!verbatim_.empty()) return verbatim_;
  if (isZero()) return "0";
  switch (format_) {
    case Format::kDecimalExponent:
      return canonicalDecimal(true);
    case Format::kDecimalSI:
      return canonicalDecimal(false);
    case Format::kBinarySI:
      break;
  }
  uint64_t magnitude = 0;
  if (exponent_ < 0 || !digitsToU64(digits_, static_cast<size_t>(exponent_), magnitude) ||
      magnitude < 1024) {
    return canonicalDecimal(false);  // fractions and small values print as decimal
  }
  size_t power = 0;
  while (power + 1 < std::size(kBinarySuffixes) && magnitude % 1024 == 0) {
    magnitude /= 1024;
    ++power;
  }
  return (negative_ ? "-" : "") + std::to_string(magnitude) + std::string(kBinarySuffixes[power]);
}

}  // namespace minik8s::api
