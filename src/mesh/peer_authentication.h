// PeerAuthentication (security.istio.io/v1, also served as v1beta1): which connections a meshed
// workload's inbound listener accepts. spec.mtls.mode:
//   PERMISSIVE  mutual TLS from other sidecars and plain text from anyone (the default)
//   STRICT      mutual TLS only: a plain-text connection is closed at once
//   DISABLE     plain text only; client sidecars do not start TLS toward such a workload
//   UNSET       inherit from the level above
// As Istio: a policy in the root namespace (istio-system) without a selector is mesh-wide, one
// in a namespace without a selector covers the namespace, one with spec.selector.matchLabels
// covers the matching pods of its namespace (and may set spec.portLevelMtls by the workload's
// port number). The most specific level that sets a mode wins; among several policies of one
// level, the oldest (creationTimestamp, then name) applies. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace minik8s::mesh {

inline constexpr char kMeshRootNamespace[] = "istio-system";

enum class MtlsMode { kUnset, kPermissive, kStrict, kDisable };
const char* mtlsModeName(MtlsMode mode);

struct PeerAuthentication {
  std::string ns, name, creationTimestamp;
  bool hasSelector = false;
  std::map<std::string, std::string> selector;  // spec.selector.matchLabels
  MtlsMode mode = MtlsMode::kUnset;
  std::map<int, MtlsMode> portLevel;  // spec.portLevelMtls
};

// BadRequest naming the field (spec.mtls.mode, spec.portLevelMtls[8080].mode, ...).
Result<PeerAuthentication> parsePeerAuthentication(const json& obj);

// The mode of a workload (namespace, pod labels) on `port` under `policies`.
MtlsMode resolveMtlsMode(const std::vector<PeerAuthentication>& policies, const std::string& ns,
                         const std::map<std::string, std::string>& labels, int port,
                         const std::string& rootNamespace = kMeshRootNamespace);

}  // namespace minik8s::mesh
