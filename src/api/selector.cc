#include "api/selector.h"

#include <algorithm>
#include <charconv>

namespace minik8s::api {
namespace {

using Operator = LabelSelector::Operator;

// ---- label key and value syntax (Kubernetes' IsQualifiedName / IsValidLabelValue) ----

constexpr std::string_view kQualifiedNameFormat =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr std::string_view kLabelValueFormat =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
constexpr std::string_view kSubdomainFormat =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], non-empty.
bool isQualifiedToken(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty()) return false;
    auto lowerAlnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lowerAlnum(label.front()) || !lowerAlnum(label.back())) return false;
    for (char c : label) {
      if (!lowerAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string invalid(std::string_view field, std::string_view value, std::string_view detail) {
  return std::string(field) + ": Invalid value: " +
         json(std::string(value)).dump(-1, ' ', false, json::error_handler_t::replace) + ": " +
         std::string(detail);
}

std::vector<std::string> labelKeyErrors(std::string_view key) {
  std::vector<std::string> errors;
  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) {
      errors.push_back("a qualified name " + std::string(kQualifiedNameFormat) +
                       " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')");
      return errors;
    }
    if (prefix.empty()) {
      errors.push_back("prefix part must be non-empty");
    } else if (prefix.size() > 253) {
      errors.push_back("prefix part must be no more than 253 characters");
    } else if (!isDns1123Subdomain(prefix)) {
      errors.push_back("prefix part " + std::string(kSubdomainFormat));
    }
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errors.push_back("name part must be no more than 63 characters");
  } else if (!isQualifiedToken(name)) {
    errors.push_back("name part " + std::string(kQualifiedNameFormat));
  }
  return errors;
}

std::vector<std::string> labelValueErrors(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > 63) errors.push_back("must be no more than 63 characters");
  if (!value.empty() && !isQualifiedToken(value)) errors.emplace_back(kLabelValueFormat);
  return errors;
}

std::string joinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e;
  return out;
}

