#include "common/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

namespace minik8s {

namespace {

// JSON strings must be UTF-8 (nlohmann's dump() throws otherwise); YAML input need not be.
struct InvalidUtf8 {};

bool isValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    // Unicode's noncharacters (U+FDD0..U+FDEF and the last two code points of every plane):
    // yaml-cpp's emitter writes U+FFFD in their place, so such a string would not read back.
    const bool nonCharacter = (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe;
    if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || nonCharacter) {
      return false;
    }
    i += len;
  }
  return true;
}

// Hand-written rather than std::regex, whose matcher recurses per character and overflows the
// stack on a long scalar (fuzzing found it with a 300 KB number).
size_t skipDigits(std::string_view s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i;
}

size_t skipSign(std::string_view s, size_t i) {
  return i < s.size() && (s[i] == '-' || s[i] == '+') ? i + 1 : i;
}

// ^[-+]?[0-9]+$
bool isYamlInt(std::string_view s) {
  size_t i = skipSign(s, 0);
  return i < s.size() && skipDigits(s, i) == s.size();
}

// ^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$
bool isYamlFloat(std::string_view s) {
  size_t i = skipSign(s, 0);
  const size_t intStart = i;
  i = skipDigits(s, i);
  bool digits = i > intStart;
  if (i < s.size() && s[i] == '.') {
    const size_t fracStart = ++i;
    i = skipDigits(s, i);
    digits = digits || i > fracStart;
  }
  if (!digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    i = skipSign(s, i + 1);
    const size_t expStart = i;
    i = skipDigits(s, i);
    if (i == expStart) return false;
  }
  return i == s.size();
}

// tag is "!" for a quoted scalar.
json scalarToJson(const std::string& tag, const std::string& s) {
  if (!isValidUtf8(s)) throw InvalidUtf8{};
  if (tag == "!") return s;  // quoted: always a string
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (isYamlInt(s)) {
    try {
      return std::stoll(s);
    } catch (...) {
      return s;
    }
  }
  if (isYamlFloat(s)) {
    try {
      return std::stod(s);
    } catch (...) {
      return s;
    }
  }
  return s;
}

struct YamlRejected {
  std::string message;
};

// Builds JSON documents straight from the parser's events. yaml-cpp's own LoadAll() is not used:
// it loops forever, allocating, on a stray ',' at document level (found by fuzzing: the body ","
// wedged a thread), and a YAML::Node graph with aliases can expand exponentially or refer to
// itself. Here a parser that stops making progress, a self-referring alias, and expansion beyond
// a budget proportional to the input are all rejected.
class JsonDocumentBuilder : public YAML::EventHandler {
 public:
  explicit JsonDocumentBuilder(size_t inputSize)
      : budget_(16 * inputSize + 1024), maxDocuments_(inputSize + 2) {}

