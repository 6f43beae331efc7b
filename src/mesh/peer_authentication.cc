#include "mesh/peer_authentication.h"

#include <algorithm>

#include "mesh/rules.h"

namespace minik8s::mesh {

namespace peer_auth_detail {

Result<MtlsMode> modeOf(const json& mtls, const std::string& path) {
  if (!mtls.is_object()) return Status::BadRequest(path + ": must be an object");
  if (!mtls.contains("mode")) return MtlsMode::kUnset;
  const json& m = mtls["mode"];
  std::string s = m.is_string() ? m.get<std::string>() : "";
  if (s == "UNSET") return MtlsMode::kUnset;
  if (s == "PERMISSIVE") return MtlsMode::kPermissive;
  if (s == "STRICT") return MtlsMode::kStrict;
  if (s == "DISABLE") return MtlsMode::kDisable;
  return Status::BadRequest(path + ".mode: Unsupported value: " + m.dump() +
                            ": supported values: \"UNSET\", \"DISABLE\", \"PERMISSIVE\", "
                            "\"STRICT\"");
}

bool olderFirst(const PeerAuthentication* a, const PeerAuthentication* b) {
  if (a->creationTimestamp != b->creationTimestamp) {
    return a->creationTimestamp < b->creationTimestamp;  // RFC 3339 UTC sorts as text
  }
  return a->name < b->name;
}

}  // namespace peer_auth_detail

const char* mtlsModeName(MtlsMode mode) {
  switch (mode) {
    case MtlsMode::kPermissive:
      return "PERMISSIVE";
    case MtlsMode::kStrict:
      return "STRICT";
    case MtlsMode::kDisable:
      return "DISABLE";
    default:
      return "UNSET";
  }
}

Result<PeerAuthentication> parsePeerAuthentication(const json& obj) {
  using peer_auth_detail::modeOf;
  PeerAuthentication pa;
  const json meta = obj.value("metadata", json::object());
  pa.ns = meta.value("namespace", "");
  pa.name = meta.value("name", "");
  pa.creationTimestamp = meta.value("creationTimestamp", "");
  const json spec = obj.value("spec", json::object());
  if (!spec.is_object()) return Status::BadRequest("spec: must be an object");
  if (spec.contains("selector") && !spec["selector"].is_null()) {
    const json& sel = spec["selector"];
    if (!sel.is_object()) return Status::BadRequest("spec.selector: must be an object");
    pa.hasSelector = true;
    const json matchLabels = sel.value("matchLabels", json::object());
    for (auto& [k, v] : matchLabels.items()) {
      if (!v.is_string()) {
        return Status::BadRequest("spec.selector.matchLabels." + k + ": must be a string");
      }
      pa.selector[k] = v.get<std::string>();
    }
  }
  if (spec.contains("mtls") && !spec["mtls"].is_null()) {
    auto m = modeOf(spec["mtls"], "spec.mtls");
    if (!m.ok()) return m.status();
    pa.mode = *m;
  }
  if (spec.contains("portLevelMtls") && !spec["portLevelMtls"].is_null()) {
    const json& ports = spec["portLevelMtls"];
    if (!ports.is_object()) return Status::BadRequest("spec.portLevelMtls: must be an object");
    if (!pa.hasSelector) {
      return Status::BadRequest(
          "spec.portLevelMtls: Invalid value: portLevelMtls requires a workload selector");
    }
    for (auto& [k, v] : ports.items()) {
      std::string path = "spec.portLevelMtls[" + k + "]";
      int port = 0;
      try {
        size_t used = 0;
        port = std::stoi(k, &used);
        if (used != k.size()) port = 0;
      } catch (...) {
        port = 0;
      }
      if (port < 1 || port > 65535) {
        return Status::BadRequest(path + ": Invalid value: must be a port number");
      }
      auto m = modeOf(v, path);
      if (!m.ok()) return m.status();
      pa.portLevel[port] = *m;
    }
  }
  return pa;
}

MtlsMode resolveMtlsMode(const std::vector<PeerAuthentication>& policies, const std::string& ns,
                         const std::map<std::string, std::string>& labels, int port,
                         const std::string& rootNamespace) {
  const PeerAuthentication *meshWide = nullptr, *namespaceWide = nullptr, *workload = nullptr;
  auto keep = [](const PeerAuthentication*& slot, const PeerAuthentication& p) {
    if (slot == nullptr || peer_auth_detail::olderFirst(&p, slot)) slot = &p;
  };
  for (const auto& p : policies) {
    if (!p.hasSelector && p.ns == rootNamespace) keep(meshWide, p);
    if (p.ns != ns) continue;
    if (!p.hasSelector && ns != rootNamespace) keep(namespaceWide, p);
    if (p.hasSelector && labelsMatch(p.selector, labels)) keep(workload, p);
  }
  MtlsMode mode = MtlsMode::kPermissive;
  for (const PeerAuthentication* p : {meshWide, namespaceWide, workload}) {
    if (p != nullptr && p->mode != MtlsMode::kUnset) mode = p->mode;
  }
  if (workload != nullptr) {
    auto it = workload->portLevel.find(port);
    if (it != workload->portLevel.end() && it->second != MtlsMode::kUnset) mode = it->second;
  }
  return mode;
}

}  // namespace minik8s::mesh
