// Base64 (RFC 4648): the one encoder and decoder of minik8s. Both alphabets (standard "+/" and
// URL-safe "-_"), padded or raw. Decoding follows Go's encoding/base64, because what we decode
// was mostly written by Go programs and must be accepted or refused as kube-apiserver does:
// kStd is Go's StdEncoding, the JSON form of every []byte field (Secret data, CSR requests,
// kubeconfig *-data): padding required, CR and LF ignored, errors "illegal base64 data at input
// byte N" with Go's offsets. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace minik8s::base64 {

struct Encoding {
  bool url = false;        // '-' and '_' in place of '+' and '/'
  bool padded = true;      // '=' written up to a multiple of 4; when decoding, required (and '='
                           // is refused by a raw encoding)
  bool canonical = false;  // decoding also refuses CR/LF and non-zero unused trailing bits, so
                           // each byte string has exactly one accepted text (Go's Strict(), and
                           // stricter: Go still skips newlines)
};

inline constexpr Encoding kStd{};                                 // Go's base64.StdEncoding
inline constexpr Encoding kRawUrl{.url = true, .padded = false};  // Go's RawURLEncoding
// JWS segments (RFC 7515): raw URL alphabet, one text per value (a token cannot be re-spelled).
inline constexpr Encoding kJws{.url = true, .padded = false, .canonical = true};

std::string encode(std::string_view data, Encoding encoding = kStd);

// BadRequest "illegal base64 data at input byte N" (N as Go reports it) when malformed.
Result<std::string> decode(std::string_view text, Encoding encoding = kStd);

// For text people write by hand (kubeconfig *-data): the standard alphabet, ASCII whitespace
// anywhere ignored, trailing padding optional. Refuses what is not base64 at all.
Result<std::string> decodeLenient(std::string_view text);

}  // namespace minik8s::base64
