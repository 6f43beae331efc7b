#include "mesh/mesh_resources.h"

#include <cctype>
#include <thread>

#include "client/custom_resource_definitions.h"
#include "common/base64.h"
#include "common/json_pointer.h"
#include "common/pki.h"
#include "mesh/discovery_server.h"

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

namespace {

// A security.istio.io kind served as v1 (stored) and v1beta1 with `spec` as given.
json securityCrd(const std::string& kind, const std::string& plural, const std::string& shortName,
                 const json& spec, const json& columns) {
  json schema = {
      {"type", "object"},
      {"properties",
       {{"spec", spec},
        {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}};
  json versions = json::array();
  for (const char* v : {"v1", "v1beta1"}) {
    versions.push_back({{"name", v},
                        {"served", true},
                        {"storage", std::string(v) == "v1"},
                        {"schema", {{"openAPIV3Schema", schema}}},
                        {"additionalPrinterColumns", columns}});
  }
  std::string singular = kind;
  for (char& c : singular) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + ".security.istio.io"}}},
          {"spec",
           {{"group", "security.istio.io"},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", kind},
              {"listKind", kind + "List"},
              {"plural", plural},
              {"singular", singular},
              {"shortNames", {shortName}},
              {"categories", {"istio-io", "security-istio-io"}}}},
            {"versions", versions}}}};
}

json stringList() { return {{"type", "array"}, {"items", {{"type", "string"}}}}; }

// An object whose listed fields are lists of strings; other fields are kept (and refused by the
// sidecars' parser, which then fails closed) rather than pruned, which could widen a policy.
json stringListsObject(std::initializer_list<const char*> fields) {
  json properties = json::object();
  for (const char* f : fields) properties[f] = stringList();
  return {{"type", "object"},
          {"properties", properties},
          {"x-kubernetes-preserve-unknown-fields", true}};
}

}  // namespace

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
  json columns = {{{"name", "Mode"}, {"type", "string"}, {"jsonPath", ".spec.mtls.mode"}},
                  {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}};
  return securityCrd("PeerAuthentication", "peerauthentications", "pa", spec, columns);
}

json authorizationPolicyCrd() {
  // The action and the shapes of rules are checked by the schema (422 with the field path);
  // what the sidecars cannot enforce (CUSTOM, JWT fields) is refused there too, or by their
  // parser, which then enforces the policy as closed.
  json source =
      stringListsObject({"principals", "notPrincipals", "namespaces", "notNamespaces", "ipBlocks",
                         "notIpBlocks", "remoteIpBlocks", "notRemoteIpBlocks"});
  json operation = stringListsObject(
      {"hosts", "notHosts", "ports", "notPorts", "methods", "notMethods", "paths", "notPaths"});
  json condition = {
      {"type", "object"},
      {"required", {"key"}},
      {"properties",
       {{"key", {{"type", "string"}}}, {"values", stringList()}, {"notValues", stringList()}}}};
  json rule = {{"type", "object"},
               {"properties",
                {{"from",
                  {{"type", "array"},
                   {"items", {{"type", "object"}, {"properties", {{"source", source}}}}}}},
                 {"to",
                  {{"type", "array"},
                   {"items", {{"type", "object"}, {"properties", {{"operation", operation}}}}}}},
                 {"when", {{"type", "array"}, {"items", condition}}}}}};
  json spec = {
      {"type", "object"},
      {"properties",
       {{"action", {{"type", "string"}, {"enum", {"ALLOW", "DENY", "AUDIT"}}}},
        {"rules", {{"type", "array"}, {"items", rule}}},
        {"selector", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}},
      {"x-kubernetes-preserve-unknown-fields", true}};
  json columns = {{{"name", "Action"}, {"type", "string"}, {"jsonPath", ".spec.action"}},
                  {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}};
  return securityCrd("AuthorizationPolicy", "authorizationpolicies", "ap", spec, columns);
}

json meshProxyRole(bool readsRegistry) {
  json rules = json::array();
  if (readsRegistry) {
    const json read = {"get", "list", "watch"};
    rules.push_back(
        {{"apiGroups", {""}}, {"resources", {"services", "endpoints", "pods"}}, {"verbs", read}});
    rules.push_back({{"apiGroups", {"networking.istio.io"}},
                     {"resources", {"virtualservices", "destinationrules"}},
                     {"verbs", read}});
    rules.push_back({{"apiGroups", {"security.istio.io"}},
                     {"resources", {"peerauthentications", "authorizationpolicies"}},
                     {"verbs", read}});
  }
  // The workload certificate: a CSR for signer minik8s.io/mesh-workload, read back for its
  // status.certificate (controllers/mesh signs only the requester's own SPIFFE identity).
  rules.push_back({{"apiGroups", {"certificates.k8s.io"}},
                   {"resources", {"certificatesigningrequests"}},
                   {"verbs", {"create", "get"}}});
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", "minik8s:mesh-proxy"}}},
          {"rules", std::move(rules)}};
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
  if (Status s = client::ensureCustomResourceDefinition(rest, authorizationPolicyCrd()); !s.ok()) {
    return s;
  }
  const client::Resource clusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
  const client::Resource bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  // With istiod installed the sidecars read nothing from the API server but their certificate.
  auto istiod = rest.get(client::resources::kDeployments, kMeshRootNamespace, "istiod");
  json role = meshProxyRole(!istiod.ok());
  if (Status s = ensureObject(rest, clusterRoles, role); !s.ok()) return s;
  // The role is bound per meshed namespace (controllers/mesh); an older binding to every
  // service account goes.
  auto removed = rest.remove(bindings, "", "minik8s:mesh-proxy");
  return removed.ok() || removed.status().code() == 404 ? Status() : removed.status();
}