bool parseInt64(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// ---- lexer and parser for the string syntax ----

enum class Token {
  kEnd,
  kIdentifier,
  kDoesNotExist,  // !
  kNotEquals,     // !=
  kEquals,        // =
  kDoubleEquals,  // ==
  kGreaterThan,   // >
  kLessThan,      // <
  kOpenParen,
  kCloseParen,
  kComma,
  kIn,
  kNotIn,
};

bool isSpecial(char c) {
  return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

struct Lexeme {
  Token token = Token::kEnd;
  std::string_view text;
};

std::vector<Lexeme> lex(std::string_view s) {
  std::vector<Lexeme> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && isSpace(s[i])) ++i;
    if (i >= s.size()) break;
    size_t start = i;
    char c = s[i];
    if (isSpecial(c)) {
      Token t = Token::kEnd;
      if ((c == '!' || c == '=') && i + 1 < s.size() && s[i + 1] == '=') {
        t = c == '!' ? Token::kNotEquals : Token::kDoubleEquals;
        i += 2;
      } else {
        switch (c) {
          case '!':
            t = Token::kDoesNotExist;
            break;
          case '=':
            t = Token::kEquals;
            break;
          case '>':
            t = Token::kGreaterThan;
            break;
          case '<':
            t = Token::kLessThan;
            break;
          case '(':
            t = Token::kOpenParen;
            break;
          case ')':
            t = Token::kCloseParen;
            break;
          default:
            t = Token::kComma;
            break;
        }
        ++i;
      }
      out.push_back({t, s.substr(start, i - start)});
      continue;
    }
    while (i < s.size() && !isSpace(s[i]) && !isSpecial(s[i])) ++i;
    std::string_view word = s.substr(start, i - start);
    Token t = word == "in" ? Token::kIn : (word == "notin" ? Token::kNotIn : Token::kIdentifier);
    out.push_back({t, word});
  }
  out.push_back({Token::kEnd, ""});
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : lexemes_(lex(text)) {}

  Result<std::vector<LabelSelector::Requirement>> parse() {
    std::vector<LabelSelector::Requirement> out;
    while (true) {
      const Lexeme& first = peek();
      if (first.token == Token::kEnd && out.empty()) return out;
      if (first.token != Token::kIdentifier && first.token != Token::kDoesNotExist &&
          !isKeyword(first.token)) {
        return error("found '" + describe(first) +
                     "', expected: !, identifier, or 'end of string'");
      }
      auto requirement = parseRequirement();
      if (!requirement.ok()) return requirement.status();
      out.push_back(std::move(requirement).value());
      const Lexeme& next = consume();
      if (next.token == Token::kEnd) return out;
      if (next.token != Token::kComma) {
        return error("found '" + describe(next) + "', expected: ',' or 'end of string'");
      }
      if (peek().token == Token::kEnd) {
        return error("found '" + describe(peek()) + "', expected: identifier or '!'");
      }
    }
  }

 private:
  std::vector<Lexeme> lexemes_;
  size_t pos_ = 0;

  const Lexeme& peek() const { return lexemes_[pos_]; }
  const Lexeme& consume() {
    const Lexeme& l = lexemes_[pos_];
    if (pos_ + 1 < lexemes_.size()) ++pos_;
    return l;
  }
  static bool isKeyword(Token t) { return t == Token::kIn || t == Token::kNotIn; }
  static std::string describe(const Lexeme& l) {
    return l.token == Token::kEnd ? "end of string" : std::string(l.text);
  }
  static Status error(std::string message) {
    return Status::BadRequest("unable to parse requirement: " + message);
  }

  Result<LabelSelector::Requirement> parseRequirement() {
    LabelSelector::Requirement r;
    if (peek().token == Token::kDoesNotExist) {
      consume();
      const Lexeme& key = consume();
      if (key.token != Token::kIdentifier && !isKeyword(key.token)) {
        return error("found '" + describe(key) + "', expected: identifier after '!'");
      }
      r.key = std::string(key.text);
      r.op = Operator::kDoesNotExist;
      return r;
    }
    r.key = std::string(consume().text);
    const Lexeme& op = peek();
    if (op.token == Token::kEnd || op.token == Token::kComma) {
      r.op = Operator::kExists;
      return r;
    }
    consume();
    switch (op.token) {
      case Token::kEquals:
        r.op = Operator::kEquals;
        break;
      case Token::kDoubleEquals:
        r.op = Operator::kDoubleEquals;
        break;
      case Token::kNotEquals:
        r.op = Operator::kNotEquals;
        break;
      case Token::kGreaterThan:
        r.op = Operator::kGreaterThan;
        break;
      case Token::kLessThan:
        r.op = Operator::kLessThan;
        break;
      case Token::kIn:
        r.op = Operator::kIn;
        break;
      case Token::kNotIn:
        r.op = Operator::kNotIn;
        break;
      default:
        return error("found '" + describe(op) +
                     "', expected: '=', '!=', '==', 'in', 'notin', '>' or '<'");
    }
    if (r.op == Operator::kIn || r.op == Operator::kNotIn) {
      auto status = parseValueList(r.values);
      if (!status.ok()) return status;
      return r;
    }
    // A single value; "k=" selects the empty value.
    const Lexeme& value = peek();
    if (value.token == Token::kEnd || value.token == Token::kComma) {
      r.values.emplace_back();
    } else if (value.token == Token::kIdentifier || isKeyword(value.token)) {
      r.values.emplace_back(consume().text);
    } else {
      return error("found '" + describe(value) + "', expected: identifier");
    }
    return r;
  }

  Status parseValueList(std::vector<std::string>& values) {
    if (consume().token != Token::kOpenParen) {
      return error("found '" + describe(lexemes_[pos_ - 1]) + "', expected: '('");
    }
    // "(a,,b)" and "()" hold empty values, as in Kubernetes.
    bool expectValue = true;
    while (true) {
      const Lexeme& l = consume();
      if (l.token == Token::kCloseParen) {
        if (expectValue) values.emplace_back();
        return Status::Ok();
      }
      if (l.token == Token::kComma) {
        if (expectValue) values.emplace_back();
        expectValue = true;
        continue;
      }
      if ((l.token == Token::kIdentifier || isKeyword(l.token)) && expectValue) {
        values.emplace_back(l.text);
        expectValue = false;
        continue;
      }
      return error("found '" + describe(l) + "', expected: ',', ')' or identifier");
    }
  }
};

}  // namespace

bool LabelSelector::Requirement::matches(const json& labels) const {
  const std::string* actual = nullptr;
  if (labels.is_object()) {
    auto it = labels.find(key);
    if (it != labels.end() && it->is_string()) actual = &it->get_ref<const std::string&>();
  }
  auto contains = [&](const std::string& v) {
    return std::binary_search(values.begin(), values.end(), v);
  };
  switch (op) {
    case Operator::kEquals:
    case Operator::kDoubleEquals:
    case Operator::kIn:
      return actual != nullptr && contains(*actual);
    case Operator::kNotEquals:
    case Operator::kNotIn:
      return actual == nullptr || !contains(*actual);
    case Operator::kExists:
      return actual != nullptr;
    case Operator::kDoesNotExist:
      return actual == nullptr;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      int64_t have = 0, want = 0;
      if (actual == nullptr || values.size() != 1 || !parseInt64(*actual, have) ||
          !parseInt64(values[0], want)) {
        return false;
      }
      return op == Operator::kGreaterThan ? have > want : have < want;
    }
  }
  return false;
}

std::string LabelSelector::Requirement::toString() const {
  auto joined = [&] {
    std::string out;
    for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
    return out;
  };
  switch (op) {
    case Operator::kExists:
      return key;
    case Operator::kDoesNotExist:
      return "!" + key;
    case Operator::kEquals:
      return key + "=" + joined();
    case Operator::kDoubleEquals:
      return key + "==" + joined();
    case Operator::kNotEquals:
      return key + "!=" + joined();
    case Operator::kGreaterThan:
      return key + ">" + joined();
    case Operator::kLessThan:
      return key + "<" + joined();
    case Operator::kIn:
      return key + " in (" + joined() + ")";
    case Operator::kNotIn:
      return key + " notin (" + joined() + ")";
  }
  return key;
}

