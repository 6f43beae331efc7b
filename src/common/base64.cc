#include "common/base64.h"

#include <array>
#include <cstdint>

namespace minik8s::base64 {

namespace {

constexpr std::string_view kStdAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

using DecodeTable = std::array<int8_t, 256>;  // digit value, or -1

constexpr DecodeTable decodeTable(std::string_view alphabet) {
  DecodeTable table{};
  table.fill(-1);
  for (size_t i = 0; i < alphabet.size(); ++i) {
    table[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}

constexpr DecodeTable kStdTable = decodeTable(kStdAlphabet);
constexpr DecodeTable kUrlTable = decodeTable(kUrlAlphabet);

Status corrupt(size_t offset) {
  return Status::BadRequest("illegal base64 data at input byte " + std::to_string(offset));
}

bool isNewline(char c) { return c == '\n' || c == '\r'; }

}  // namespace

std::string encode(std::string_view data, Encoding encoding) {
  const std::string_view alphabet = encoding.url ? kUrlAlphabet : kStdAlphabet;
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  auto byte = [&](size_t i) -> uint32_t { return static_cast<uint8_t>(data[i]); };
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 63];
  }
  const size_t rest = data.size() - i;
  if (rest == 0) return out;
  const uint32_t v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
  out += alphabet[(v >> 18) & 63];
  out += alphabet[(v >> 12) & 63];
  if (rest == 2) out += alphabet[(v >> 6) & 63];
  if (encoding.padded) out.append(3 - rest, '=');
  return out;
}

// One quantum (up to four digits) at a time, as Go's decodeQuantum does, so that error offsets
// and the handling of newlines and padding match it byte for byte.
Result<std::string> decode(std::string_view text, Encoding encoding) {
  const DecodeTable& table = encoding.url ? kUrlTable : kStdTable;
  const bool skipNewlines = !encoding.canonical;
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  size_t i = 0;
  auto skipTrailingNewlines = [&] {
    while (skipNewlines && i < text.size() && isNewline(text[i])) ++i;
  };
  while (true) {
    std::array<uint32_t, 4> digit{};
    int n = 0;          // digits of this quantum read so far
    bool last = false;  // padding or the end of the text closed this quantum
    while (n < 4) {
      if (i == text.size()) {
        if (n == 0) return out;
        if (n == 1 || encoding.padded) return corrupt(i - n);
        last = true;
        break;
      }
      const char c = text[i++];
      const int8_t v = table[static_cast<uint8_t>(c)];
      if (v >= 0) {
        digit[n++] = static_cast<uint32_t>(v);
        continue;
      }
      if (skipNewlines && isNewline(c)) continue;
      if (!encoding.padded || c != '=' || n < 2) return corrupt(i - 1);
      if (n == 2) {  // a second '=' must follow
        skipTrailingNewlines();
        if (i == text.size()) return corrupt(text.size());
        if (text[i] != '=') return corrupt(i - 1);
        ++i;
      }
      skipTrailingNewlines();
      if (i < text.size()) return corrupt(i);  // nothing may follow the padding
      last = true;
      break;
    }
    const uint32_t v = digit[0] << 18 | digit[1] << 12 | digit[2] << 6 | digit[3];
    out += static_cast<char>(v >> 16);
    if (n >= 3) out += static_cast<char>((v >> 8) & 0xff);
    if (n == 4) out += static_cast<char>(v & 0xff);
    // Bits of the last digit that no byte uses; Go's Strict() refuses them when non-zero.
    if (encoding.canonical && n == 3 && (v & 0xff) != 0) return corrupt(i - 1);
    if (encoding.canonical && n == 2 && (v & 0xffff) != 0) return corrupt(i - 2);
    if (last) return out;
  }
}

Result<std::string> decodeLenient(std::string_view text) {
  std::string compact;
  compact.reserve(text.size());
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') compact += c;
  }
  for (int pad = 0; pad < 2 && !compact.empty() && compact.back() == '='; ++pad) {
    compact.pop_back();
  }
  return decode(compact, Encoding{.padded = false});
}

}  // namespace minik8s::base64