std::vector<json> meshDiscoveryObjects(const std::string& image, const std::string& caCertPem,
                                       const std::string& caKeyPem, Status* error) {
  const std::string ns = kMeshRootNamespace;
  pki::CertSpec spec;
  spec.commonName = "istiod";
  spec.dnsNames = {"istiod", "istiod." + ns, "istiod." + ns + ".svc", kDiscoveryHost};
  spec.serverAuth = true;
  auto serving = pki::issue({caKeyPem, caCertPem}, spec);
  if (!serving.ok()) {
    if (error)
      *error = Status::BadRequest(
          "the cluster CA cannot sign istiod's serving "
          "certificate: " +
          serving.status().message());
    return {};
  }
  const json labels = {{"app", "istiod"}, {"app.kubernetes.io/managed-by", "minik8s"}};
  const std::string port = std::to_string(kDiscoveryPort);
  const json read = {"get", "list", "watch"};
  return {
      {{"apiVersion", "v1"},
       {"kind", "Namespace"},
       {"metadata", {{"name", ns}, {"labels", {{"istio-injection", "disabled"}}}}}},
      {{"apiVersion", "v1"},
       {"kind", "ServiceAccount"},
       {"metadata", {{"name", "istiod"}, {"namespace", ns}}}},
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRole"},
       {"metadata", {{"name", "minik8s:mesh-discovery"}}},
       {"rules",
        {{{"apiGroups", {""}}, {"resources", {"services", "endpoints", "pods"}}, {"verbs", read}},
         {{"apiGroups", {"networking.istio.io"}},
          {"resources", {"virtualservices", "destinationrules"}},
          {"verbs", read}},
         {{"apiGroups", {"security.istio.io"}},
          {"resources", {"peerauthentications", "authorizationpolicies"}},
          {"verbs", read}},
         {{"apiGroups", {"authentication.k8s.io"}},
          {"resources", {"tokenreviews"}},
          {"verbs", {"create"}}}}}},
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRoleBinding"},
       {"metadata", {{"name", "minik8s:mesh-discovery"}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"},
         {"kind", "ClusterRole"},
         {"name", "minik8s:mesh-discovery"}}},
       {"subjects", {{{"kind", "ServiceAccount"}, {"name", "istiod"}, {"namespace", ns}}}}},
      {{"apiVersion", "v1"},
       {"kind", "Secret"},
       {"metadata", {{"name", "istiod-tls"}, {"namespace", ns}}},
       {"type", "kubernetes.io/tls"},
       {"data",
        {{"tls.crt", base64::encode(serving->certPem)},
         {"tls.key", base64::encode(serving->keyPem)},
         {"ca.crt", base64::encode(caCertPem)}}}},
      {{"apiVersion", "v1"},
       {"kind", "Service"},
       {"metadata", {{"name", "istiod"}, {"namespace", ns}, {"labels", labels}}},
       {"spec",
        {{"selector", {{"app", "istiod"}}},
         {"ports",
          {{{"name", "https-discovery"},
            {"port", kDiscoveryPort},
            {"targetPort", kDiscoveryPort}}}}}}},
      {{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", "istiod"}, {"namespace", ns}, {"labels", labels}}},
       {"spec",
        {{"replicas", 1},
         {"selector", {{"matchLabels", {{"app", "istiod"}}}}},
         {"template",
          {{"metadata",
            {{"labels", labels}, {"annotations", {{"sidecar.istio.io/inject", "false"}}}}},
           {"spec",
            {{"serviceAccountName", "istiod"},
             {"containers",
              {{{"name", "discovery"},
                {"image", image},
                {"imagePullPolicy", "IfNotPresent"},
                {"args",
                 {"mesh-discovery", "--listen=0.0.0.0:" + port,
                  "--tls-cert-file=/etc/istiod/tls.crt",
                  "--tls-private-key-file=/etc/istiod/tls.key"}},
                {"ports", {{{"name", "https-discovery"}, {"containerPort", kDiscoveryPort}}}},
                {"readinessProbe",
                 // The kubelet's HTTP probes speak plain text only; istiod serves TLS.
                 {{"tcpSocket", {{"port", kDiscoveryPort}}}, {"periodSeconds", 1}}},
                {"volumeMounts",
                 {{{"name", "tls"}, {"mountPath", "/etc/istiod"}, {"readOnly", true}}}}}}},
             {"volumes", {{{"name", "tls"}, {"secret", {{"secretName", "istiod-tls"}}}}}}}}}}}}}};
}