  std::vector<json> documents;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documentCount_ > maxDocuments_ || (documentCount_ > 1 && mark.pos == lastStart_)) {
      throw YamlRejected{"unexpected content at line " + std::to_string(mark.line + 1) +
                         ", column " + std::to_string(mark.column + 1)};
    }
    lastStart_ = mark.pos;
    stack_.clear();
    anchors_.clear();
    root_ = nullptr;
  }
  void OnDocumentEnd() override {
    if (!root_.is_null()) documents.push_back(std::move(root_));
  }
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override {
    if (expectingKey()) throw YamlRejected{"a map key must be a scalar"};
    add(nullptr, anchor, 1);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw YamlRejected{"an alias refers to its own anchor"};
    const auto& [value, size] = it->second;
    if (expectingKey()) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
        throw YamlRejected{"a map key must be a scalar"};
      }
      stack_.back().key = value.is_string() ? value.get<std::string>() : value.dump();
      return;
    }
    add(value, YAML::NullAnchor, size);
  }
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (expectingKey()) {
      if (!isValidUtf8(value)) throw InvalidUtf8{};
      stack_.back().key = value;
      if (anchor != YAML::NullAnchor) anchors_[anchor] = {json(value), 1};
      return;
    }
    add(scalarToJson(tag, value), anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(json::array(), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    if (expectingKey()) throw YamlRejected{"a map key must be a scalar"};
    open(json::object(), anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    json value;
    YAML::anchor_t anchor;
    size_t startNodes;
    std::optional<std::string> key;  // in a map: the key waiting for its value
  };

  bool expectingKey() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().key;
  }
  void charge(size_t nodes) {
    nodes_ += nodes;
    if (nodes_ > budget_) {
      throw YamlRejected{"the document expands (through aliases) beyond " +
                         std::to_string(budget_) + " values"};
    }
  }
  void open(json value, YAML::anchor_t anchor) {
    if (expectingKey()) throw YamlRejected{"a map key must be a scalar"};
    charge(1);
    stack_.push_back(Frame{std::move(value), anchor, nodes_, std::nullopt});
  }
  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    const size_t size = nodes_ - f.startNodes + 1;
    if (f.anchor != YAML::NullAnchor) anchors_[f.anchor] = {f.value, size};
    place(std::move(f.value));
  }
  void add(json value, YAML::anchor_t anchor, size_t size) {
    charge(size);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = {value, size};
    place(std::move(value));
  }
  void place(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& f = stack_.back();
    if (f.value.is_array()) {
      f.value.push_back(std::move(value));
    } else {
      f.value[*f.key] = std::move(value);
      f.key.reset();
    }
  }

  size_t budget_;
  size_t maxDocuments_;
  size_t nodes_ = 0;
  size_t documentCount_ = 0;
  int lastStart_ = -1;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::pair<json, size_t>> anchors_;
  json root_;
};

void emit(YAML::Emitter& out, const json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& e : v) emit(out, e);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    // A string that would read back as something else (or not at all: YAML::Load throws on
    // e.g. "\"\\q", found by fuzzing) is written quoted.
    // Control characters and edge spaces are also kept exact only inside quotes ("\r" alone,
    // found by fuzzing, reads back as no document at all).
    bool ambiguous = true;
    const bool needsQuotes = s.empty() || s.front() == ' ' || s.back() == ' ' ||
                             std::any_of(s.begin(), s.end(), [](char c) {
                               return static_cast<unsigned char>(c) < 0x20;
                             });
    if (!needsQuotes) {
      try {
        YAML::Node probe = YAML::Load(s);
        ambiguous = !probe.IsScalar() || scalarToJson(probe.Tag(), probe.Scalar()) != json(s);
      } catch (...) {
      }
    }
    if (ambiguous) out << YAML::DoubleQuoted;
    out << s;
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << v.dump();
  }
}

}  // namespace

Result<std::vector<json>> parseYamlDocuments(const std::string& text) {
  // YAML allows only printable characters (plus tab and line breaks), as go-yaml enforces;
  // yaml-cpp would take a NUL or other control byte into a scalar that cannot be written back.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return Status::BadRequest("invalid YAML: control characters are not allowed (byte " +
                                std::to_string(i) + ")");
    }
  }
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    JsonDocumentBuilder builder(text.size());
    while (parser.HandleNextDocument(builder)) {
    }
    return std::move(builder.documents);
  } catch (const YAML::Exception& e) {
    return Status::BadRequest(std::string("invalid YAML: ") + e.what());
  } catch (const YamlRejected& e) {
    return Status::BadRequest("invalid YAML: " + e.message);
  } catch (const InvalidUtf8&) {
    return Status::BadRequest("invalid YAML: a string is not valid UTF-8");
  }
}

Result<json> parseYaml(const std::string& text) {
  auto docs = parseYamlDocuments(text);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) return Status::BadRequest("expected exactly one YAML document");
  return std::move(docs->front());
}

std::string toYaml(const json& value) {
  YAML::Emitter out;
  emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace minik8s
