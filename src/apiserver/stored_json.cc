#include "apiserver/stored_json.h"

#include <cstring>

namespace minik8s::apiserver {

namespace {

constexpr size_t kNone = std::string_view::npos;

// The index just past the JSON string that starts at s[i] ('"'); kNone when unterminated.
// memchr finds each candidate quote (a list of 10,000 pods is 13 MiB of mostly string bytes); a
// quote is the end unless an odd number of backslashes precede it.
size_t skipStoredString(std::string_view s, size_t i) {
  for (size_t from = i + 1; from < s.size();) {
    const void* q = std::memchr(s.data() + from, '"', s.size() - from);
    if (!q) return kNone;
    const size_t quote = static_cast<const char*>(q) - s.data();
    size_t backslashes = 0;
    while (quote - backslashes > i + 1 && s[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    from = quote + 1;
  }
  return kNone;
}

// The index just past the value that starts at s[i]. Only the structure is checked: the text was
// written by a JSON encoder, this only has to find where each value ends.
size_t skipStoredValue(std::string_view s, size_t i) {
  if (i >= s.size()) return kNone;
  if (s[i] == '"') return skipStoredString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skipStoredString(s, i);
        if (i == kNone) return kNone;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
      ++i;
    }
    return kNone;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}

struct StoredMember {
  std::string_view key;  // as written, without the quotes
  size_t begin = 0;      // index of the key's opening quote
  size_t valueBegin = 0, valueEnd = 0;
};

// Calls visit(member) for each member of the compact object at s[i] ('{') until it returns
// false. Returns the index just past the closing '}', kNone when the text is not of that shape
// or visit stopped.
template <typename Visit>
size_t forEachStoredMember(std::string_view s, size_t i, Visit&& visit) {
  if (i >= s.size() || s[i] != '{') return kNone;
  ++i;
  if (i < s.size() && s[i] == '}') return i + 1;
  while (i < s.size()) {
    if (s[i] != '"') return kNone;
    const size_t keyEnd = skipStoredString(s, i);
    if (keyEnd == kNone || keyEnd >= s.size() || s[keyEnd] != ':') return kNone;
    const size_t valueEnd = skipStoredValue(s, keyEnd + 1);
    if (valueEnd == kNone || valueEnd >= s.size()) return kNone;
    if (!visit(StoredMember{s.substr(i + 1, keyEnd - i - 2), i, keyEnd + 1, valueEnd})) {
      return kNone;
    }
    if (s[valueEnd] == '}') return valueEnd + 1;
    if (s[valueEnd] != ',') return kNone;
    i = valueEnd + 1;
  }
  return kNone;
}

bool isQuoted(std::string_view value, std::string_view text) {
  return value.size() == text.size() + 2 && value.front() == '"' && value.back() == '"' &&
         value.substr(1, text.size()) == text;
}

}  // namespace

bool appendServedText(std::string& out, std::string_view stored, int64_t revision,
                      std::string_view apiVersion, std::string_view kind) {
  constexpr std::string_view kRv = "resourceVersion";
  bool apiVersionMatches = false, kindMatches = false, metadataSeen = false;
  size_t insertAt = kNone;
  bool leadingComma = false;  // inserted after the last member rather than before one
  // The Registry's texts have sorted keys: apiVersion, kind and metadata come before spec and
  // status, which are most of the bytes. Once metadata is read after a matching apiVersion and
  // kind, the rest is not scanned (a scan of every value was a tenth of a 10,000-pod LIST).
  bool doneAtMetadata = false;
  const size_t end = forEachStoredMember(stored, 0, [&](const StoredMember& m) {
    const std::string_view value = stored.substr(m.valueBegin, m.valueEnd - m.valueBegin);
    if (m.key == "apiVersion") {
      apiVersionMatches = isQuoted(value, apiVersion);
    } else if (m.key == "kind") {
      kindMatches = isQuoted(value, kind);
    } else if (m.key == "metadata") {
      metadataSeen = true;
      bool empty = true;
      const size_t metaEnd = forEachStoredMember(stored, m.valueBegin, [&](const StoredMember& f) {
        empty = false;
        // An escaped key would sort by its decoded text; the stored resourceVersion is never
        // kept (Registry strips it).
        if (f.key.find('\\') != std::string_view::npos || f.key == kRv) return false;
        if (insertAt == kNone && f.key > kRv) insertAt = f.begin;
        return true;
      });
      if (metaEnd != m.valueEnd) return false;
      if (insertAt == kNone) {
        insertAt = metaEnd - 1;  // before the closing brace
        leadingComma = !empty;
      }
      if (apiVersionMatches && kindMatches &&
          (stored[m.valueEnd] == ',' || stored[m.valueEnd] == '}')) {
        doneAtMetadata = true;
        return false;
      }
    }
    return true;
  });
  const bool whole = doneAtMetadata ? stored.back() == '}' : end == stored.size();
  if (!whole || !apiVersionMatches || !kindMatches || !metadataSeen) return false;
  const std::string rv = std::to_string(revision);
  out.reserve(out.size() + stored.size() + rv.size() + 24);
  out.append(stored.substr(0, insertAt));
  if (leadingComma) out.push_back(',');
  out.append("\"resourceVersion\":\"").append(rv).push_back('"');
  if (!leadingComma && stored[insertAt] != '}') out.push_back(',');
  out.append(stored.substr(insertAt));
  return true;
}

}  // namespace minik8s::apiserver
