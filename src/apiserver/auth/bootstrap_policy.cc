#include "apiserver/auth/bootstrap_policy.h"

#include "apiserver/auth/auth.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/registry.h"
#include "common/logging.h"

namespace minik8s::apiserver::auth {

namespace {

constexpr const char* kAutoupdate = "rbac.authorization.kubernetes.io/autoupdate";

using Strings = std::vector<std::string>;

json rule(const Strings& verbs, const Strings& groups, const Strings& resources) {
  return {{"verbs", verbs}, {"apiGroups", groups}, {"resources", resources}};
}

json urlRule(const Strings& verbs, const Strings& urls) {
  return {{"verbs", verbs}, {"nonResourceURLs", urls}};
}

json metadata(const std::string& name, json labels = json::object()) {
  labels["kubernetes.io/bootstrapping"] = "rbac-defaults";
  return {{"name", name}, {"labels", labels}, {"annotations", {{kAutoupdate, "true"}}}};
}

json clusterRole(const std::string& name, json rules, json labels = json::object()) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", metadata(name, std::move(labels))},
          {"rules", std::move(rules)}};
}

json aggregated(json role, const std::string& aggregateTo) {
  role["aggregationRule"] = {
      {"clusterRoleSelectors",
       json::array({{{"matchLabels",
                      {{"rbac.authorization.k8s.io/aggregate-to-" + aggregateTo, "true"}}}}})}};
  return role;
}

json subject(const std::string& kind, const std::string& name) {
  return {{"kind", kind}, {"apiGroup", kRbacGroup}, {"name", name}};
}

json binding(const std::string& name, const std::string& role, json subjects) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata", metadata(name)},
          {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", "ClusterRole"}, {"name", role}}},
          {"subjects", std::move(subjects)}};
}

const Strings kRead = {"get", "list", "watch"};
const Strings kWrite = {"create", "delete", "deletecollection", "patch", "update"};
const Strings kAll = {"create", "delete", "deletecollection", "get",
                      "list",   "patch",  "update",           "watch"};

// Namespaced workload resources that view reads and edit writes (secrets: edit only).
// ResourceQuotas and LimitRanges are not among them: as in Kubernetes, view, edit and admin only
// read them (policyRules), so a namespace's admin cannot raise its own quota.
json workloadRules(const Strings& verbs, bool withSecrets) {
  Strings core = {"configmaps",      "endpoints", "persistentvolumeclaims", "pods", "services",
                  "serviceaccounts", "events",    "replicationcontrollers"};
  if (withSecrets) core.push_back("secrets");
  return json::array({
      rule(verbs, {""}, core),
      rule(verbs, {"apps"},
           {"deployments", "replicasets", "statefulsets", "daemonsets", "deployments/scale",
            "replicasets/scale"}),
      rule(verbs, {"autoscaling"}, {"horizontalpodautoscalers"}),
      rule(verbs, {"batch"}, {"jobs", "cronjobs"}),
      rule(verbs, {"policy"}, {"poddisruptionbudgets"}),
      rule(verbs, {"networking.k8s.io"}, {"ingresses", "networkpolicies"}),
      rule(verbs, {"discovery.k8s.io"}, {"endpointslices"}),
      rule(verbs, {"coordination.k8s.io"}, {"leases"}),
      rule(verbs, {"minik8s.io"}, {"dnses"}),
  });
}

// The namespace's policy objects, read-only for view, edit and admin.
json policyRules() {
  return rule(kRead, {""}, {"resourcequotas", "resourcequotas/status", "limitranges"});
}

json viewRules() {
  json rules = workloadRules(kRead, false);
  rules.push_back(policyRules());
  rules.push_back(rule(kRead, {""},
                       {"pods/log", "pods/status", "services/status",
                        "persistentvolumeclaims/status", "namespaces", "namespaces/status"}));
  rules.push_back(rule(kRead, {"apps"}, {"deployments/status", "replicasets/status"}));
  return rules;
}