Status LabelSelector::add(Requirement r) {
  std::vector<std::string> errors;
  for (const auto& e : labelKeyErrors(r.key)) errors.push_back(invalid("key", r.key, e));
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  switch (r.op) {
    case Operator::kIn:
    case Operator::kNotIn:
      if (r.values.empty()) {
        errors.push_back(
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case Operator::kEquals:
    case Operator::kDoubleEquals:
    case Operator::kNotEquals:
      if (r.values.size() != 1) {
        errors.push_back("values: Invalid value: " +
                         json(r.values).dump(-1, ' ', false, json::error_handler_t::replace) +
                         ": exact-match compatibility requires one single value");
      }
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      if (!r.values.empty()) {
        errors.push_back("values: Invalid value: " +
                         json(r.values).dump(-1, ' ', false, json::error_handler_t::replace) +
                         ": values set must be empty for exists and does not exist");
      }
      break;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      int64_t ignored = 0;
      if (r.values.size() != 1) {
        errors.push_back("values: Invalid value: " +
                         json(r.values).dump(-1, ' ', false, json::error_handler_t::replace) +
                         ": for 'Gt', 'Lt' operators, exactly one value is required");
      } else if (!parseInt64(r.values[0], ignored)) {
        errors.push_back("values[0]: Invalid value: " +
                         json(r.values[0]).dump(-1, ' ', false, json::error_handler_t::replace) +
                         ": for 'Gt', 'Lt' operators, the value must be an integer");
      }
      break;
    }
  }
  if (r.op != Operator::kGreaterThan && r.op != Operator::kLessThan) {
    for (size_t i = 0; i < r.values.size(); ++i) {
      for (const auto& e : labelValueErrors(r.values[i])) {
        errors.push_back(
            invalid("values[" + std::to_string(i) + "][" + r.key + "]", r.values[i], e));
      }
    }
  }
  if (!errors.empty()) {
    return Status::BadRequest("unable to parse requirement: " + joinErrors(errors));
  }
  auto at = std::upper_bound(requirements_.begin(), requirements_.end(), r.key,
                             [](const std::string& k, const Requirement& x) { return k < x.key; });
  requirements_.insert(at, std::move(r));
  return Status::Ok();
}

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  auto parsed = Parser(text).parse();
  if (!parsed.ok()) return parsed.status();
  LabelSelector selector;
  for (auto& r : *parsed) {
    Status s = selector.add(std::move(r));
    if (!s.ok()) return s;
  }
  return selector;
}

Result<LabelSelector> LabelSelector::fromJson(const json& obj) {
  LabelSelector selector;
  if (obj.is_null()) {
    selector.matchesNothing_ = true;
    return selector;
  }
  if (!obj.is_object()) return Status::BadRequest("a label selector must be an object");
  if (auto it = obj.find("matchLabels"); it != obj.end() && !it->is_null()) {
    if (!it->is_object()) return Status::BadRequest("matchLabels must be an object");
    for (const auto& [key, value] : it->items()) {
      if (!value.is_string()) {
        return Status::BadRequest("matchLabels." + key + " must be a string");
      }
      Status s = selector.add({key, Operator::kEquals, {value.get<std::string>()}});
      if (!s.ok()) return s;
    }
  }
  if (auto it = obj.find("matchExpressions"); it != obj.end() && !it->is_null()) {
    if (!it->is_array()) return Status::BadRequest("matchExpressions must be a list");
    for (const auto& expr : *it) {
      if (!expr.is_object()) return Status::BadRequest("matchExpressions must hold objects");
      Requirement r;
      r.key = expr.value("key", json("")).is_string() ? expr.value("key", "") : "";
      std::string op =
          expr.value("operator", json("")).is_string() ? expr.value("operator", "") : "";
      if (op == "In") {
        r.op = Operator::kIn;
      } else if (op == "NotIn") {
        r.op = Operator::kNotIn;
      } else if (op == "Exists") {
        r.op = Operator::kExists;
      } else if (op == "DoesNotExist") {
        r.op = Operator::kDoesNotExist;
      } else {
        return Status::BadRequest(json(op).dump(-1, ' ', false, json::error_handler_t::replace) +
                                  " is not a valid label selector operator");
      }
      if (auto values = expr.find("values"); values != expr.end() && values->is_array()) {
        for (const auto& v : *values) {
          if (!v.is_string()) return Status::BadRequest("matchExpressions values must be strings");
          r.values.push_back(v.get<std::string>());
        }
      }
      Status s = selector.add(std::move(r));
      if (!s.ok()) return s;
    }
  }
  return selector;
}

bool LabelSelector::matches(const json& labels) const {
  if (matchesNothing_) return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.matches(labels); });
}

std::string LabelSelector::toString() const {
  std::string out;
  for (const auto& r : requirements_) out += (out.empty() ? "" : ",") + r.toString();
  return out;
}

}  // namespace minik8s::api
