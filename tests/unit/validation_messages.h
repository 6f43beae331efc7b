// What tests of the API's validation compare against.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::testing {

// Kubernetes' message for a name that is not an RFC 1123 subdomain.
inline const std::string kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

// "field: message" of each cause, one a line.
inline std::string messages(const std::vector<Cause>& causes) {
  std::string out;
  for (const auto& c : causes) out += c.field + ": " + c.message + "\n";
  return out;
}

}  // namespace minik8s::testing
