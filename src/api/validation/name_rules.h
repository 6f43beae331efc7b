// Name and format rules of Kubernetes (k8s.io/apimachinery/pkg/util/validation), worded as
// Kubernetes words them. Each returns the list of reasons the value is invalid; empty means
// valid. Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minik8s::api::validation {

using Messages = std::vector<std::string>;

Messages isDNS1123Label(std::string_view value);      // "my-name", at most 63
Messages isDNS1123Subdomain(std::string_view value);  // "example.com", at most 253
Messages isDNS1035Label(std::string_view value);      // starts with a letter (Service names)
Messages isQualifiedName(std::string_view value);     // label and annotation keys
Messages isLabelValue(std::string_view value);
Messages isConfigMapKey(std::string_view value);
Messages isEnvVarName(std::string_view value);
Messages isValidPortNum(int64_t port);               // 1-65535
Messages isValidPortName(std::string_view value);    // IANA_SVC_NAME
Messages isPathSegmentName(std::string_view value);  // no '/', '%', not '.' or '..'

// A metadata.name rule; `prefix` is true for generateName (a trailing '-' is fine).
using NameRule = Messages (*)(std::string_view name, bool prefix);
Messages nameIsDNSSubdomain(std::string_view name, bool prefix);
Messages nameIsDNSLabel(std::string_view name, bool prefix);
Messages nameIsDNS1035Label(std::string_view name, bool prefix);

bool isIPv4(std::string_view value);  // dotted quad; leading zeros accepted as Kubernetes does
bool isIPv6(std::string_view value);
inline bool isIP(std::string_view value) { return isIPv4(value) || isIPv6(value); }
// Kubernetes' message for a value that is not an IP address.
inline constexpr const char* kInvalidIPMessage =
    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

}  // namespace minik8s::api::validation
