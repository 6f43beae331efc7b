#include "mesh/mesh_resources.h"

#include "client/custom_resource_definitions.h"

namespace minik8s::mesh {

namespace {

// spec keeps unknown fields: Istio's CRDs accept the whole API; the proxies read the subset
// docs/mesh.md documents and log what they cannot use.
json crd(const std::string& kind, const std::string& plural, const std::string& shortName,
         const json& columns) {
  json schema = {
      {"type", "object"},
      {"properties",
       {{"spec", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}},
        {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}};
  json versions = json::array();
  for (const char* v : {"v1", "v1beta1", "v1alpha3"}) {
    versions.push_back({{"name", v},
                        {"served", true},
                        {"storage", std::string(v) == "v1"},
                        {"schema", {{"openAPIV3Schema", schema}}},
                        {"additionalPrinterColumns", columns}});
  }
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + ".networking.istio.io"}}},
          {"spec",
           {{"group", "networking.istio.io"},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", kind},
              {"listKind", kind + "List"},
              {"plural", plural},
              {"singular", kind == "VirtualService" ? "virtualservice" : "destinationrule"},
              {"shortNames", {shortName}},
              {"categories", {"istio-io", "networking-istio-io"}}}},
            {"versions", versions}}}};
}

json modeSchema() {
  return {
      {"type", "object"},
      {"properties",
       {{"mode", {{"type", "string"}, {"enum", {"UNSET", "DISABLE", "PERMISSIVE", "STRICT"}}}}}},
      {"x-kubernetes-preserve-unknown-fields", true}};
}

Status ensureObject(client::RestClient& rest, const client::Resource& r, const json& obj) {
  std::string name = obj["metadata"]["name"];
  auto got = rest.get(r, "", name);
  if (got.ok()) {
    json updated = obj;
    updated["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
    auto u = rest.update(r, updated);
    return u.ok() ? Status::Ok() : u.status();
  }
  auto c = rest.create(r, "", obj);
  if (c.ok() || c.status().code() == 409) return Status::Ok();
  return c.status();
}

}  // namespace

json virtualServiceCrd() {
  return crd("VirtualService", "virtualservices", "vs",
             {{{"name", "Gateways"}, {"type", "string"}, {"jsonPath", ".spec.gateways"}},
              {{"name", "Hosts"}, {"type", "string"}, {"jsonPath", ".spec.hosts"}},
              {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}});
}

json destinationRuleCrd() {
  return crd("DestinationRule", "destinationrules", "dr",
             {{{"name", "Host"}, {"type", "string"}, {"jsonPath", ".spec.host"}},
              {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}});
}

json peerAuthenticationCrd() {
  // spec.mtls.mode and spec.portLevelMtls.*.mode are checked by the schema (422 with the field
  // path); the rest of Istio's spec is kept as written.
  json spec = {
      {"type", "object"},
      {"properties",
       {{"mtls", modeSchema()},
        {"portLevelMtls", {{"type", "object"}, {"additionalProperties", modeSchema()}}},
        {"selector", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}},
      {"x-kubernetes-preserve-unknown-fields", true}};
  json schema = {
      {"type", "object"},
      {"properties",
       {{"spec", spec},
        {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}};
  json columns = {{{"name", "Mode"}, {"type", "string"}, {"jsonPath", ".spec.mtls.mode"}},
                  {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}};
  json versions = json::array();
  for (const char* v : {"v1", "v1beta1"}) {
    versions.push_back({{"name", v},
                        {"served", true},
                        {"storage", std::string(v) == "v1"},
                        {"schema", {{"openAPIV3Schema", schema}}},
                        {"additionalPrinterColumns", columns}});
  }
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", "peerauthentications.security.istio.io"}}},
          {"spec",
           {{"group", "security.istio.io"},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", "PeerAuthentication"},
              {"listKind", "PeerAuthenticationList"},
              {"plural", "peerauthentications"},
              {"singular", "peerauthentication"},
              {"shortNames", {"pa"}},
              {"categories", {"istio-io", "security-istio-io"}}}},
            {"versions", versions}}}};
}

Status ensureMeshResources(client::RestClient& rest) {
  if (Status s = client::ensureCustomResourceDefinition(rest, virtualServiceCrd()); !s.ok()) {
    return s;
  }
  if (Status s = client::ensureCustomResourceDefinition(rest, destinationRuleCrd()); !s.ok()) {
    return s;
  }
  if (Status s = client::ensureCustomResourceDefinition(rest, peerAuthenticationCrd()); !s.ok()) {
    return s;
  }
  const client::Resource clusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
  const client::Resource bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "ClusterRole"},
               {"metadata", {{"name", "minik8s:mesh-proxy"}}},
               {"rules",
                {{{"apiGroups", {""}},
                  {"resources", {"services", "endpoints", "pods"}},
                  {"verbs", {"get", "list", "watch"}}},
                 {{"apiGroups", {"networking.istio.io"}},
                  {"resources", {"virtualservices", "destinationrules"}},
                  {"verbs", {"get", "list", "watch"}}},
                 {{"apiGroups", {"security.istio.io"}},
                  {"resources", {"peerauthentications"}},
                  {"verbs", {"get", "list", "watch"}}},
                 // The workload certificate: a CSR for signer minik8s.io/mesh-workload, read
                 // back for its status.certificate (controllers/mesh signs only the requester's
                 // own SPIFFE identity).
                 {{"apiGroups", {"certificates.k8s.io"}},
                  {"resources", {"certificatesigningrequests"}},
                  {"verbs", {"create", "get"}}}}}};
  if (Status s = ensureObject(rest, clusterRoles, role); !s.ok()) return s;
  // The role is bound per meshed namespace (controllers/mesh); an older binding to every
  // service account goes.
  auto removed = rest.remove(bindings, "", "minik8s:mesh-proxy");
  return removed.ok() || removed.status().code() == 404 ? Status() : removed.status();
}

}  // namespace minik8s::mesh
