#include "api/validation/name_rules.h"

#include <arpa/inet.h>

#include <initializer_list>

namespace minik8s::api::validation {
namespace {

bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return isLower(c) || (c >= 'A' && c <= 'Z'); }
bool isLowerAlnum(char c) { return isLower(c) || isDigit(c); }
bool isAlnum(char c) { return isAlpha(c) || isDigit(c); }

std::string maxLenError(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

// Kubernetes' RegexError: "<msg> (e.g. 'a',  or 'b', regex used for validation is '<re>')". The
// doubled space before "or" is Kubernetes' own.
std::string regexError(const std::string& msg, const std::string& re,
                       std::initializer_list<const char*> examples) {
  std::string out = msg;
  if (examples.size() == 0) return out + " (regex used for validation is '" + re + "')";
  out += " (e.g. ";
  bool first = true;
  for (const char* e : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'" + std::string(e) + "', ";
  }
  return out + "regex used for validation is '" + re + "')";
}

const char* const kLabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const char* const kSubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const char* const kDNS1035Fmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
const char* const kQualifiedFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const char* const kQualifiedMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool matchesLabel(std::string_view v) {
  if (v.empty() || !isLowerAlnum(v.front()) || !isLowerAlnum(v.back())) return false;
  for (char c : v) {
    if (!isLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool matchesSubdomain(std::string_view v) {
  if (v.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = v.find('.', start);
    if (!matchesLabel(v.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool matchesQualified(std::string_view v) {
  if (v.empty() || !isAlnum(v.front()) || !isAlnum(v.back())) return false;
  for (char c : v) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Messages chDirPrefix(std::string_view v) {
  if (v == ".") return {"must not be '.'"};
  if (v == "..") return {"must not be '..'"};
  if (v.substr(0, 2) == "..") return {"must not start with '..'"};
  return {};
}

Messages prefixed(Messages msgs, const std::string& prefix) {
  for (auto& m : msgs) m = prefix + m;
  return msgs;
}

// Kubernetes checks a generateName prefix as if its trailing '-' (and the character before it)
// were an "a": "web-" is checked as "wea".
std::string maskTrailingDash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-') {
    return std::string(name.substr(0, name.size() - 2)) + "a";
  }
  return std::string(name);
}

}  // namespace

Messages isDNS1123Label(std::string_view value) {
  Messages errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!matchesLabel(value)) {
    if (matchesSubdomain(value)) {
      errs.push_back("must not contain dots");
    } else {
      errs.push_back(regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
          "and must start and end with an alphanumeric character",
          kLabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

Messages isDNS1123Subdomain(std::string_view value) {
  Messages errs;
  if (value.size() > 253) errs.push_back(maxLenError(253));
  if (!matchesSubdomain(value)) {
    errs.push_back(regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
        "'.', and must start and end with an alphanumeric character",
        kSubdomainFmt, {"example.com"}));
  }
  return errs;
}

Messages isDNS1035Label(std::string_view value) {
  Messages errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!matchesLabel(value) || !isLower(value.front())) {
    errs.push_back(regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character",
        kDNS1035Fmt, {"my-name", "abc-123"}));
  }
  return errs;
}

Messages isQualifiedName(std::string_view value) {
  Messages errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name " +
                     regexError(kQualifiedMsg, kQualifiedFmt, {"MyName", "my.name", "123-abc"}) +
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (auto& m : prefixed(isDNS1123Subdomain(prefix), "prefix part ")) errs.push_back(m);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part " + maxLenError(63));
  }
  if (!matchesQualified(name)) {
    errs.push_back("name part " +
                   regexError(kQualifiedMsg, kQualifiedFmt, {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

Messages isLabelValue(std::string_view value) {
  Messages errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!value.empty() && !matchesQualified(value)) {
    errs.push_back(regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character",
        std::string("(") + kQualifiedFmt + ")?", {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

Messages isConfigMapKey(std::string_view value) {
  Messages errs;
  if (value.size() > 253) errs.push_back(maxLenError(253));
  bool ok = !value.empty();
  for (char c : value) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') ok = false;
  }
  if (!ok) {
    errs.push_back(
        regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                   "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  }
  for (auto& m : chDirPrefix(value)) errs.push_back(m);
  return errs;
}

Messages isEnvVarName(std::string_view value) {
  Messages errs;
  bool ok = !value.empty() && !isDigit(value.front());
  for (char c : value) {
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') ok = false;
  }
  if (!ok) {
    errs.push_back(regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', "
        "'-', or '.', and must not start with a digit",
        "[-._a-zA-Z][-._a-zA-Z0-9]*", {"my.env-name", "MY_ENV.NAME", "MyEnvName1"}));
  }
  for (auto& m : chDirPrefix(value)) errs.push_back(m);
  return errs;
}

Messages isValidPortNum(int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

Messages isValidPortName(std::string_view value) {
  Messages errs;
  if (value.size() > 15) errs.push_back(maxLenError(15));
  bool charset = !value.empty();
  bool letter = false;
  for (char c : value) {
    if (!isLowerAlnum(c) && c != '-') charset = false;
    if (isLower(c)) letter = true;
  }
  if (!charset) {
    errs.push_back("must contain only alphanumeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!letter) errs.push_back("must contain at least one letter (a-z)");
  if (value.find("--") != std::string_view::npos) {
    errs.push_back("must not contain consecutive hyphens");
  }
  if (!value.empty() && (value.front() == '-' || value.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen");
  }
  return errs;
}

Messages isPathSegmentName(std::string_view value) {
  if (value == "." || value == "..") return {"may not be '" + std::string(value) + "'"};
  Messages errs;
  if (value.find('/') != std::string_view::npos) errs.push_back("may not contain '/'");
  if (value.find('%') != std::string_view::npos) errs.push_back("may not contain '%'");
  return errs;
}

Messages nameIsDNSSubdomain(std::string_view name, bool prefix) {
  return isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
}

Messages nameIsDNSLabel(std::string_view name, bool prefix) {
  return isDNS1123Label(prefix ? maskTrailingDash(name) : name);
}

Messages nameIsDNS1035Label(std::string_view name, bool prefix) {
  return isDNS1035Label(prefix ? maskTrailingDash(name) : name);
}

bool isIPv4(std::string_view value) {
  int parts = 0;
  size_t i = 0;
  while (true) {
    size_t start = i;
    int64_t n = 0;
    while (i < value.size() && isDigit(value[i]) && i - start < 4) n = n * 10 + (value[i++] - '0');
    if (i == start || i - start > 3 || n > 255) return false;
    ++parts;
    if (i == value.size()) return parts == 4;
    if (value[i] != '.' || parts == 4) return false;
    ++i;
  }
}

bool isIPv6(std::string_view value) {
  if (value.find(':') == std::string_view::npos || value.size() > 45) return false;
  std::string s(value);
  unsigned char buf[16];
  return inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace minik8s::api::validation
