#include "api/jsonpath.h"

#include <cctype>

namespace minik8s::api {
namespace {

Status bad(const std::string& expr, const std::string& why) {
  return Status::BadRequest("unsupported JSONPath expression \"" + expr + "\": " + why);
}

bool fieldChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$';
}

// Reads a quoted string at s[i] ('x' or "x"); i ends after the closing quote.
bool readQuoted(const std::string& s, size_t& i, std::string& out) {
  const char q = s[i];
  if (q != '\'' && q != '"') return false;
  for (++i; i < s.size() && s[i] != q; ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) ++i;
    out.push_back(s[i]);
  }
  if (i >= s.size()) return false;
  ++i;
  return true;
}

}  // namespace

Result<JsonPath> JsonPath::parse(const std::string& expression) {
  JsonPath p;
  p.expression_ = expression;
  std::string s = expression;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  if (s.size() >= 2 && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  if (!s.empty() && s.front() == '$') s.erase(0, 1);
  if (s.empty() || (s[0] != '.' && s[0] != '[')) return bad(expression, "must start with '.'");
  size_t i = 0;
  while (i < s.size()) {
    Step step;
    if (s[i] == '.') {
      ++i;
      if (i < s.size() && s[i] == '.') return bad(expression, "recursive descent is not supported");
      if (i < s.size() && s[i] == '*') {
        step.kind = Step::Kind::kWildcard;
        ++i;
      } else {
        size_t start = i;
        while (i < s.size() && fieldChar(s[i])) ++i;
        if (i == start) return bad(expression, "empty field name at offset " + std::to_string(i));
        step.field = s.substr(start, i - start);
      }
    } else if (s[i] == '[') {
      ++i;
      if (i < s.size() && (s[i] == '\'' || s[i] == '"')) {
        if (!readQuoted(s, i, step.field)) return bad(expression, "unterminated quoted field");
      } else if (i < s.size() && s[i] == '*') {
        step.kind = Step::Kind::kWildcard;
        ++i;
      } else if (i + 1 < s.size() && s[i] == '?' && s[i + 1] == '(') {
        step.kind = Step::Kind::kFilter;
        size_t close = s.find(")]", i);
        if (close == std::string::npos) return bad(expression, "unterminated filter");
        std::string f = s.substr(i + 2, close - i - 2);
        i = close + 1;
        size_t j = 0;
        if (f.empty() || f[0] != '@') return bad(expression, "a filter must start with @");
        ++j;
        while (j < f.size() && f[j] == '.') {
          ++j;
          size_t start = j;
          while (j < f.size() && fieldChar(f[j])) ++j;
          if (j == start) return bad(expression, "empty field in filter");
          step.lhs.push_back(f.substr(start, j - start));
        }
        while (j < f.size() && f[j] == ' ') ++j;
        if (j < f.size()) {
          if (f.compare(j, 2, "==") == 0) {
            j += 2;
          } else if (f.compare(j, 2, "!=") == 0) {
            step.notEquals = true;
            j += 2;
          } else {
            return bad(expression, "filters support == and != only");
          }
          while (j < f.size() && f[j] == ' ') ++j;
          std::string literal = f.substr(j);
          while (!literal.empty() && literal.back() == ' ') literal.pop_back();
          if (!literal.empty() && (literal[0] == '\'' || literal[0] == '"')) {
            std::string text;
            size_t k = 0;
            if (!readQuoted(literal, k, text) || k != literal.size()) {
              return bad(expression, "bad string in filter");
            }
            step.value = text;
          } else {
            json v = json::parse(literal, nullptr, false);
            if (v.is_discarded()) return bad(expression, "bad literal in filter");
            step.value = v;
          }
          step.hasValue = true;
        }
      } else {
        size_t start = i;
        if (i < s.size() && s[i] == '-') ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        if (i == start || s.substr(start, i - start) == "-") {
          return bad(expression, "slices and unions are not supported");
        }
        step.kind = Step::Kind::kIndex;
        step.index = std::stol(s.substr(start, i - start));
      }
      if (i >= s.size() || s[i] != ']') return bad(expression, "expected ']'");
      ++i;
    } else {
      return bad(expression, std::string("unexpected '") + s[i] + "'");
    }
    p.steps_.push_back(std::move(step));
  }
  return p;
}

std::vector<json> JsonPath::evaluate(const json& root) const {
  std::vector<const json*> current = {&root};
  for (const auto& step : steps_) {
    std::vector<const json*> next;
    for (const json* v : current) {
      switch (step.kind) {
        case Step::Kind::kField:
          if (v->is_object()) {
            auto it = v->find(step.field);
            if (it != v->end()) next.push_back(&*it);
          }
          break;
        case Step::Kind::kIndex:
          if (v->is_array()) {
            long n = static_cast<long>(v->size());
            long k = step.index < 0 ? n + step.index : step.index;
            if (k >= 0 && k < n) next.push_back(&(*v)[static_cast<size_t>(k)]);
          }
          break;
        case Step::Kind::kWildcard:
          if (v->is_array() || v->is_object()) {
            for (const auto& e : *v) next.push_back(&e);
          }
          break;
        case Step::Kind::kFilter:
          if (!v->is_array()) break;
          for (const auto& e : *v) {
            const json* x = &e;
            for (const auto& f : step.lhs) {
              if (!x->is_object() || !x->contains(f)) {
                x = nullptr;
                break;
              }
              x = &(*x)[f];
            }
            bool keep = step.hasValue ? (x && *x == step.value) != step.notEquals
                                      : (x != nullptr && !x->is_null() && *x != false);
            if (keep) next.push_back(&e);
          }
          break;
      }
    }
    current = std::move(next);
  }
  std::vector<json> out;
  out.reserve(current.size());
  for (const json* v : current) out.push_back(*v);
  return out;
}

json JsonPath::first(const json& root) const {
  auto all = evaluate(root);
  return all.empty() ? json() : all.front();
}

std::string JsonPath::pointer() const {
  std::string out;
  for (const auto& step : steps_) {
    if (step.kind != Step::Kind::kField) return "";
    out += "/";
    for (char c : step.field) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace minik8s::api