json editRules() {
  json rules = workloadRules(kAll, true);
  rules.push_back(policyRules());
  rules.push_back(rule(kRead, {""},
                       {"pods/log", "pods/status", "persistentvolumeclaims/status", "namespaces"}));
  rules.push_back(
      rule({"create", "get"}, {""},
           {"pods/exec", "pods/attach", "pods/portforward", "pods/proxy", "services/proxy"}));
  rules.push_back(rule({"create"}, {""}, {"pods/eviction", "serviceaccounts/token"}));
  return rules;
}

json adminRules() {
  json rules = editRules();
  rules.push_back(rule(kAll, {kRbacGroup}, {"roles", "rolebindings"}));
  rules.push_back(rule({"create"}, {"authorization.k8s.io"}, {"localsubjectaccessreviews"}));
  return rules;
}

json nodeRules() {
  return json::array({
      rule(kRead, {""},
           {"pods", "services", "endpoints", "nodes", "configmaps", "secrets",
            "persistentvolumeclaims", "persistentvolumes", "namespaces"}),
      rule({"create", "update", "patch", "delete"}, {""}, {"nodes", "pods"}),
      rule({"update", "patch"}, {""}, {"nodes/status", "pods/status"}),
      rule({"create"}, {""}, {"pods/eviction", "serviceaccounts/token"}),
      rule({"create", "update", "patch"}, {""}, {"events"}),
      rule({"create", "get", "list", "watch"}, {"certificates.k8s.io"},
           {"certificatesigningrequests"}),
      rule({"create", "delete", "get", "patch", "update"}, {"coordination.k8s.io"}, {"leases"}),
      rule(kRead, {"discovery.k8s.io"}, {"endpointslices"}),
      rule(kRead, {"networking.k8s.io"}, {"networkpolicies"}),
      rule({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
      rule({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"}),
  });
}

json schedulerRules() {
  return json::array({
      rule(kRead, {"*"}, {"*"}),
      rule({"create", "patch", "update"}, {"", "events.k8s.io"}, {"events"}),
      rule({"create"}, {""}, {"pods/binding", "bindings"}),
      rule({"patch", "update"}, {""}, {"pods/status"}),
      rule({"delete"}, {""}, {"pods"}),
      // WaitForFirstConsumer volume binding: pre-bind volumes, mark claims with their node.
      rule({"patch", "update"}, {""}, {"persistentvolumeclaims", "persistentvolumes"}),
      rule({"create", "get", "update"}, {"coordination.k8s.io"}, {"leases"}),
      rule({"create"}, {"authentication.k8s.io"}, {"tokenreviews"}),
      rule({"create"}, {"authorization.k8s.io"}, {"subjectaccessreviews"}),
  });
}

// Create the object, or put the defaults back into an autoupdate one that drifted.
Status reconcile(Registry& registry, const api::ResourceInfo& info, const json& desired,
                 const std::vector<std::string>& fields) {
  const std::string name = desired["metadata"]["name"];
  auto current = registry.get(info, "", name);
  if (!current.ok()) {
    if (current.status().code() != 404) return current.status();
    auto created = registry.create(info, "", desired);
    if (created.ok() || created.status().reason() == "AlreadyExists") return Status::Ok();
    return created.status();
  }
  const json annotations =
      current->value(json::json_pointer("/metadata/annotations"), json::object());
  if (!annotations.is_object() || annotations.value(kAutoupdate, "") != "true") {
    return Status::Ok();
  }
  bool same = true;
  for (const auto& f : fields) {
    if (current->value(f, json()) != desired.value(f, json())) same = false;
  }
  if (same) return Status::Ok();
  LOG_INFO("bootstrap policy: restoring {} {}", info.kind, name);
  auto updated = registry.guaranteedUpdate(info, "", name, [&](json cur) -> Result<json> {
    for (const auto& f : fields) {
      if (desired.contains(f)) {
        cur[f] = desired[f];
      } else {
        cur.erase(f);
      }
    }
    return cur;
  });
  return updated.ok() ? Status::Ok() : updated.status();
}

}  // namespace

std::vector<json> bootstrapClusterRoles() {
  std::vector<json> roles;
  roles.push_back(clusterRole("cluster-admin",
                              json::array({rule({"*"}, {"*"}, {"*"}), urlRule({"*"}, {"*"})})));
  roles.push_back(aggregated(clusterRole("admin", adminRules()), "admin"));
  roles.push_back(aggregated(
      clusterRole("edit", editRules(), {{"rbac.authorization.k8s.io/aggregate-to-admin", "true"}}),
      "edit"));
  roles.push_back(aggregated(
      clusterRole("view", viewRules(), {{"rbac.authorization.k8s.io/aggregate-to-edit", "true"}}),
      "view"));
  roles.push_back(clusterRole(
      "system:basic-user",
      json::array({rule({"create"}, {"authorization.k8s.io"},
                        {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}),
                   rule({"create"}, {"authentication.k8s.io"}, {"selfsubjectreviews"})})));
  roles.push_back(clusterRole(
      "system:discovery",
      json::array(
          {urlRule({"get"}, {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                             "/openapi/*", "/readyz", "/version", "/version/"})})));
  roles.push_back(clusterRole(
      "system:public-info-viewer",
      json::array({urlRule({"get"}, {"/healthz", "/livez", "/readyz", "/version", "/version/"})})));
  roles.push_back(
      clusterRole("system:node-bootstrapper",
                  json::array({rule({"create", "get", "list", "watch"}, {"certificates.k8s.io"},
                                    {"certificatesigningrequests"})})));
  // Kubernetes' role for scrapers (bound to group system:monitoring).
  roles.push_back(clusterRole(
      "system:monitoring",
      json::array({urlRule(
          {"get"}, {"/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis",
                    "/readyz", "/readyz/*", "/monitoring/sd", "/monitoring/sd/*"})})));
  // minik8s' service discovery and custom metrics API (monitoring/) watch these and read the
  // selectors of workloads.
  roles.push_back(clusterRole(
      "system:minik8s-monitoring",
      json::array({rule({"get", "list", "watch"}, {""}, {"nodes", "pods", "services", "endpoints"}),
                   rule({"get"}, {"apps"},
                        {"deployments", "replicasets", "statefulsets", "daemonsets"})})));
  roles.push_back(clusterRole("system:kube-scheduler", schedulerRules()));
  // The controllers of minik8s run as one user; Kubernetes splits them per controller.
  roles.push_back(clusterRole("system:kube-controller-manager",
                              json::array({rule({"*"}, {"*"}, {"*"}), urlRule({"get"}, {"*"})})));
  roles.push_back(clusterRole("system:node", nodeRules()));
  return roles;
}

std::vector<json> bootstrapClusterRoleBindings() {
  return {
      binding("cluster-admin", "cluster-admin", json::array({subject("Group", kSystemMasters)})),
      binding("system:basic-user", "system:basic-user",
              json::array({subject("Group", kAuthenticated)})),
      binding("system:discovery", "system:discovery",
              json::array({subject("Group", kAuthenticated)})),
      binding("system:public-info-viewer", "system:public-info-viewer",
              json::array({subject("Group", kAuthenticated), subject("Group", kUnauthenticated)})),
      binding("system:node-bootstrapper", "system:node-bootstrapper",
              json::array({subject("Group", kBootstrappersGroup)})),
      binding("system:monitoring", "system:monitoring",
              json::array({subject("Group", "system:monitoring")})),
      binding("system:minik8s-monitoring", "system:minik8s-monitoring",
              json::array({subject("User", "system:minik8s-monitoring")})),
      binding("system:kube-scheduler", "system:kube-scheduler",
              json::array({subject("User", "system:kube-scheduler")})),
      binding("system:kube-controller-manager", "system:kube-controller-manager",
              json::array({subject("User", "system:kube-controller-manager")})),
  };
}

Status ensureBootstrapPolicy(Registry& registry) {
  const auto* roles = registry.scheme().byResource(kRbacGroup, "v1", "clusterroles");
  const auto* bindings = registry.scheme().byResource(kRbacGroup, "v1", "clusterrolebindings");
  if (!roles || !bindings) return Status::Internal("the scheme has no RBAC resources");
  for (const auto& role : bootstrapClusterRoles()) {
    Status s = reconcile(registry, *roles, role, {"rules", "aggregationRule"});
    if (!s.ok()) return s;
  }
  for (const auto& b : bootstrapClusterRoleBindings()) {
    Status s = reconcile(registry, *bindings, b, {"roleRef", "subjects"});
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace minik8s::apiserver::auth
