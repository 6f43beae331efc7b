// YAML <-> JSON for manifests and config files. Scalars become JSON numbers, booleans and null
// the way YAML 1.1 tags them in Kubernetes manifests (unquoted 3 -> 3, "3" -> "3", true, ~/null).
// Multi-document input yields one JSON value per document. Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s {

Result<std::vector<json>> parseYamlDocuments(const std::string& text);
Result<json> parseYaml(const std::string& text);  // exactly one document
std::string toYaml(const json& value);

}  // namespace minik8s