Status installMeshDiscovery(client::RestClient& rest, const std::string& image,
                            const std::string& caCertPem, const std::string& caKeyPem) {
  Status error;
  auto objects = meshDiscoveryObjects(image, caCertPem, caKeyPem, &error);
  if (!error.ok()) return error;
  for (const auto& obj : objects) {
    const std::string kind = obj["kind"];
    const client::Resource r =
        kind == "Namespace"        ? client::resources::kNamespaces
        : kind == "ServiceAccount" ? client::resources::kServiceAccounts
        : kind == "Secret"         ? client::resources::kSecrets
        : kind == "Service"        ? client::resources::kServices
        : kind == "Deployment"     ? client::resources::kDeployments
        : kind == "ClusterRole"
            ? client::Resource{"rbac.authorization.k8s.io", "v1", "clusterroles", false}
            : client::Resource{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
    const std::string ns = obj["metadata"].value("namespace", "");
    const std::string name = obj["metadata"]["name"];
    auto got = rest.get(r, ns, name);
    if (got.ok()) {
      if (kind == "Namespace" || kind == "ServiceAccount" || kind == "Service") continue;
      json updated = obj;
      updated["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
      auto u = rest.update(r, updated);
      if (!u.ok()) return u.status();
      continue;
    }
    auto c = rest.create(r, ns, obj);
    if (!c.ok() && c.status().code() != 409) return c.status();
  }
  // The sidecars stream from istiod now: their role keeps only their certificate.
  return ensureObject(rest,
                      client::Resource{"rbac.authorization.k8s.io", "v1", "clusterroles", false},
                      meshProxyRole(false));
}

Status waitForMeshDiscovery(client::RestClient& rest, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto d = rest.get(client::resources::kDeployments, kMeshRootNamespace, "istiod");
    if (d.ok() && valueAt(*d, "/status/readyReplicas", 0) >= 1) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Timeout("istiod did not become ready within " +
                             std::to_string(timeout.count() / 1000) +
                             " s (kubectl -n istio-system describe pod -l app=istiod)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace minik8s::mesh
